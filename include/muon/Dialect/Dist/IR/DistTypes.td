//===- DistTypes.td - dist dialect types -------------------*- tablegen -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTTYPES_TD
#define MUON_DIALECT_DIST_IR_DISTTYPES_TD

include "muon/Dialect/Dist/IR/DistAttrs.td"

class Dist_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Dist_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Dist_TensorType : Dist_Type<"DistTensor", "tensor"> {
  let summary = "A tensor distributed over a device mesh (global view)";
  let description = [{
    `!dist.tensor<16x8xf32, @mesh, [shard<0>, replicate]>`: the global shape
    and element type, then the layout (see `#dist.layout`). The local block a
    rank holds follows from the layout (docs/dist-dialect.md).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "LayoutAttr":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    ::mlir::FlatSymbolRefAttr getMesh() const { return getLayout().getMesh(); }
  }];
}

def Dist_TokenType : Dist_Type<"Token", "token"> {
  let summary = "Completion token of an async collective";
  let description = [{
    Returned by the async form of a collective; `dist.wait` consumes it
    exactly once. Until the wait, the collective's result must not be read.
  }];
}

#endif // MUON_DIALECT_DIST_IR_DISTTYPES_TD
