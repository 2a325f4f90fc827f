//===- PrintLayouts.cpp - Per-rank local blocks of distributed tensors ----===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace muon {
namespace dist {
#define GEN_PASS_DEF_DISTPRINTLAYOUTS
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace muon

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {

void printList(llvm::raw_ostream &os, const std::vector<int64_t> &values,
               StringRef sep) {
  llvm::interleave(values, os, sep);
}

/// Prints one row per rank for `type` (converted once to `l` on `m`).
void printTable(llvm::raw_ostream &os, DistTensorType type,
                const layout::Layout &l, const layout::Mesh &m) {
  os << type << "\n";
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  layout::LocalShards shards(shape, l, m);
  for (int64_t r = 0; r < m.numRanks(); ++r) {
    std::vector<int64_t> coords = m.coords(r);
    layout::LocalShard s = shards(coords);
    os << "  rank " << r << " (";
    for (size_t a = 0; a < coords.size(); ++a)
      os << (a ? ", " : "") << m.axisNames[a] << "=" << coords[a];
    os << "): ";
    if (s.flattened) {
      os << "elements [" << s.offsets[0] << ", " << s.offsets[0] + s.shape[0]
         << ") of the flattened tensor";
    } else if (s.shape.empty()) {
      os << "local scalar (rank 0)";
    } else {
      os << "local ";
      printList(os, s.shape, "x");
      os << " at offset [";
      printList(os, s.offsets, ", ");
      os << "]";
    }
    os << (s.numElements() == 0 ? " (empty)\n" : "\n");
  }
}

struct DistPrintLayoutsPass
    : public muon::dist::impl::DistPrintLayoutsBase<DistPrintLayoutsPass> {
  void runOnOperation() override {
    // Collect every distinct !dist.tensor type with an op to resolve it from.
    llvm::SetVector<Type> types;
    llvm::DenseMap<Type, Operation *> anchors;
    auto note = [&](Type t, Operation *from) {
      if (isa<DistTensorType>(t) && types.insert(t))
        anchors[t] = from;
    };
    getOperation()->walk([&](Operation *op) {
      if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
        for (Type t : fn.getArgumentTypes())
          note(t, op);
        for (Type t : fn.getResultTypes())
          note(t, op);
      }
      for (Type t : op->getOperandTypes())
        note(t, op);
      for (Type t : op->getResultTypes())
        note(t, op);
    });
    bool failedAny = false;
    for (Type t : types) {
      auto type = cast<DistTensorType>(t);
      Operation *anchor = anchors[t];
      // Report bad layouts instead of printing nonsense for them.
      auto emitError = [&] {
        return anchor->emitError("cannot print layout of ") << type << ": ";
      };
      if (failed(verifyDistTensorType(type, anchor, emitError))) {
        failedAny = true;
        continue;
      }
      MeshOp mesh = lookupMesh(anchor, type.getMesh());
      if (failed(checkEnumerableMesh(anchor, mesh, "dist-print-layouts"))) {
        failedAny = true;
        continue;
      }
      FailureOr<layout::Layout> l =
          toLayout(type.getLayout(), mesh, anchor, emitError);
      printTable(llvm::outs(), type, *l, toLayoutMesh(mesh));
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
