// RUN: muon-opt %s -split-input-file -verify-diagnostics

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{has 2 parameters but 1 gradients}}
  %r:3 = muon.step params(%p, %p : !t, !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{has 2 parameters but 1 momentum buffers}}
  %r:3 = muon.step params(%p, %p : !t, !t) grads(%g, %g : !t, !t) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{param_info has 2 entries for 1 parameters}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"a">, #muon.param<"b">]}
  return
}

// -----

dist.mesh @m [dp = 4]
!b = !dist.tensor<16xf32, @m, [shard<0>]>
func.func @f(%p: !b, %g: !b, %m: !b) {
  // expected-error @+1 {{parameter #0 ('norm.bias') has rank 1 (shape 16); Muon orthogonalises matrices, so give parameters with fewer than 2 dims to another optimizer (e.g. AdamW)}}
  %r:2 = muon.step params(%p : !b) grads(%g : !b) momenta(%m : !b) {lr = 0.02 : f64, param_info = [#muon.param<"norm.bias">]}
  return
}

// -----

dist.mesh @m [dp = 4]
!s = !dist.tensor<f32, @m, [replicate]>
func.func @f(%p: !s, %g: !s, %m: !s) {
  // expected-error @+1 {{parameter #0 has rank 0 (a scalar); Muon orthogonalises matrices}}
  %r:2 = muon.step params(%p : !s) grads(%g : !s) momenta(%m : !s) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!i = !dist.tensor<16x8xi32, @m, [shard<0>]>
func.func @f(%p: !i, %g: !i, %m: !i) {
  // expected-error @+1 {{parameter #0 has non-float element type 'i32'}}
  %r:2 = muon.step params(%p : !i) grads(%g : !i) momenta(%m : !i) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
!u = !dist.tensor<16x4xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 has shape 16x4 but the parameter has 16x8}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
!u = !dist.tensor<16x8xbf16, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !u) {
  // expected-error @+1 {{momentum buffer of parameter #0 has element type 'bf16' but the parameter has 'f32'}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !u) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{ns_steps must be at least 1, got 0}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, ns_steps = 0}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{has 4 Newton-Schulz coefficients; expected 3 (one (a, b, c) triple) or 6 (one triple per iteration, ns_steps = 2)}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, ns_steps = 2, ns_coeffs = array<f64: 1.0, 2.0, 3.0, 4.0>}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{eps must be non-negative, got -1}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, eps = -1.0 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{Newton-Schulz computes in f32 or bf16, not 'f16'}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, ns_dtype = f16}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{lr must be non-negative, got -1.000000e-01}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = -0.1 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{momentum must be in [0, 1), got 1}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, momentum = 1.0 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{weight_decay must be non-negative, got -5.000000e-01}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, weight_decay = -0.5 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{prefetch_count must be non-negative, got -1}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, prefetch_count = -1}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{owners has 2 entries for 1 parameters}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, owners = array<i64: 0, 1>}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{has an `assignment` but strategy is round_robin; set strategy = #muon.strategy<explicit>}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, assignment = [array<i64: 0>]}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{strategy explicit needs an `assignment` (entry r lists the parameters rank r owns) or `owners`}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{takes `assignment` or `owners`, not both}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, assignment = [array<i64: 0>], owners = array<i64: 0>}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
!u = !dist.tensor<16x8xf32, @nope, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !u) {
  // expected-error @+1 {{unknown mesh @nope: no dist.mesh with that name is visible here}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !u) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
dist.mesh @n [dp = 4]
!u = !dist.tensor<16x8xf32, @n, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !u) {
  // expected-error @+1 {{all tensors of one step must live on one mesh; found @m and @n}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !u) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
!u = !dist.tensor<16x8xf32, @m, [replicate]>
func.func @f(%p: !t, %g: !t, %m: !u) {
  // expected-error @+1 {{momentum buffer of parameter #0 has layout #dist.layout<@m, [replicate]> but the parameter has #dist.layout<@m, [shard<0>]>; they must match}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !u) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2]
!t = !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, dp]}>
!u = !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 has a different nesting order than the parameter; they must match}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

// A replicated gradient must be stored as the parameter is.
dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [replicate], storage = dim<0 on dp>>
!u = !dist.tensor<16x8xf32, @m, [replicate]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 has storage none where dim<0 on dp> is expected: the parameter's storage without its splits over the gradient's partial axes (the step reduce-scatters a partial gradient into them)}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

