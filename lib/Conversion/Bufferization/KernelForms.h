//===- KernelForms.h - What outlined elementwise kernels share --*- C++ -*-===//
//
// The elementwise ops of a step become a few shared kernels: host functions
// (muon-outline-elementwise, target=cpu) or GPU kernels
// (muon-elementwise-to-gpu, target=cuda). Both take buffers with every
// size dynamic, and both share a kernel between ops that print the same
// there. Internal to lib/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_LIB_CONVERSION_KERNELFORMS_H
#define MUON_LIB_CONVERSION_KERNELFORMS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/DenseMap.h"

namespace muon {

/// The type a kernel takes for operand type `type`: a memref with every
/// size dynamic (strides and offset too unless the layout is the
/// identity), anything else as it is.
inline mlir::Type generalisedKernelType(mlir::Type type) {
  using namespace mlir;
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return type;
  SmallVector<int64_t> shape(memref.getRank(), ShapedType::kDynamic);
  if (memref.getLayout().isIdentity())
    return MemRefType::get(shape, memref.getElementType(), nullptr,
                           memref.getMemorySpace());
  SmallVector<int64_t> strides(memref.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                       strides);
  return MemRefType::get(shape, memref.getElementType(), layout,
                         memref.getMemorySpace());
}

/// Kernels of one kind (func.func or gpu.func) by a hash of their
/// signature and body; an equal candidate (same type, same region, locations
/// aside) is found instead of kept.
template <typename KernelOp> class KernelsByForm {
public:
  /// The hash of a candidate whose body holds `op` (attributes and types;
  /// its region is compared within a bucket).
  static llvm::hash_code hashOf(KernelOp fn, mlir::Operation *op) {
    return llvm::hash_combine(
        fn.getFunctionType(),
        mlir::OperationEquivalence::computeHash(
            op, mlir::OperationEquivalence::ignoreHashValue,
            mlir::OperationEquivalence::ignoreHashValue,
            mlir::OperationEquivalence::IgnoreLocations));
  }

  /// The kept kernel equal to `fn`, or null.
  KernelOp findEqual(KernelOp fn, llvm::hash_code hash) {
    for (KernelOp kernel : byHash[hash])
      if (kernel.getFunctionType() == fn.getFunctionType() &&
          mlir::OperationEquivalence::isRegionEquivalentTo(
              &kernel.getBody(), &fn.getBody(),
              mlir::OperationEquivalence::IgnoreLocations))
        return kernel;
    return {};
  }

  void keep(KernelOp fn, llvm::hash_code hash) { byHash[hash].push_back(fn); }

private:
  llvm::DenseMap<llvm::hash_code, llvm::SmallVector<KernelOp, 1>> byHash;
};

} // namespace muon

#endif // MUON_LIB_CONVERSION_KERNELFORMS_H
