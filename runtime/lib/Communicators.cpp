//===- Communicators.cpp - One communicator per mesh sub-group ------------===//
//
// A (mesh shape, axes) pair names the groups of ranks that differ only along
// `axes`. World rank = mesh rank; colour and key are the layout library's
// group numbering (layout::groupColour / groupIndex), the rule the compiler
// uses for roots and dist.coord.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Errors.h"
#include "State.h"
#include "Tensor.h"

#include "muon/Layout/Layout.h"

#include <map>

using namespace muon::rt;

namespace {
using Key = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
std::map<Key, int64_t> handles;
std::vector<Communicator> comms(1); // Handle 0 is invalid.

/// Mesh coordinates of a rank: the layout library's row-major rule, the
/// one the compiler uses.
std::vector<int64_t> coordsOf(int64_t rank, const std::vector<int64_t> &shape) {
  muon::layout::Mesh mesh;
  mesh.sizes = shape;
  mesh.axisNames.resize(shape.size());
  return mesh.coords(rank);
}

std::string listStr(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}
} // namespace

const Communicator &muon::rt::communicator(int64_t handle, const char *op) {
  if (handle <= 0 || handle >= static_cast<int64_t>(comms.size()))
    fatal(op, "", "unknown communicator handle " + std::to_string(handle));
  return comms[handle];
}

extern "C" int64_t _mlir_ciface_muon_rt_comm(muon_rt_i64_array *meshShape,
                                             muon_rt_i64_array *axesArg) {
  std::vector<int64_t> shape = valuesOf(meshShape), axes = valuesOf(axesArg);
  Key key{shape, axes};
  auto it = handles.find(key);
  if (it != handles.end())
    return it->second;

  std::string name = "mesh " + shapeStr(shape) + " axes [" + listStr(axes) + "]";
  Backend &b = backend();
  int64_t meshRanks = 1;
  bool overflow = false; // a product that wraps could equal the world size
  for (int64_t s : shape) {
    if (s <= 0)
      fatal("comm", name, "mesh axis of size " + std::to_string(s));
    overflow |= __builtin_mul_overflow(meshRanks, s, &meshRanks);
  }
  if (overflow)
    fatal("comm", name,
          "the mesh has at least 2^63 ranks but the job has " +
              std::to_string(b.worldSize()) + " (MPI world size)");
  if (meshRanks != b.worldSize())
    fatal("comm", name,
          "the mesh has " + std::to_string(meshRanks) +
              " ranks but the job has " + std::to_string(b.worldSize()) +
              " (MPI world size); launch with -np " + std::to_string(meshRanks));
  std::vector<bool> inGroup(shape.size(), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(shape.size()) || inGroup[a])
      fatal("comm", name, "bad or repeated axis index " + std::to_string(a));
    inGroup[a] = true;
  }
  std::vector<int64_t> c = coordsOf(b.worldRank(), shape);
  std::vector<int> axisList(axes.begin(), axes.end());
  int64_t color = muon::layout::groupColour(shape, axisList, c);
  int64_t index = muon::layout::groupIndex(shape, axisList, c);
  int64_t size = 1;
  for (int64_t a : axes)
    size *= shape[a];
  // MPI_Comm_split blocks with no timeout: a rank that never arrives (hung
  // or dead before its first collective) would hang its peers forever.
  // Meet in a non-blocking barrier first, waited on with the timeout.
  arriveAll("comm", name);
  std::string error;
  int id = b.split(color, index, error);
  if (id < 0)
    fatal("comm", name, error);

  // Name the member world ranks for messages.
  std::vector<int64_t> members;
  for (int64_t r = 0; r < meshRanks; ++r) {
    std::vector<int64_t> rc = coordsOf(r, shape);
    bool same = true;
    for (size_t i = 0; i < shape.size(); ++i)
      same &= inGroup[i] || rc[i] == c[i];
    if (same)
      members.push_back(r);
  }
  Communicator comm;
  comm.backendId = id;
  comm.size = size;
  comm.rank = index;
  comm.name = name + " (world ranks " + listStr(members) + ")";
  comms.push_back(comm);
  int64_t handle = static_cast<int64_t>(comms.size() - 1);
  handles[key] = handle;
  return handle;
}

extern "C" int64_t muon_rt_comm_rank(int64_t comm) {
  return communicator(comm, "comm_rank").rank;
}
