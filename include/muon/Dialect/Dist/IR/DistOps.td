//===- DistOps.td - dist dialect operations ----------------*- tablegen -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTOPS_TD
#define MUON_DIALECT_DIST_IR_DISTOPS_TD

include "muon/Dialect/Dist/IR/DistTypes.td"
include "muon/Dialect/Dist/IR/DistInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Mesh and groups
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [Symbol]> {
  let summary = "Declare a device mesh";
  let description = [{
    ```mlir
    dist.mesh @mesh [dp = 4, tp = 2]
    dist.mesh @pod [x = 2, y = 2] devices = [0, 2, 1, 3]
    ```
    Named axes with positive sizes. Rank `r` has coordinates row-major over
    the axes in declared order. `devices` optionally maps each rank to a
    device id (default: the identity).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$shape,
                       OptionalAttr<DenseI64ArrayAttr>:$devices);
  let assemblyFormat = [{
    $sym_name custom<MeshAxes>($axis_names, $shape)
    (`devices` `=` $devices^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumRanks();
    /// Index of the axis called `name`, or -1.
    int getAxisIndex(::llvm::StringRef name);
  }];
}

def Dist_FlatGroupOp : Dist_Op<"flat_group",
    [Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Declare a group of tensors flattened into one sharded buffer";
  let description = [{
    ```mlir
    dist.flat_group @params on @mesh[dp] numel [16, 8, 6, 4]
    dist.flat_group @w on @mesh[dp] numel [128, 128] weights [1, 2, 1, 1]
    ```
    The members (given by element count, in buffer order) are flattened,
    concatenated and split by elements over one mesh axis, evenly or by
    weights (FSDP1-style flat parameter storage). A tensor joins as
    `storage = flat<@params, i>`.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$mesh,
                       StrAttr:$axis, DenseI64ArrayAttr:$numel,
                       OptionalAttr<DenseI64ArrayAttr>:$weights);
  let assemblyFormat = [{
    $sym_name `on` $mesh `[` custom<FlatGroupAxis>($axis) `]` `numel` $numel
    (`weights` $weights^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives on local tensors
//===----------------------------------------------------------------------===//

class Dist_CollectiveOp<string mnemonic, dag extraArgs, string extraFormat,
                        list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        Dist_CollectiveOpInterface])> {
  let arguments = !con((ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                            StrArrayAttr:$axes), extraArgs);
  let results = (outs AnyRankedTensor:$result,
                      Optional<Dist_TokenType>:$token);
  let assemblyFormat = "$input `on` $mesh `axes` custom<AxisList>($axes) "
      # extraFormat # " attr-dict `:` type($input) `->` type($result) "
      # "(`,` type($token)^)?";
  let hasVerifier = 1;
  code commonDescription = [{
    The op works on the local tensor of every rank, over the sub-group of
    ranks that differ only in the coordinates of `axes` (a communicator);
    ranks are numbered row-major over `axes` in the order given. Every rank
    of the mesh must execute it (the SPMD rule). With a `!dist.token`
    result the op is asynchronous: its result may be read only after a
    `dist.wait` on the token.
  }];
}

def Dist_AllGatherOp : Dist_CollectiveOp<"all_gather",
    (ins I64Attr:$gather_dim, UnitAttr:$reduced),
    "`dim` $gather_dim (`reduced` $reduced^)?"> {
  let summary = "Concatenate every rank's tensor along a dimension";
  let description = commonDescription # [{
    ```mlir
    %full = dist.all_gather %shard on @mesh axes [dp] dim 0
        : tensor<4x8xf32> -> tensor<16x8xf32>
    ```
    With static sizes, the result is `k` times the operand along `dim` for a
    group of `k` ranks; uneven shards use a dynamic operand size.

    With `reduced`, the result is `reduced` on the gathered axes rather
    than `replicate`: the same data on every rank, with the promise that its
    gradient is summed over those axes (in the backward pass, a
    reduce-scatter). It changes nothing at run time; `dist-propagate-reduced`
    and `dist-verify-reduced` read it (docs/reduced.md):
    ```mlir
    %w = dist.all_gather %shard on @mesh axes [dp] dim 0 reduced
        : tensor<4x8xf32> -> tensor<16x8xf32>
    ```
  }];
}

def Dist_ReduceScatterOp : Dist_CollectiveOp<"reduce_scatter",
    (ins I64Attr:$scatter_dim, Dist_ReduceKindAttr:$reduction,
         OptionalAttr<DenseI64ArrayAttr>:$sizes,
         OptionalAttr<DenseI64ArrayAttr>:$weights),
    "`reduce` custom<ReduceKind>($reduction) `dim` $scatter_dim "
    "(`sizes` $sizes^)? (`weights` $weights^)?"> {
  let summary = "Reduce over the group, leaving each rank one chunk";
  let description = commonDescription # [{
    ```mlir
    %s = dist.reduce_scatter %g on @mesh axes [dp] reduce sum dim 0
        : tensor<16x8xf32> -> tensor<4x8xf32>
    ```
    Chunks follow the chunk rule (ceil); a static result size requires an
    even split. As for `dist.scatter`, `sizes` gives every rank's chunk
    length explicitly and `weights` the weighted chunk rule (one entry per
    rank of the group); the step uses them to reduce a partial gradient
    straight into a flat or weighted storage shard:
    ```mlir
    %s = dist.reduce_scatter %g on @mesh axes [dp] reduce sum dim 0 weights [1, 3]
        : tensor<16x8xf32> -> tensor<?x8xf32>
    ```
  }];
}

def Dist_AllReduceOp : Dist_CollectiveOp<"all_reduce",
    (ins Dist_ReduceKindAttr:$reduction), "`reduce` custom<ReduceKind>($reduction)"> {
  let summary = "Reduce over the group; every rank gets the result";
  let description = commonDescription # [{
    ```mlir
    %r = dist.all_reduce %p on @mesh axes [tp] reduce sum
        : tensor<8x8xf32> -> tensor<8x8xf32>
    ```
  }];
}

