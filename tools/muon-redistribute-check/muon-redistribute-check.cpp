//===- muon-redistribute-check.cpp - Redistributions checked on data ------===//
//
//   mpirun -np N muon-redistribute-check FILE.mlir OUTDIR
//
// FILE's function @check takes k distributed tensors and returns k, each
// result a dist.redistribute of its argument (any layouts on one mesh of N
// ranks). Every rank compiles the module with the muon-to-llvm pipeline,
// feeds argument i its local shard of deterministic data and writes its
// results to OUTDIR. Rank 0 then rebuilds each result's global tensor from
// every rank's blocks (reducing over the result's partial axes, in mesh-axis
// order, with their reductions) and compares it with the argument's global
// tensor (the sum, or mean, of the argument's partial terms), checks that
// replicas agree bitwise and that the blocks cover the tensor. One line per
// pair, then "PASS: k pairs, N ranks" or "FAIL: ..." (exit status 1).
//
// Argument partials must be sum or avg (the generator's terms add up); a
// result may be partial of any kind.
//
//===----------------------------------------------------------------------===//

#include "HostTensors.h"

#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Execution/CompiledEntry.h"
#include "muon/InitAll.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

using namespace mlir;
using namespace muon;

namespace {
struct Pair {
  std::string text;
  std::vector<int64_t> shape;
  layout::Layout from, to;
};

/// Small integers: sums of terms are exact in f32.
std::vector<float> term(int64_t pair, int64_t k, int64_t n) {
  std::vector<float> v = run::generate(7, run::streamId(3, pair, 0, k), n);
  for (float &x : v)
    x = std::floor(x * 16.0f);
  return v;
}

/// The global tensor of an argument: its terms summed, times the scale.
std::vector<float> globalOf(int64_t pair, const Pair &p,
                            const layout::Mesh &mesh) {
  int64_t n = run::numElements(p.shape);
  layout::PartialTerms t = layout::partialTerms(p.from, mesh, mesh.coords(0));
  std::vector<float> g(n, 0.0f);
  for (int64_t k = 0; k < t.count; ++k) {
    std::vector<float> v = term(pair, k, n);
    for (int64_t e = 0; e < n; ++e)
      g[e] += v[e];
  }
  for (float &x : g)
    x = static_cast<float>(x * t.scale);
  return g;
}

/// Rebuilds the global tensor of a result from every rank's block: per
/// element, the values of the ranks that hold it on coordinate 0 of every
/// replicated axis, indexed by their partial coordinates, reduced axis by
/// axis in mesh order. Sets `error` on an uncovered element or replicas
/// that differ.
std::vector<float> rebuild(const Pair &p, const layout::Mesh &mesh,
                           const std::vector<std::vector<float>> &blocks,
                           std::string &error) {
  int64_t n = run::numElements(p.shape);
  std::vector<int> partial;
  int64_t terms = 1;
  for (int a = 0; a < mesh.numAxes(); ++a)
    if (p.to.placements[a].kind == layout::PlacementKind::Partial) {
      partial.push_back(a);
      terms *= mesh.sizes[a];
    }
  std::vector<float> grid(terms * n, NAN);
  std::vector<bool> seen(terms * n, false);
  for (int64_t r = 0; r < mesh.numRanks(); ++r) {
    run::Shard s = run::shardOf(p.shape, p.to, mesh, r);
    std::vector<float> full(n, NAN);
    run::insert(full, p.shape, s, blocks[r]);
    int64_t t = layout::groupIndex(mesh.sizes, partial, mesh.coords(r));
    for (int64_t e = 0; e < n; ++e) {
      if (std::isnan(full[e]))
        continue;
      float &slot = grid[t * n + e];
      if (seen[t * n + e] && slot != full[e]) {
        error = "rank " + std::to_string(r) + " holds element " +
                std::to_string(e) + " as " + std::to_string(full[e]) +
                " where a replica holds " + std::to_string(slot);
        return {};
      }
      seen[t * n + e] = true;
      slot = full[e];
    }
  }
  for (int64_t i = 0; i < terms * n; ++i)
    if (!seen[i]) {
      error = "element " + std::to_string(i % n) + " of term " +
              std::to_string(i / n) + " is held by no rank";
      return {};
    }
  // Reduce the term grid over the partial axes, last first (row-major).
  int64_t outer = terms;
  for (size_t j = partial.size(); j-- > 0;) {
    int64_t size = mesh.sizes[partial[j]];
    outer /= size;
    layout::ReduceKind kind = p.to.placements[partial[j]].reduce;
    std::vector<float> next(outer * n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < n; ++e) {
        float acc = grid[(o * size) * n + e];
        for (int64_t c = 1; c < size; ++c) {
          float v = grid[(o * size + c) * n + e];
          acc = kind == layout::ReduceKind::Max   ? std::max(acc, v)
                : kind == layout::ReduceKind::Min ? std::min(acc, v)
                                                  : acc + v;
        }
        if (kind == layout::ReduceKind::Avg)
          acc /= static_cast<float>(size);
        next[o * n + e] = acc;
      }
    grid = std::move(next);
  }
  return grid;
}
} // namespace

