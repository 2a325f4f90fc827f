//===- DistDialect.cpp - The dist dialect ---------------------------------===//

#include "muon/Dialect/Dist/IR/DistDialect.h"
#include "muon/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace muon::dist;

#include "muon/Dialect/Dist/IR/DistDialect.cpp.inc"
#include "muon/Dialect/Dist/IR/DistEnums.cpp.inc"
#include "muon/Dialect/Dist/IR/DistInterfaces.cpp.inc"

namespace {
/// Short names for distributed tensor types in printed IR: a step over
/// hundreds of parameters prints each distinct type once, at the top
/// (`!t4096x4096_s0s1 = !dist.tensor<4096x4096xf32, @m, [shard<0>,
/// shard<1>]>`), and refers to it by name. The name gives the shape and one
/// code per mesh axis (sD shard<D>, r replicate, p partial, d reduced);
/// types the name does not tell apart (storage, order, element type, mesh,
/// a partial's reduction) get a numeric suffix from the printer.
struct DistOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Type type, raw_ostream &os) const override {
    auto t = dyn_cast<DistTensorType>(type);
    if (!t)
      return AliasResult::NoAlias;
    os << "t";
    for (auto [i, d] : llvm::enumerate(t.getShape()))
      os << (i ? "x" : "") << d;
    os << "_";
    for (PlacementAttr p : t.getLayout().getPlacements()) {
      switch (p.getKind()) {
      case PlacementKind::Shard:
        os << "s" << p.getDim();
        break;
      case PlacementKind::Replicate:
        os << "r";
        break;
      case PlacementKind::Partial:
        os << "p";
        break;
      case PlacementKind::Reduced:
        os << "d";
        break;
      }
    }
    return AliasResult::OverridableAlias;
  }
};
} // namespace

void DistDialect::initialize() {
  addInterfaces<DistOpAsmInterface>();
  addOperations<
#define GET_OP_LIST
#include "muon/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}
