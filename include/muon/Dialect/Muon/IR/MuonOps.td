//===- MuonOps.td - muon dialect operations ----------------*- tablegen -*-===//

#ifndef MUON_DIALECT_MUON_IR_MUONOPS_TD
#define MUON_DIALECT_MUON_IR_MUONOPS_TD

include "muon/Dialect/Muon/IR/MuonAttrs.td"
include "muon/Dialect/Dist/IR/DistTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Muon_ParamArrayAttr : TypedArrayAttrBase<Muon_ParamAttr,
                                             "array of #muon.param">;

// A step operand: a distributed tensor, or (in a global-view step, the form
// a program annotated with MLIR's `shard` dialect writes before
// convert-shard-to-dist gives it layouts) a statically shaped tensor.
def Muon_StepTensor : AnyTypeOf<[Dist_TensorType, AnyStaticShapeTensor],
    "!dist.tensor, or statically shaped tensor (global view)">;

def Muon_StepOp : Muon_Op<"step", [
    AttrSizedOperandSegments, SameVariadicResultSize,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "One distributed Muon optimizer step";
  let description = [{
    ```mlir
    %new:4 = muon.step params(%w0, %w1 : !fsdp, !tp)
                       grads(%g0, %g1 : !fsdp, !tp)
                       momenta(%m0, %m1 : !fsdp, !tp)
                       {lr = 0.02 : f64, weight_decay = 0.01 : f64}
    // %new#0, %new#1: new parameters; %new#2, %new#3: new momenta
    ```
    For each parameter P with gradient G and momentum M (all the same
    global shape, P and M the same layout; G the same layout, or partial
    on axes where P is replicated: then the step reduces it first):
    ```
    lerp(x, y, w) = x + w * (y - x)        (torch.lerp); beta = momentum
    momentum_form lerp (default):
      M' <- lerp(M, G, 1 - beta)           = M + (1 - beta) * (G - M)
      U  <- nesterov ? lerp(G, M', beta)   = G + beta * (M' - G)
                     : M'
    momentum_form sum (torch.optim.SGD's convention):
      M' <- beta * M + G
      U  <- nesterov ? G + beta * M'
                     : M'
    O  <- NS(U) * scale(m, n)              original: sqrt(max(1, m/n))
                                           match_rms_adamw: 0.2 * sqrt(max(m, n))
                                           spectral_unclamped: sqrt(m/n)
    P' <- P * (1 - lr * weight_decay) - lr * O
    ```
    M' is the new momentum; the Nesterov update reads M', not M.

    `lr` and `weight_decay` are attributes (compile-time constants) or f64
    operands, `lr(%lr)` / `weight_decay(%wd)` after `momenta(...)`, whose
    value is read when the step runs (learning-rate schedules without
    recompiling; an entry takes them as f64 arguments). A step has lr one
    way or the other, never both.
    NS is `muon.newton_schulz` with `ns_steps`, `ns_coeffs` (one (a,b,c)
    triple, or one per iteration), `eps` and `ns_dtype` (f32 or bf16);
    m, n are the last two dims; leading dims are a batch (expert stacks).

    Attributes: `strategy` (round_robin, balanced, explicit) picks owners in
    `muon-assign-owners`; `assignment` is the explicit rank-keyed form
    (entry r lists the parameter indices rank r owns);
    `owners` is the per-parameter owner rank the pass writes (or the user
    gives); `param_info` names parameters and marks EP/PP-local ones;
    `prefetch_count` and `async_gpu_parallelism` steer the schedule.

    Results: the new parameters, then the new momenta (same types).

    **Global view.** Every operand may instead be a plain statically shaped
    tensor: the step of a program whose tensors carry MLIR `shard`
    annotations. Such a step has no layouts yet; `convert-shard-to-dist`
    gives each operand the `!dist.tensor` type of its annotation. Passes
    that plan a step (owners, expansion, report, lowering) refuse a
    global-view step. A step is one or the other: mixing plain and
    distributed operands is an error.
  }];
  let arguments = (ins
    Variadic<Muon_StepTensor>:$params,
    Variadic<Muon_StepTensor>:$grads,
    Variadic<Muon_StepTensor>:$momenta,
    Optional<F64>:$lr_value,
    Optional<F64>:$weight_decay_value,
    OptionalAttr<F64Attr>:$lr,
    DefaultValuedAttr<F64Attr, "0.95">:$momentum,
    DefaultValuedAttr<BoolAttr, "true">:$nesterov,
    DefaultValuedAttr<I64Attr, "5">:$ns_steps,
    OptionalAttr<DenseF64ArrayAttr>:$ns_coeffs,
    DefaultValuedAttr<F64Attr, "1.0e-7">:$eps,
    OptionalAttr<F64Attr>:$weight_decay,
    DefaultValuedAttr<Muon_LrAdjustAttr, "LrAdjust::Original">:$lr_adjust,
    DefaultValuedAttr<Muon_MomentumFormAttr,
                      "MomentumForm::Lerp">:$momentum_form,
    OptionalAttr<TypeAttr>:$ns_dtype,
    DefaultValuedAttr<Muon_StrategyAttr, "Strategy::RoundRobin">:$strategy,
    DefaultValuedAttr<I64Attr, "1">:$prefetch_count,
    DefaultValuedAttr<BoolAttr, "true">:$async_gpu_parallelism,
    OptionalAttr<Muon_ParamArrayAttr>:$param_info,
    OptionalAttr<TypedArrayAttrBase<DenseI64ArrayAttr,
                 "rank-keyed owner lists">>:$assignment,
    OptionalAttr<DenseI64ArrayAttr>:$owners);
  let results = (outs Variadic<Muon_StepTensor>:$new_params,
                      Variadic<Muon_StepTensor>:$new_momenta);
  let assemblyFormat = [{
    `params` `(` $params `:` qualified(type($params)) `)`
    `grads` `(` $grads `:` qualified(type($grads)) `)`
    `momenta` `(` $momenta `:` qualified(type($momenta)) `)`
    (`lr` `(` $lr_value^ `)`)?
    (`weight_decay` `(` $weight_decay_value^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumParams() { return getParams().size(); }
    /// True when the operands are plain tensors (a step of a program
    /// annotated with `shard`, before convert-shard-to-dist).
    bool isGlobalView();
    /// The weight_decay attribute, 0 when absent (not meaningful when the
    /// step reads weight_decay as an operand).
    double getWeightDecayConstant() {
      std::optional<::llvm::APFloat> wd = getWeightDecay();
      return wd ? wd->convertToDouble() : 0.0;
    }
    /// The (a, b, c) coefficients of NS iteration `i` (default: the
    /// Muon quintic (3.4445, -4.7750, 2.0315)).
    std::array<double, 3> getCoeffsOf(int64_t i);
    /// The coefficients as given: one triple, or one per iteration.
    ::llvm::SmallVector<double> getCoeffList();
    /// The type NS computes in (default f32).
    ::mlir::Type getNsElementType();
    /// Per-parameter info (a default one when absent).
    ParamAttr getParamInfoOf(int64_t i);
    /// "#i ('name')" or "#i", for diagnostics.
    std::string describeParam(int64_t i);
    /// Refuses one value as two operands (after every other check).
    ::mlir::LogicalResult verifyDistinctOperands();
  }];
}

def Muon_NewtonSchulzOp : Muon_Op<"newton_schulz",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Orthogonalise a matrix (or a batch of matrices)";
  let description = [{
    ```mlir
    %o = muon.newton_schulz %u steps 5
           coeffs [3.4445, -4.775, 2.0315, ...] eps 1.0e-7 in f32
           : tensor<64x32xf32>
    ```
    The input is a full matrix m x n (or a batch: leading dims index
    independent matrices, e.g. a stack of experts). Per matrix:
    ```
    X <- U in the compute type; if m > n: X <- X^T
    X <- X / (||X||_F + eps)
    for i in 0..steps: A <- X X^T; B <- b_i*A + c_i*A*A; X <- a_i*X + B*X
    if transposed: X <- X^T; result in the input's element type
    ```
    `coeffs` holds one (a, b, c) triple for every iteration, or 3 values per
    iteration (e.g. Polar Express).
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$steps,
                       DenseF64ArrayAttr:$coeffs, F64Attr:$eps,
                       TypeAttr:$compute_type);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `steps` $steps `coeffs` $coeffs `eps` $eps `in` $compute_type
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Muon_MomentumUpdateOp : Muon_Op<"momentum_update",
    [Pure, AllTypesMatch<["momentum", "grad", "new_momentum", "update"]>]> {
  let summary = "Update a momentum buffer; give the Newton-Schulz input";
  let description = [{
    ```mlir
    %m2, %u = muon.momentum_update %m, %g beta 0.95 nesterov
                : tensor<?x64xf32>
    ```
    Elementwise on any shard, with `lerp(x, y, w) = x + w*(y - x)`:
    - without `sum` (lerp form):
      `M' = lerp(M, G, 1-beta) = M + (1-beta)*(G - M)`;
      `U = nesterov ? lerp(G, M', beta) = G + beta*(M' - G) : M'`;
    - with `sum` (torch.optim.SGD's form): `M' = beta*M + G`;
      `U = nesterov ? G + beta*M' : M'`.
  }];
  let arguments = (ins AnyRankedTensor:$momentum, AnyRankedTensor:$grad,
                       F64Attr:$beta, UnitAttr:$sum, UnitAttr:$nesterov);
  let results = (outs AnyRankedTensor:$new_momentum,
                      AnyRankedTensor:$update);
  let assemblyFormat = [{
    $momentum `,` $grad `beta` $beta (`sum` $sum^)? (`nesterov` $nesterov^)?
    attr-dict `:` type($momentum)
  }];
}

def Muon_ApplyUpdateOp : Muon_Op<"apply_update",
    [Pure, AttrSizedOperandSegments,
     AllTypesMatch<["param", "update", "result"]>]> {
  let summary = "Apply an orthogonalised update to a parameter (shard)";
  let description = [{
    ```mlir
    %p2 = muon.apply_update %p, %o lr 0.02 weight_decay 0.01 scale 1.0
            : tensor<?x64xf32>
    %p3 = muon.apply_update %p, %o lr %lr weight_decay 0.0 scale 1.0
            : tensor<?x64xf32>
    ```
    Elementwise: `P' = P * (1 - lr*weight_decay) - lr * (O * scale)`.
    `lr` and `weight_decay` are each a constant or an f64 value.
  }];
  let arguments = (ins AnyRankedTensor:$param, AnyRankedTensor:$update,
                       Optional<F64>:$lr_value,
                       Optional<F64>:$weight_decay_value,
                       OptionalAttr<F64Attr>:$lr,
                       OptionalAttr<F64Attr>:$weight_decay, F64Attr:$scale);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $param `,` $update `lr` custom<F64ValueOrAttr>($lr_value, $lr)
    `weight_decay` custom<F64ValueOrAttr>($weight_decay_value, $weight_decay)
    `scale` $scale attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

#endif // MUON_DIALECT_MUON_IR_MUONOPS_TD
