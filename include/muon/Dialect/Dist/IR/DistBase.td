//===- DistBase.td - The dist dialect ----------------------*- tablegen -*-===//
//
// How tensors live on a device mesh.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_DIST_IR_DISTBASE_TD
#define MUON_DIALECT_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::muon::dist";
  let summary = "Distributed tensors on a device mesh";
  let description = [{
    The `dist` dialect models where tensors live on a device mesh:

    * `dist.mesh` declares a mesh: named axes with sizes.
    * A `!dist.tensor` carries a global shape, an element type and a layout:
      one compute placement per mesh axis (`shard<d>`, `replicate`,
      `partial<sum|avg|max|min>`, `reduced`), the nesting order of axes
      that shard the same dimension, and optional memory-only storage
      sharding (`dim`, `block`, `flat`, `whole`).
    * Collectives (`all_gather`, `reduce_scatter`, `all_reduce`,
      `broadcast`, `gather`, `scatter`, `all_to_all`) work on local tensors
      over named mesh axes; each has an async form returning a
      `!dist.token` that `dist.wait` consumes.
    * `dist.redistribute` changes a layout in the global view;
      `dist.to_local` / `dist.from_local` go between the global and local
      views; `dist.rank` / `dist.coord` query the executing rank.

    See docs/dist-dialect.md for the exact semantics.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();

    /// A mesh as the layouts see it: its axis names, shape and devices
    /// (uniqued attributes, so equal meshes give equal keys).
    using MeshKey = std::tuple<::mlir::Attribute, ::mlir::Attribute,
                               ::mlir::Attribute>;
    /// localTensorType's results, per (type, mesh): every verifier and pass
    /// asks for them again, and each costs a local shard per representative
    /// rank. Lives and dies with the context.
    ::llvm::DenseMap<std::pair<::mlir::Type, MeshKey>,
                     ::mlir::RankedTensorType> localTypes;
    /// The (type, mesh) pairs verifyDistTensorType accepted: each of the
    /// thousands of ops of an expanded step that carries a type would
    /// convert and check its layout again.
    ::llvm::DenseSet<std::pair<::mlir::Type, MeshKey>> verifiedTypes;
    /// A flat group's member sizes as the layouts hold them, per `numel`
    /// attribute: the layouts of all of a group's members share one list.
    ::llvm::DenseMap<::mlir::Attribute,
                     std::shared_ptr<const std::vector<int64_t>>>
        flatGroupNumel;
    ::llvm::sys::SmartMutex<true> localTypesMutex;
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dist_PlacementKind : I32EnumAttr<"PlacementKind", "compute placement", [
  I32EnumAttrCase<"Shard", 0, "shard">,
  I32EnumAttrCase<"Replicate", 1, "replicate">,
  I32EnumAttrCase<"Partial", 2, "partial">,
  I32EnumAttrCase<"Reduced", 3, "reduced">]> {
  let cppNamespace = "::muon::dist";
  let genSpecializedAttr = 0;
}

def Dist_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Avg", 1, "avg">,
  I32EnumAttrCase<"Max", 2, "max">,
  I32EnumAttrCase<"Min", 3, "min">]> {
  let cppNamespace = "::muon::dist";
  let genSpecializedAttr = 0;
}

// Standalone: #dist.reduce<sum>; inside ops written bare (`reduce sum`).
def Dist_ReduceKindAttr : EnumAttr<Dist_Dialect, Dist_ReduceKind, "reduce"> {
  let assemblyFormat = "`<` $value `>`";
}

def Dist_StorageKind : I32EnumAttr<"StorageKind", "storage sharding kind", [
  I32EnumAttrCase<"Dim", 0, "dim">,
  I32EnumAttrCase<"Block", 1, "block">,
  I32EnumAttrCase<"Flat", 2, "flat">,
  I32EnumAttrCase<"Whole", 3, "whole">]> {
  let cppNamespace = "::muon::dist";
  let genSpecializedAttr = 0;
}

#endif // MUON_DIALECT_DIST_IR_DISTBASE_TD