def Dist_BroadcastOp : Dist_CollectiveOp<"broadcast",
    (ins I64Attr:$root), "`root` $root"> {
  let summary = "Copy the root's tensor to every rank of the group";
  let description = commonDescription # [{
    ```mlir
    %r = dist.broadcast %x on @mesh axes [dp] root 2
        : tensor<8x8xf32> -> tensor<8x8xf32>
    ```
    `root` is a rank index inside the group.
  }];
}

def Dist_GatherOp : Dist_CollectiveOp<"gather",
    (ins I64Attr:$gather_dim, I64Attr:$root,
         OptionalAttr<DenseI64ArrayAttr>:$sizes,
         OptionalAttr<DenseI64ArrayAttr>:$weights),
    "`dim` $gather_dim `root` $root (`sizes` $sizes^)? (`weights` $weights^)?"> {
  let summary = "Concatenate every rank's tensor on the root only";
  let description = commonDescription # [{
    ```mlir
    %full = dist.gather %shard on @mesh axes [dp] dim 0 root 1
        : tensor<4x8xf32> -> tensor<16x8xf32>
    ```
    Only the root's result is defined; other ranks must not read it (the
    lowering materialises the full tensor on the root only).

    By default the pieces follow the chunk rule. `sizes` gives every rank's
    piece length explicitly (flat storage: element ranges of one member) and
    `weights` the weighted chunk rule (weighted storage), one entry per rank
    of the group:
    ```mlir
    %f = dist.gather %piece on @mesh axes [dp] dim 0 root 0 sizes [9, 7, 0, 0]
        : tensor<?xf32> -> tensor<16xf32>
    ```
  }];
}

def Dist_ScatterOp : Dist_CollectiveOp<"scatter",
    (ins I64Attr:$scatter_dim, I64Attr:$root,
         OptionalAttr<DenseI64ArrayAttr>:$sizes,
         OptionalAttr<DenseI64ArrayAttr>:$weights),
    "`dim` $scatter_dim `root` $root (`sizes` $sizes^)? (`weights` $weights^)?"> {
  let summary = "Split the root's tensor and send one chunk to each rank";
  let description = commonDescription # [{
    ```mlir
    %shard = dist.scatter %full on @mesh axes [dp] dim 0 root 1
        : tensor<16x8xf32> -> tensor<4x8xf32>
    ```
    Only the root's operand is read. Chunks follow the chunk rule, or
    explicit `sizes`, or the weighted chunk rule with `weights`, exactly as
    for `dist.gather`.
  }];
}