int main(int argc, char **argv) {
  muon_rt_init(&argc, &argv);
  int64_t rank = muon_rt_world_rank(), size = muon_rt_world_size();
  auto fail = [&](const std::string &why) {
    std::fprintf(stderr, "muon-redistribute-check (rank %lld): %s\n",
                 static_cast<long long>(rank), why.c_str());
    muon_rt_finalize();
    return 2;
  };
  if (argc != 3)
    return fail("usage: muon-redistribute-check FILE.mlir OUTDIR");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerToolDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sources;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(argv[1], sources, &context);
  if (!module)
    return fail("cannot parse " + std::string(argv[1]));
  auto check = module->lookupSymbol<func::FuncOp>("check");
  if (!check)
    return fail("no func.func @check");

  // The pairs, read before lowering.
  std::vector<Pair> pairs;
  layout::Mesh mesh;
  FunctionType fnType = check.getFunctionType();
  if (fnType.getNumInputs() != fnType.getNumResults())
    return fail("@check must return one result per argument");
  for (unsigned i = 0; i < fnType.getNumInputs(); ++i) {
    auto a = dyn_cast<dist::DistTensorType>(fnType.getInput(i));
    auto b = dyn_cast<dist::DistTensorType>(fnType.getResult(i));
    if (!a || !b)
      return fail("argument and result " + std::to_string(i) +
                  " must be distributed tensors");
    dist::MeshOp m = dist::lookupMesh(check, a.getMesh());
    if (!m)
      return fail("unknown mesh");
    mesh = dist::toLayoutMesh(m);
    auto emit = [&] { return check.emitError(); };
    FailureOr<layout::Layout> from =
        dist::toLayout(a.getLayout(), m, check, emit);
    FailureOr<layout::Layout> to =
        dist::toLayout(b.getLayout(), m, check, emit);
    if (failed(from) || failed(to))
      return fail("bad layout in pair " + std::to_string(i));
    // The argument's value is built as a sum of its terms: a max or min
    // partial would be checked against the wrong value.
    for (const layout::Placement &pl : from->placements)
      if (pl.kind == layout::PlacementKind::Partial &&
          pl.reduce != layout::ReduceKind::Sum &&
          pl.reduce != layout::ReduceKind::Avg)
        return fail("argument " + std::to_string(i) +
                    " is partial<max> or partial<min>; argument partials "
                    "must be sum or avg (results may be any kind)");
    Pair p;
    llvm::raw_string_ostream os(p.text);
    os << a.getLayout() << " -> " << b.getLayout();
    p.shape.assign(a.getShape().begin(), a.getShape().end());
    p.from = *from;
    p.to = *to;
    pairs.push_back(std::move(p));
  }
  if (mesh.numRanks() != size)
    return fail("the mesh has " + std::to_string(mesh.numRanks()) +
                " ranks; run with that many");

  PassManager pm(&context);
  MuonToLLVMOptions options;
  options.assignOwners = false;
  buildMuonToLLVMPipeline(pm, options);
  if (failed(pm.run(*module)))
    return fail("lowering failed");
  std::string error;
  std::unique_ptr<exec::CompiledEntry> entry =
      exec::CompiledEntry::create(*module, "check", 0, error);
  if (!entry)
    return fail("JIT: " + error);

  run::Tensors args, results;
  run::Shapes argShapes, resultShapes;
  for (auto [i, p] : llvm::enumerate(pairs)) {
    run::Shard in = run::shardOf(p.shape, p.from, mesh, rank);
    layout::PartialTerms t =
        layout::partialTerms(p.from, mesh, mesh.coords(rank));
    args.push_back(
        run::extract(term(i, t.index, run::numElements(p.shape)), p.shape, in));
    argShapes.push_back(in.local.shape);
    run::Shard out = run::shardOf(p.shape, p.to, mesh, rank);
    resultShapes.push_back(out.local.shape);
    results.emplace_back(run::numElements(out.local.shape));
  }
  error = entry->invoke(args, argShapes, results, resultShapes);
  if (!error.empty())
    return fail("the call failed: " + error);
  {
    std::ofstream out(std::string(argv[2]) + "/rank" + std::to_string(rank),
                      std::ios::binary);
    for (const std::vector<float> &r : results)
      out.write(reinterpret_cast<const char *>(r.data()),
                static_cast<std::streamsize>(r.size() * sizeof(float)));
  }
  muon_rt_barrier();
  int status = 0;
  if (rank == 0) {
    // Every rank's blocks, pair by pair.
    std::vector<std::vector<std::vector<float>>> blocks(
        pairs.size(), std::vector<std::vector<float>>(size));
    for (int64_t r = 0; r < size; ++r) {
      std::ifstream in(std::string(argv[2]) + "/rank" + std::to_string(r),
                       std::ios::binary);
      for (auto [i, p] : llvm::enumerate(pairs)) {
        run::Shard s = run::shardOf(p.shape, p.to, mesh, r);
        std::vector<float> &v = blocks[i][r];
        v.resize(run::numElements(s.local.shape));
        in.read(reinterpret_cast<char *>(v.data()),
                static_cast<std::streamsize>(v.size() * sizeof(float)));
      }
    }
    int64_t bad = 0;
    for (auto [i, p] : llvm::enumerate(pairs)) {
      std::string why;
      std::vector<float> got = rebuild(p, mesh, blocks[i], why);
      std::vector<float> want = globalOf(i, p, mesh);
      double worst = 0;
      for (size_t e = 0; why.empty() && e < want.size(); ++e) {
        double err = std::fabs(static_cast<double>(got[e]) - want[e]);
        worst = std::max(worst, err);
        if (!(err <= 1e-5 + 1e-6 * std::fabs(want[e])))
          why = "element " + std::to_string(e) + " is " +
                std::to_string(got[e]) + ", expected " +
                std::to_string(want[e]);
      }
      std::printf("pair %zu: %s: %s\n", i, p.text.c_str(),
                  why.empty() ? "ok" : ("MISMATCH: " + why).c_str());
      bad += !why.empty();
    }
    if (bad)
      std::printf("FAIL: %lld of %zu pairs, %lld ranks\n",
                  static_cast<long long>(bad), pairs.size(),
                  static_cast<long long>(size));
    else
      std::printf("PASS: %zu pairs, %lld ranks\n", pairs.size(),
                  static_cast<long long>(size));
    std::fflush(stdout);
    status = bad ? 1 : 0;
  }
  muon_rt_finalize();
  return status;
}
