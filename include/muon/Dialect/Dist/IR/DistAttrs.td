//===- DistAttrs.td - dist dialect attributes --------------*- tablegen -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTATTRS_TD
#define MUON_DIALECT_DIST_IR_DISTATTRS_TD

include "muon/Dialect/Dist/IR/DistBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Dist_PlacementAttr : Dist_Attr<"Placement", "placement"> {
  let summary = "Compute placement of a tensor on one mesh axis";
  let description = [{
    One of `shard<d>` (split along tensor dimension `d`), `replicate` (every
    rank holds the same data), `partial<sum|avg|max|min>` (every rank holds
    a partial value; the tensor is their reduction) or `reduced` (replicate
    at runtime, but the gradient must be reduced: the cotangent of
    `partial`). Written bare inside a layout; standalone as
    `#dist.placement<shard<0>>`.
  }];
  let parameters = (ins "PlacementKind":$kind, "int64_t":$dim,
                        "ReduceKind":$reduce);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    static PlacementAttr getShard(::mlir::MLIRContext *ctx, int64_t dim);
    static PlacementAttr getReplicate(::mlir::MLIRContext *ctx);
    static PlacementAttr getPartial(::mlir::MLIRContext *ctx, ReduceKind r);
    static PlacementAttr getReduced(::mlir::MLIRContext *ctx);
    bool isShard() const { return getKind() == PlacementKind::Shard; }
    bool isReplicated() const {
      return getKind() == PlacementKind::Replicate ||
             getKind() == PlacementKind::Reduced;
    }
    /// Parses/prints the bare form used inside layouts (`shard<0>`).
    static PlacementAttr parseBare(::mlir::AsmParser &parser);
    void printBare(::mlir::AsmPrinter &printer) const;
  }];
}

def Dist_ShardOrderAttr : Dist_Attr<"ShardOrder", "shard_order"> {
  let summary = "Nesting of the mesh axes that shard one tensor dimension";
  let description = [{
    `d = [outer, ..., inner]`: the mesh axes whose placement is `shard<d>`,
    outer split first. Without it, mesh-axis order applies (DTensor).
  }];
  let parameters = (ins "int64_t":$dim,
                        ArrayRefParameter<"::mlir::StringAttr">:$axes);
  let assemblyFormat = "`<` $dim `=` `[` $axes `]` `>`";
}

def Dist_StorageAttr : Dist_Attr<"Storage", "storage"> {
  let summary = "Memory-only (storage) sharding";
  let description = [{
    Storage sharding splits the memory of data that compute placements
    replicate: each rank stores a part, and the full tensor is gathered
    when needed. It applies to the compute-local block, on mesh
    axes whose compute placement is `replicate` or `reduced`:

    * `dim<0 on dp>`: split dimension 0 over axis `dp` (FSDP2); add
      `weights [1, 2, 1]` for a weighted split.
    * `block<0 on r, 1 on c>`: 2-D blocks over two axes (outer first).
    * `flat<@group, i>`: member `i` of a `dist.flat_group`, whose members are
      flattened, concatenated and split by elements (FSDP1).
    * `whole<on dp owner 2>`: the whole tensor is stored on coordinate 2 of
      axis `dp`, nothing on the others (the Muon case).
  }];
  let parameters = (ins
    "StorageKind":$kind,
    ArrayRefParameter<"int64_t">:$dims,
    ArrayRefParameter<"::mlir::StringAttr">:$axes,
    // One DenseI64ArrayAttr per split; an empty one means even.
    "::mlir::ArrayAttr":$weights,
    OptionalParameter<"::mlir::FlatSymbolRefAttr">:$group,
    "int64_t":$member,
    "int64_t":$owner);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Parses/prints the bare form used inside layouts (`dim<0 on dp>`).
    static StorageAttr parseBare(::mlir::AsmParser &parser);
    void printBare(::mlir::AsmPrinter &printer) const;
  }];
}

def Dist_LayoutAttr : Dist_Attr<"Layout", "layout"> {
  let summary = "Where a tensor lives on a mesh";
  let description = [{
    `#dist.layout<@mesh, [p0, p1, ...], order = {d = [a, b]}, storage = s>`:
    one placement per mesh axis, the optional nesting order of axes that
    shard the same dimension, and optional storage sharding.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"PlacementAttr">:$placements,
    ArrayRefParameter<"ShardOrderAttr">:$order,
    OptionalParameter<"StorageAttr">:$storage);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The body without `<` `>`, shared with !dist.tensor.
    static ::mlir::FailureOr<LayoutAttr> parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

#endif // MUON_DIALECT_DIST_IR_DISTATTRS_TD