def Dist_AllToAllOp : Dist_CollectiveOp<"all_to_all",
    (ins I64Attr:$split_dim, I64Attr:$concat_dim),
    "`split` $split_dim `concat` $concat_dim"> {
  let summary = "Split along one dimension, exchange, concatenate along another";
  let description = commonDescription # [{
    ```mlir
    %y = dist.all_to_all %x on @mesh axes [ep] split 0 concat 1
        : tensor<8x4xf32> -> tensor<2x16xf32>
    ```
  }];
}

class Dist_BatchOp<string mnemonic>
    : Dist_Op<mnemonic, [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                         Dist_CollectiveOpInterface,
                         AttrSizedResultSegments]> {
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       DenseI64ArrayAttr:$dims, DenseI64ArrayAttr:$roots,
                       OptionalAttr<TypedArrayAttrBase<DenseI64ArrayAttr,
                           "one i64 array per item">>:$sizes,
                       OptionalAttr<TypedArrayAttrBase<DenseI64ArrayAttr,
                           "one i64 array per item">>:$weights);
  let results = (outs Variadic<AnyRankedTensor>:$results,
                      Optional<Dist_TokenType>:$token);
  let assemblyFormat = "$inputs `on` $mesh `axes` custom<AxisList>($axes) "
      "`dims` $dims `roots` $roots (`sizes` $sizes^)? (`weights` $weights^)? "
      "attr-dict `:` `(` type($inputs) `)` `->` "
      "`(` type($results) `)` (`,` type($token)^)?";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Item `i`'s explicit `sizes` and `weights` (nullopt: none given, the
    /// chunk rule).
    std::pair<std::optional<::llvm::ArrayRef<int64_t>>,
              std::optional<::llvm::ArrayRef<int64_t>>>
    getItemSplit(size_t i);
  }];
  code batchDescription = [{
    Item `i` (operand `i`, result `i`, `dims[i]`, `roots[i]`) means what
    the rooted op with that operand, result, dim and root means, with the
    chunk rule along the dim (pieces of uneven length are dynamic sizes)
    unless the item gives `sizes` or `weights` (below).
    The items of one op travel in one exchange over the communicator
    (an all-to-all with per-member counts), so a batch of k items costs one
    latency instead of k. Every member issues the op with the same items in
    the same order (the SPMD rule); items may have different shapes, dims
    and roots. With a `!dist.token` result the op is asynchronous.

    `sizes` and `weights`, when present, hold one array per item: the
    item's `sizes` or `weights` as the rooted op takes them (an empty array:
    the chunk rule), e.g. `sizes [array<i64: 10, 2>, array<i64>]` for a
    flat-storage item and a chunk-rule one. An item takes one of the two.
  }];
}

def Dist_GatherBatchOp : Dist_BatchOp<"gather_batch"> {
  let summary = "Several rooted gathers over one communicator, in one exchange";
  let description = batchDescription # [{
    ```mlir
    %a, %b = dist.gather_batch %x, %y on @mesh axes [dp] dims [0, 1]
        roots [0, 1] : (tensor<4x8xf32>, tensor<8x2xf32>)
        -> (tensor<8x8xf32>, tensor<8x4xf32>)
    ```
    Result `i` is defined on member `roots[i]` only.
  }];
}

def Dist_ScatterBatchOp : Dist_BatchOp<"scatter_batch"> {
  let summary = "Several rooted scatters over one communicator, in one exchange";
  let description = batchDescription # [{
    ```mlir
    %a, %b = dist.scatter_batch %x, %y on @mesh axes [dp] dims [0, 1]
        roots [0, 1] : (tensor<8x8xf32>, tensor<8x4xf32>)
        -> (tensor<4x8xf32>, tensor<8x2xf32>)
    ```
    Operand `i` is read on member `roots[i]` only.
  }];
}

