//===- DistInterfaces.td - dist dialect interfaces ---------*- tablegen -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTINTERFACES_TD
#define MUON_DIALECT_DIST_IR_DISTINTERFACES_TD

include "mlir/IR/OpBase.td"

def Dist_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::muon::dist";
  let description = [{
    An op every rank of a communicator (the ranks that differ only in the
    coordinates of `axes` of `mesh`) must issue, in the same order: the
    SPMD rule that dist-verify-spmd checks.
  }];
  let methods = [
    InterfaceMethod<"The mesh the op communicates on.",
                    "::mlir::FlatSymbolRefAttr", "getMeshAttr">,
    InterfaceMethod<"The mesh axes spanning the communicator.",
                    "::mlir::ArrayAttr", "getAxes">,
  ];
}

#endif // MUON_DIALECT_DIST_IR_DISTINTERFACES_TD