// A partial gradient keeps the parameter's splits over its other axes.
dist.mesh @m [dp = 2, tp = 2]
!t = !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = block<0 on dp, 1 on tp>>
!u = !dist.tensor<16x8xf32, @m, [partial<sum>, replicate]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 has storage none where dim<1 on tp> is expected}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [reduced], storage = whole<on dp owner 1>>
!u = !dist.tensor<16x8xf32, @m, [partial<sum>]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 is partial on mesh axis 'dp', where the parameter's whole storage keeps it on one coordinate; reduce the gradient before the step}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 2, pp = 2]
!t = !dist.tensor<16x8xf32, @m, [replicate, replicate]>
!u = !dist.tensor<16x8xf32, @m, [replicate, partial<sum>]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 ('w') is partial on mesh axis 'pp', where its expert or stage annotation keeps it on one coordinate; reduce the gradient before the step}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", stage = pp[1]>]}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
!u = !dist.tensor<16x8xf32, @m, [partial<sum>]>
func.func @f(%p: !t, %g: !u, %m: !t) {
  // expected-error @+1 {{gradient of parameter #0 has placement #dist.placement<partial<sum>> on mesh axis 'dp' where the parameter has #dist.placement<shard<0>>; expected the same placement, or partial<sum|avg> on a replicated axis (the step reduces it)}}
  %r:2 = muon.step params(%p : !t) grads(%g : !u) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{parameter #0 ('w') is annotated expert = ep[1], but mesh @m has no axis 'ep'}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", expert = ep[1]>]}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{parameter #0 ('w') lives at one coordinate of mesh axis 'dp', but its layout splits it over that axis; use replicate there}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", stage = dp[1]>]}
  return
}

// -----

dist.mesh @m [pp = 2, dp = 2]
!r = !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>
func.func @f(%p: !r, %g: !r, %m: !r) {
  // expected-error @+1 {{parameter #0 ('head') lives at coordinate 2 of mesh axis 'pp', which has 2 coordinates}}
  %r:2 = muon.step params(%p : !r) grads(%g : !r) momenta(%m : !r) {lr = 0.02 : f64, param_info = [#muon.param<"head", stage = pp[2]>]}
  return
}

// -----

dist.mesh @m [pp = 2, dp = 2]
!r = !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>
func.func @f(%p: !r, %g: !r, %m: !r) {
  // expected-error @+1 {{cannot give parameter #0 ('head') to rank 1: rank 1 has coordinate 0 on mesh axis 'pp', but the parameter lives at coordinate 1}}
  %r:2 = muon.step params(%p : !r) grads(%g : !r) momenta(%m : !r) {lr = 0.02 : f64, param_info = [#muon.param<"head", stage = pp[1]>], strategy = #muon.strategy<explicit>, owners = array<i64: 1>}
  return
}

// -----

dist.mesh @m [dp = 4]
!p = !dist.tensor<16x8xf32, @m, [partial<sum>]>
func.func @f(%p: !p, %g: !p, %m: !p) {
  // expected-error @+1 {{parameter #0 has a partial placement on mesh axis 'dp'; a parameter must be shard, replicate or reduced there}}
  %r:2 = muon.step params(%p : !p) grads(%g : !p) momenta(%m : !p) {lr = 0.02 : f64}
  return
}

// -----

// With its cotangent as the gradient, the parameter is still what is
// refused (not the gradient's placement against it).
dist.mesh @m [dp = 2, tp = 2]
!p = !dist.tensor<16x8xf32, @m, [partial<sum>, reduced]>
!g = !dist.tensor<16x8xf32, @m, [reduced, partial<sum>]>
func.func @f(%p: !p, %g: !g, %m: !p) {
  // expected-error @+1 {{parameter #0 has a partial placement on mesh axis 'dp'; a parameter must be shard, replicate or reduced there}}
  %r:2 = muon.step params(%p : !p) grads(%g : !g) momenta(%m : !p) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!w = !dist.tensor<16x8xf32, @m, [replicate], storage = whole<on dp owner 2>>
func.func @f(%p: !w, %g: !w, %m: !w) {
  // expected-error @+1 {{cannot give parameter #0 to rank 0: rank 0 has coordinate 0 on mesh axis 'dp', but whole storage keeps the tensor at coordinate 2}}
  %r:2 = muon.step params(%p : !w) grads(%g : !w) momenta(%m : !w) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0>}
  return
}

// -----

dist.mesh @m [ep = 2, dp = 2]
!s = !dist.tensor<4x8x8xf32, @m, [shard<0>, replicate]>
func.func @f(%p: !s, %g: !s, %m: !s) {
  // expected-error @+1 {{cannot give parameter #0 to rank 2: rank 2 has coordinate 1 on mesh axis 'ep', which splits a batch dim (every coordinate orthogonalises its own slice); name the owner by its coordinate-0 representative}}
  %r:2 = muon.step params(%p : !s) grads(%g : !s) momenta(%m : !s) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 2>}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{cannot give parameter #0 to rank 4: rank 4 is outside the mesh (4 ranks)}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 4>}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{assignment lists 5 ranks but mesh @m has 4}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, assignment = [array<i64>, array<i64>, array<i64>, array<i64>, array<i64: 0>]}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{assignment gives rank 1 parameter #3, but the step has 1 parameters}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, assignment = [array<i64: 0>, array<i64: 3>]}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{assignment gives parameter #0 to rank 0 and again to rank 1; every parameter needs exactly one owner}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, assignment = [array<i64: 0>, array<i64: 0>]}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{assignment misses parameter #1; every parameter needs exactly one owner}}
  %r:4 = muon.step params(%p, %p : !t, !t) grads(%g, %g : !t, !t) momenta(%m, %m : !t, !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, assignment = [array<i64: 0>]}
  return
}

// -----

func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{needs a matrix or a batch of matrices, got rank 1}}
  %0 = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<8x8xi32>) {
  // expected-error @+1 {{needs a float tensor, got 'i32'}}
  %0 = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<8x8xi32>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{has 6 Newton-Schulz coefficients; expected 3 (one (a, b, c) triple) or 9 (one triple per iteration, ns_steps = 3)}}
  %0 = muon.newton_schulz %x steps 3 coeffs [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] eps 1.0e-7 in f32 : tensor<8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{Newton-Schulz computes in f32 or bf16, not 'f64'}}
  %0 = muon.newton_schulz %x steps 1 coeffs [1.0, 2.0, 3.0] eps 1.0e-7 in f64 : tensor<8x8xf32>
  return
}

// -----

// expected-error @+1 {{expected `expert`, `stage` or `split`, got 'layer'}}
func.func private @f() attributes {p = #muon.param<"w", layer = pp[1]>}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<32x12xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{cannot give parameter #0 ('heads') to rank 1: rank 1 has coordinate 1 on mesh axis 'dp', whose shards hold whole Newton-Schulz blocks (every coordinate orthogonalises its own); name the owner by its coordinate-0 representative}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 1>, param_info = [#muon.param<"heads", split = 0 [8, 8, 8, 8]>]}
  return
}

// -----

// expected-error @+1 {{`split` is given twice}}
func.func private @f() attributes {p = #muon.param<"w", split = 0 [4], split = 1 [4]>}

// -----

// expected-error @+1 {{`split` needs a non-negative dim, got -1}}
func.func private @f() attributes {p = #muon.param<"w", split = -1 [4]>}

// -----

// expected-error @+1 {{a parameter lives in one expert group or one stage, not both}}
func.func private @f() attributes {p = #muon.param<"w", expert = ep[0], stage = pp[1]>}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<2x8x4xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{parameter #0 ('w') splits dim 0 for Newton-Schulz, but only its matrix dims (1 and 2) can be split}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", split = 0 [1, 1]>]}
  return
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{parameter #0 ('w') has a Newton-Schulz block of size 0; block sizes must be positive}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", split = 0 [8, 0]>]}
  return
}

// -----

// An empty matrix has nothing to split (its other dim is 0).
dist.mesh @m [dp = 2]
!z = !dist.tensor<8x0xf32, @m, [replicate]>
func.func @f(%p: !z, %g: !z, %m: !z) {
  // expected-error @+1 {{parameter #0 ('w') of shape 8x0 has no elements; it has nothing to split into Newton-Schulz blocks}}
  %r:2 = muon.step params(%p : !z) grads(%g : !z) momenta(%m : !z) {lr = 0.02 : f64, param_info = [#muon.param<"w", split = 0 [4, 4]>]}
  return
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{parameter #0 ('w') has Newton-Schulz blocks adding up to more than dim 1, which has 4}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", split = 1 [2, 9223372036854775807]>]}
  return
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{parameter #0 ('w') has Newton-Schulz blocks adding up to 6 along dim 0, which has 8}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w", split = 0 [2, 4]>]}
  return
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @shared_gradient(%p0: !t, %p1: !t, %g: !t, %m0: !t, %m1: !t) -> (!t, !t, !t, !t) {
  // expected-error @+1 {{uses one value as the gradient of parameter #0 and as the gradient of parameter #1; every parameter, gradient and momentum buffer must be a value of its own}}
  %r:4 = muon.step params(%p0, %p1 : !t, !t) grads(%g, %g : !t, !t) momenta(%m0, %m1 : !t, !t) {lr = 0.02 : f64}
  return %r#0, %r#1, %r#2, %r#3 : !t, !t, !t, !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @aliased_momentum(%p: !t, %g: !t) -> (!t, !t) {
  // expected-error @+1 {{uses one value as the parameter of parameter #0 ('w') and as the momentum buffer of parameter #0 ('w')}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%p : !t) {lr = 0.02 : f64, param_info = [#muon.param<"w">]}
  return %r#0, %r#1 : !t, !t
}

// -----

// A global-view step (plain tensors, before convert-shard-to-dist) is
// checked the same, at verification.
func.func @aliased_momentum_global_view(%p: tensor<16x8xf32>, %g: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  // expected-error @+1 {{uses one value as the parameter of parameter #0 and as the momentum buffer of parameter #0; every parameter, gradient and momentum buffer must be a value of its own}}
  %r:2 = muon.step params(%p : tensor<16x8xf32>) grads(%g : tensor<16x8xf32>) momenta(%p : tensor<16x8xf32>) {lr = 0.02 : f64}
  return %r#0, %r#1 : tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @infinite_lr(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{lr must be finite, got INF}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0x7FF0000000000000 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @nan_weight_decay(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{weight_decay must be finite, got}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, weight_decay = 0x7FF8000000000000 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

// Finite in f64 but past what the f32 step can use: 1e300 would round to
// inf in f32 and turn every parameter into inf or NaN.
dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @huge_lr(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{lr must be at most 2^60 (the step computes in f32), got 1.000000e+300}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 1.0e300 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @huge_weight_decay(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{weight_decay must be at most 2^60 (the step computes in f32), got 2.000000e+18}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, weight_decay = 2.0e18 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

// 2^60 itself is accepted.
dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @largest_rates(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 1.152921504606846976e18 : f64, weight_decay = 1.152921504606846976e18 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @infinite_eps(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{eps must be finite, got}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, eps = 0x7FF0000000000000 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @nan_coefficient(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{Newton-Schulz coefficient #1 is not finite}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, ns_coeffs = array<f64: 3.4445, 0x7FF8000000000000, 2.0315>}
  return %r#0, %r#1 : !t, !t
}

// -----

func.func @ns_nan_coefficient(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{Newton-Schulz coefficient #0 is not finite}}
  %o = muon.newton_schulz %x steps 1 coeffs [0x7FF0000000000000, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @huge_ns_steps(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @+1 {{ns_steps must be at most 1048576, got 4611686018427387904}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, ns_steps = 4611686018427387904 : i64}
  return %r#0, %r#1 : !t, !t
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) {
  // expected-error @+1 {{needs lr: an attribute (lr = 0.02 : f64) or an f64 operand lr(%v)}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {weight_decay = 0.1 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t, %lr: f64) {
  // expected-error @+1 {{takes lr as an attribute or as an operand lr(%v), not both}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) lr(%lr) {lr = 0.02 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t, %lr: f64, %wd: f64) {
  // expected-error @+1 {{takes weight_decay as an attribute or as an operand weight_decay(%v), not both}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) lr(%lr) weight_decay(%wd) {weight_decay = 0.0 : f64}
  return
}

// -----

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t, %lr: f32) {
  // expected-error @+1 {{operand #3 must be 64-bit float}}
  %r:2 = "muon.step"(%p, %g, %m, %lr) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (!t, !t, !t, f32) -> (!t, !t)
  return
}

// -----

func.func @f(%p: tensor<4x4xf32>, %o: tensor<4x4xf32>, %lr: f64) {
  // expected-error @+1 {{takes lr as a constant or as a value, exactly one}}
  %r = "muon.apply_update"(%p, %o, %lr) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>, lr = 1.0 : f64, weight_decay = 0.0 : f64, scale = 1.0 : f64}> : (tensor<4x4xf32>, tensor<4x4xf32>, f64) -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%p: tensor<4x4xf32>, %o: tensor<4x4xf32>) {
  // expected-error @+1 {{takes weight_decay as a constant or as a value, exactly one}}
  %r = "muon.apply_update"(%p, %o) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, lr = 1.0 : f64, scale = 1.0 : f64}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

// A step is distributed or global-view, not both.
dist.mesh @m [dp = 2]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @mixed(%p: !t, %g: tensor<16x8xf32>, %m: !t) {
  // expected-error @below {{'muon.step' op mixes !dist.tensor operands with plain tensors; a step is distributed (every operand a !dist.tensor) or global-view (every operand a plain tensor, given layouts by convert-shard-to-dist)}}
  %r:2 = muon.step params(%p : !t) grads(%g : tensor<16x8xf32>) momenta(%m : !t) {lr = 0.02 : f64}
  return
}

// -----

func.func @global_view_dynamic(%p: tensor<?x8xf32>, %g: tensor<?x8xf32>, %m: tensor<?x8xf32>) {
  // expected-error @below {{'muon.step' op operand #0 must be variadic of !dist.tensor, or statically shaped tensor (global view), but got 'tensor<?x8xf32>'}}
  %r:2 = muon.step params(%p : tensor<?x8xf32>) grads(%g : tensor<?x8xf32>) momenta(%m : tensor<?x8xf32>) {lr = 0.02 : f64}
  return
}

// -----

func.func @global_view_shapes(%p: tensor<16x8xf32>, %g: tensor<8x16xf32>, %m: tensor<16x8xf32>) {
  // expected-error @below {{'muon.step' op gradient of parameter #0 has shape 8x16 but the parameter has 16x8}}
  %r:2 = muon.step params(%p : tensor<16x8xf32>) grads(%g : tensor<8x16xf32>) momenta(%m : tensor<16x8xf32>) {lr = 0.02 : f64}
  return
}

// -----

// Only the generic form can write a step without parameters.
func.func @no_params() {
  // expected-error @+1 {{needs at least one parameter}}
  "muon.step"() {lr = 0.02 : f64, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0>} : () -> ()
  return
}