def Dist_BroadcastBatchOp : Dist_Op<"broadcast_batch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     Dist_CollectiveOpInterface, AttrSizedResultSegments]> {
  let summary = "Several broadcasts over one communicator, in one exchange";
  let description = [{
    ```mlir
    %a, %b = dist.broadcast_batch %x, %y on @mesh axes [rep] roots [0, 1]
        : (tensor<4x8xf32>, tensor<8x2xf32>) -> (tensor<4x8xf32>, tensor<8x2xf32>)
    ```
    Item `i` means `dist.broadcast` of operand `i` from member `roots[i]`:
    result `i` is the root's operand on every member (the operand is read
    on the root only). The items travel in one exchange (an all-to-all with
    per-member counts): one latency instead of one per item. Every member
    issues the op with the same items in the same order (the SPMD rule).
    With a `!dist.token` result the op is asynchronous.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       DenseI64ArrayAttr:$roots);
  let results = (outs Variadic<AnyRankedTensor>:$results,
                      Optional<Dist_TokenType>:$token);
  let assemblyFormat = "$inputs `on` $mesh `axes` custom<AxisList>($axes) "
      "`roots` $roots attr-dict `:` `(` type($inputs) `)` `->` "
      "`(` type($results) `)` (`,` type($token)^)?";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A broadcast item has no split: the root's whole operand.
    std::pair<std::optional<::llvm::ArrayRef<int64_t>>,
              std::optional<::llvm::ArrayRef<int64_t>>>
    getItemSplit(size_t) {
      return {std::nullopt, std::nullopt};
    }
  }];
}

def Dist_CompletedTokenOp : Dist_Op<"completed_token"> {
  let summary = "A token whose collective has already completed";
  let description = [{
    ```mlir
    %t = dist.completed_token
    ```
    Waiting on it does nothing. It stands for "no collective in flight" where
    control flow must produce a token on every path: a rank that skips an
    asynchronous collective under `scf.if` yields one from the other branch.
    Not pure on purpose: two of them must stay two values, since each token
    is waited on exactly once.
  }];
  let results = (outs Dist_TokenType:$token);
  let assemblyFormat = "attr-dict";
}

def Dist_WaitOp : Dist_Op<"wait"> {
  let summary = "Wait for async collectives";
  let description = [{
    ```mlir
    dist.wait %t0, %t1
    ```
    Consumes each token; a token may be waited on exactly once.
  }];
  let arguments = (ins Variadic<Dist_TokenType>:$tokens);
  let assemblyFormat = "$tokens attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Global view
//===----------------------------------------------------------------------===//

def Dist_RedistributeOp : Dist_Op<"redistribute",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Change the layout of a distributed tensor (global view)";
  let description = [{
    ```mlir
    %r = dist.redistribute %x
        : !dist.tensor<16x8xf32, @mesh, [shard<0>, replicate]>
       -> !dist.tensor<16x8xf32, @mesh, [replicate, replicate]>
    ```
    Same global value, same mesh, another layout: any layout of the tensor
    to any other. `dist-lower-redistribute` lowers it to the collectives
    and slices the two layouts require (docs/dist-dialect.md,
    "Redistribution").
  }];
  let arguments = (ins Dist_TensorType:$input);
  let results = (outs Dist_TensorType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Dist_ToLocalOp : Dist_Op<"to_local",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The executing rank's local block of a distributed tensor";
  let description = [{
    ```mlir
    %l = dist.to_local %x : !dist.tensor<10x8xf32, @m, [shard<0>]>
                         -> tensor<?x8xf32>
    ```
    A local dimension is static when every rank holds the same size there
    (and must then equal it), dynamic otherwise. Flat storage gives a 1-D
    local tensor.
  }];
  let arguments = (ins Dist_TensorType:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Dist_FromLocalOp : Dist_Op<"from_local",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Build a distributed tensor from every rank's local block";
  let description = [{
    ```mlir
    %x = dist.from_local %l : tensor<4x8xf32>
                           -> !dist.tensor<16x8xf32, @m, [shard<0>]>
    ```
    The inverse of `dist.to_local`, with the same shape rules.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs Dist_TensorType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

//===----------------------------------------------------------------------===//
// Rank queries
//===----------------------------------------------------------------------===//

def Dist_RankOp : Dist_Op<"rank",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Linear rank of the executing process in a mesh";
  let description = [{
    ```mlir
    %r = dist.rank @mesh
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh);
  let results = (outs Index:$result);
  let assemblyFormat = "$mesh attr-dict";
}

def Dist_CoordOp : Dist_Op<"coord",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Index of the executing rank inside a sub-group of the mesh";
  let description = [{
    ```mlir
    %c = dist.coord @mesh axes [tp]       // coordinate on axis tp
    %g = dist.coord @mesh axes [dp, tp]   // row-major over dp, tp
    ```
    The same numbering that collectives over `axes` use for `root`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Index:$result);
  let assemblyFormat = "$mesh `axes` custom<AxisList>($axes) attr-dict";
}

#endif // MUON_DIALECT_DIST_IR_DISTOPS_TD
