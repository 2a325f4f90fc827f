//===- DistLayoutTest.cpp - The dist attributes through the layout API ----===//
//
// Checks that IR-level layouts reach muon::layout unchanged: local types and
// local shards computed from parsed !dist.tensor types, and the cotangent
// map on attributes.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {

constexpr const char *kModule = R"mlir(
  dist.mesh @m [dp = 4, tp = 2]
  dist.flat_group @g on @m[dp] numel [16, 8, 6, 4]
  func.func @f(
    %rows: !dist.tensor<10x8xf32, @m, [shard<0>, replicate]>,
    %tp_fsdp: !dist.tensor<24x12xf32, @m, [replicate, shard<0>], storage = dim<0 on dp>>,
    %flat: !dist.tensor<2x4xf32, @m, [replicate, replicate], storage = flat<@g, 1>>,
    %part: !dist.tensor<4x4xf32, @m, [partial<sum>, reduced]>,
    %fsdp_reduced: !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = dim<0 on dp>>,
    %block_reduced: !dist.tensor<16x8xf32, @m, [replicate, reduced], storage = block<0 on dp weights [1, 1, 1, 5], 1 on tp>>) {
    return
  }
)mlir";

class DistLayoutTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<DistDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kModule, &context);
    ASSERT_TRUE(module);
    func = *module->getOps<func::FuncOp>().begin();
  }
  DistTensorType arg(unsigned i) {
    return cast<DistTensorType>(func.getArgumentTypes()[i]);
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
};

TEST_F(DistLayoutTest, TypesVerifyAgainstTheirMesh) {
  for (unsigned i = 0; i < 6; ++i)
    EXPECT_TRUE(succeeded(verifyDistTensorType(
        arg(i), func, [&] { return func.emitError(); })))
        << "argument " << i;
}

// Verification and local types are remembered per type and mesh contents,
// not per mesh name: the same type on another @m, in a module of the same
// context, is judged against that mesh.
TEST_F(DistLayoutTest, RememberedPerMeshContentsNotName) {
  DistTensorType rows = arg(0);
  ASSERT_TRUE(succeeded(verifyDistTensorType(
      rows, func, [&] { return func.emitError(); })));
  EXPECT_EQ(localTensorType(rows, func).getShape()[0], ShapedType::kDynamic);

  // dp = 5 splits the 10 rows evenly; a single axis does not match the
  // type's two placements.
  for (auto [text, verifies] :
       {std::pair{"dist.mesh @m [dp = 5, tp = 2]", true},
        std::pair{"dist.mesh @m [dp = 4]", false}}) {
    OwningOpRef<ModuleOp> other = parseSourceString<ModuleOp>(
        (std::string(text) + "\nfunc.func @g() { return }").c_str(),
        &context);
    ASSERT_TRUE(other);
    auto g = *other->getOps<func::FuncOp>().begin();
    int errors = 0;
    ScopedDiagnosticHandler count(&context, [&](Diagnostic &) {
      ++errors;
      return success();
    });
    EXPECT_EQ(succeeded(verifyDistTensorType(
                  rows, g, [&] { return g.emitError(); })),
              verifies)
        << text;
    EXPECT_EQ(errors, verifies ? 0 : 1) << text;
    if (verifies)
      EXPECT_EQ(localTensorType(rows, g).getShape()[0], 2) << text;
  }
}

TEST_F(DistLayoutTest, LocalTypesAreDynamicWhereRanksDiffer) {
  // 10 rows over dp=4: 3, 3, 3, 1.
  EXPECT_EQ(localTensorType(arg(0), func).getShape(),
            (ArrayRef<int64_t>{ShapedType::kDynamic, 8}));
  // 24 rows over tp=2 then storage over dp=4: always 3.
  EXPECT_EQ(localTensorType(arg(1), func).getShape(),
            (ArrayRef<int64_t>{3, 12}));
  EXPECT_EQ(localTensorType(arg(2), func).getShape(),
            (ArrayRef<int64_t>{ShapedType::kDynamic}));
  EXPECT_EQ(localTensorType(arg(3), func).getShape(),
            (ArrayRef<int64_t>{4, 4}));
}

