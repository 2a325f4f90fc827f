//===- MuonAttrs.td - muon dialect attributes --------------*- tablegen -*-===//

#ifndef MUON_DIALECT_MUON_IR_MUONATTRS_TD
#define MUON_DIALECT_MUON_IR_MUONATTRS_TD

include "muon/Dialect/Muon/IR/MuonBase.td"

def Muon_ParamAttr : Muon_Attr<"Param", "param"> {
  let summary = "Per-parameter facts the layout cannot say";
  let description = [{
    ```mlir
    #muon.param<"layers.0.attn.wq">
    #muon.param<"experts.3.w1", expert = ep[3]>
    #muon.param<"head", stage = pp[1]>
    #muon.param<"layers.0.attn.wqkv", split = 0 [1024, 256, 256]>
    ```
    A name (used in diagnostics and the report) and optionally where the
    parameter lives: `expert = ep[3]` (EP: the weights of expert group 3,
    present only on ranks whose coordinate on mesh axis `ep` is 3) or
    `stage = pp[1]` (PP: pipeline stage 1). Such a parameter is owned
    inside its group, and none of its data leaves the group.

    `split = d [s0, s1, ...]` orthogonalises the matrix in blocks: dim `d`
    (one of the two matrix dims) is cut into consecutive blocks of the given
    sizes, which must add up to the dim, and Newton-Schulz runs on each
    block on its own, each scaled by its own shape's `lr_adjust` factor
    (fused QKV or gate/up projections, or one block per attention head).
  }];
  let parameters = (ins "::mlir::StringAttr":$name,
                        "::muon::optim::LocalKind":$kind,
                        "::mlir::StringAttr":$axis,
                        "int64_t":$index,
                        "int64_t":$splitDim,
                        ArrayRefParameter<"int64_t">:$splitSizes);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    bool isLocal() const { return getKind() != LocalKind::Global; }
    bool isSplit() const { return getSplitDim() >= 0; }
  }];
}

#endif // MUON_DIALECT_MUON_IR_MUONATTRS_TD
