//===- DistinctResults.cpp - One buffer per returned result ---------------===//
//
// A step may return one value twice (a parameter whose update is also its
// momentum after folding, or a mutated test); after bufferization that is
// one buffer at two result positions. buffer-results-to-out-params with
// hoisted allocations (results written straight into out-buffers) crashes
// on such a return in MLIR 22, and two out-buffers cannot both be one
// allocation anyway. Each repeat gets a copy of its own.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

namespace muon {
#define GEN_PASS_DEF_MUONDISTINCTRESULTS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct MuonDistinctResults
    : muon::impl::MuonDistinctResultsBase<MuonDistinctResults> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      DenseSet<Value> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<MemRefType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        OpBuilder b(ret);
        SmallVector<Value> dims;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            dims.push_back(memref::DimOp::create(b, ret.getLoc(), v, d));
        Value copy = memref::AllocOp::create(b, ret.getLoc(), type, dims);
        memref::CopyOp::create(b, ret.getLoc(), v, copy);
        operand.set(copy);
      }
    });
  }
};

} // namespace