TEST_F(DistLayoutTest, LocalTypesOverABoxMatchTheirRanks) {
  // Every box of coordinates of the 4 x 2 mesh (empty ones included): the
  // box form, which visits one rank per combination of splitting
  // coordinates, gives what the box's ranks listed one by one give.
  MeshOp mesh = lookupMesh(func, arg(0).getMesh());
  layout::Mesh m = toLayoutMesh(mesh);
  for (unsigned i = 0; i < 6; ++i) {
    if (i == 2)
      continue; // flat storage: its own local shape rules (1-D)
    DistTensorType t = arg(i);
    FailureOr<layout::Layout> l = toLayout(
        t.getLayout(), mesh, func, [&] { return func.emitError(); });
    ASSERT_TRUE(succeeded(l));
    for (int64_t lo0 = 0; lo0 <= 4; ++lo0)
      for (int64_t hi0 = lo0; hi0 <= 4; ++hi0)
        for (int64_t lo1 = 0; lo1 <= 2; ++lo1)
          for (int64_t hi1 = lo1; hi1 <= 2; ++hi1) {
            std::vector<int64_t> lo{lo0, lo1}, hi{hi0, hi1};
            RankedTensorType box = localTensorType(
                t.getShape(), t.getElementType(), *l, m, lo, hi);
            RankedTensorType listed = localTensorType(
                t.getShape(), t.getElementType(), *l, m, m.ranksIn(lo, hi));
            EXPECT_EQ(box, listed) << "argument " << i << ", box [" << lo0
                                   << ", " << hi0 << ") x [" << lo1 << ", "
                                   << hi1 << ")";
          }
  }
  // The whole mesh: the type's own local type.
  FailureOr<layout::Layout> rows = toLayout(
      arg(0).getLayout(), mesh, func, [&] { return func.emitError(); });
  ASSERT_TRUE(succeeded(rows));
  EXPECT_EQ(localTensorType(arg(0).getShape(), arg(0).getElementType(), *rows,
                            m, {0, 0}, {4, 2}),
            localTensorType(arg(0), func));
}

TEST_F(DistLayoutTest, LocalShardsMatchTheLayoutModel) {
  layout::LocalShard last = localShardOf(arg(0), func, {3, 1});
  EXPECT_EQ(last.shape, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(last.offsets, (std::vector<int64_t>{9, 0}));
  layout::LocalShard fsdp = localShardOf(arg(1), func, {2, 1});
  EXPECT_EQ(fsdp.offsets, (std::vector<int64_t>{18, 0}));
  layout::LocalShard flat = localShardOf(arg(2), func, {2, 0});
  EXPECT_TRUE(flat.flattened);
  EXPECT_EQ(flat.shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(flat.offsets, (std::vector<int64_t>{2}));
}

TEST_F(DistLayoutTest, CotangentLayout) {
  MeshOp mesh = lookupMesh(func, arg(3).getMesh());
  LayoutAttr primal = arg(3).getLayout();
  LayoutAttr grad = getCotangent(primal, mesh);
  ASSERT_EQ(grad.getPlacements().size(), 2u);
  EXPECT_EQ(grad.getPlacements()[0], PlacementAttr::getReduced(&context));
  EXPECT_EQ(grad.getPlacements()[1],
            PlacementAttr::getPartial(&context, ReduceKind::Sum));
  EXPECT_EQ(getCotangent(grad, mesh), primal);
  EXPECT_EQ(getCotangent(PlacementAttr::getShard(&context, 1)),
            PlacementAttr::getShard(&context, 1));
  EXPECT_EQ(getCotangent(PlacementAttr::getReplicate(&context)),
            PlacementAttr::getReplicate(&context));
}

TEST_F(DistLayoutTest, CotangentDropsStorageOverPartialAxes) {
  MeshOp mesh = lookupMesh(func, arg(4).getMesh());
  // FSDP with reduced weights: the gradient is each rank's whole
  // contribution, not stored in pieces over dp.
  LayoutAttr fsdp = getCotangent(arg(4).getLayout(), mesh);
  EXPECT_FALSE(fsdp.getStorage());
  EXPECT_EQ(fsdp.getPlacements()[0],
            PlacementAttr::getPartial(&context, ReduceKind::Sum));
  // A block over (dp, tp) with tp reduced keeps its dp split, weights and
  // all, as a dim split.
  LayoutAttr block = getCotangent(arg(5).getLayout(), mesh);
  StorageAttr kept = block.getStorage();
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept.getKind(), StorageKind::Dim);
  EXPECT_EQ(kept.getDims(), ArrayRef<int64_t>{0});
  EXPECT_EQ(kept.getAxes()[0].getValue(), "dp");
  EXPECT_EQ(kept.getWeights(),
            ArrayAttr::get(&context,
                           {arg(5).getLayout().getStorage().getWeights()[0]}));
  // The stripped layout is itself valid.
  auto type =
      DistTensorType::get(&context, {16, 8}, Float32Type::get(&context), block);
  EXPECT_TRUE(succeeded(
      verifyDistTensorType(type, func, [&] { return func.emitError(); })));
}

} // namespace
