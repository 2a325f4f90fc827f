//===- DistParsing.h - Syntax helpers shared by dist attrs and ops -*- C++ -*-===//
//
// Private to lib/Dialect/Dist/IR.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_LIB_DIALECT_DIST_IR_DISTPARSING_H
#define MUON_LIB_DIALECT_DIST_IR_DISTPARSING_H

#include "mlir/IR/OpImplementation.h"

namespace muon {
namespace dist {
namespace detail {

/// A mesh axis name: a bare identifier (`dp`), or a string for other
/// spellings (`"data parallel"`).
mlir::ParseResult parseAxisName(mlir::AsmParser &parser,
                                mlir::StringAttr &name);

} // namespace detail
} // namespace dist
} // namespace muon

#endif // MUON_LIB_DIALECT_DIST_IR_DISTPARSING_H
