//===- AddressSpace.h - Memory spaces LLVM can take -------------*- C++ -*-===//
//
// The conversion to LLVM maps a memref's memory space to an address space
// only when the space is absent (0) or an integer. Passes that pass buffers
// unranked, or that must name the op whose memory space the conversion
// refused, ask the same question here.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_ADDRESSSPACE_H
#define MUON_SUPPORT_ADDRESSSPACE_H

#include "mlir/IR/BuiltinAttributes.h"

namespace muon {

/// Whether the conversion to LLVM maps memory space `space` (null for the
/// default) to an address space.
inline bool isLLVMAddressSpace(mlir::Attribute space) {
  return !space || mlir::isa<mlir::IntegerAttr>(space);
}

} // namespace muon

#endif // MUON_SUPPORT_ADDRESSSPACE_H
