//===- FunctionTableTest.cpp - The runtime table matches muon_runtime.h ---===//
//
// Every row of muon_runtime_functions.def (what the lowering declares) must
// be the prototype muon_runtime.h gives the runtime function: checked at
// compile time, row by row, and the symbols must resolve in the library.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include "gtest/gtest.h"

#include <string>
#include <type_traits>
#include <vector>

namespace {

// The C type of each kind of the table.
#define VOID void
#define I64 int64_t
#define F64 double
#define MEMREF muon_rt_memref *
#define I64_ARRAY muon_rt_i64_array *
#define F64_ARRAY muon_rt_f64_array *
#define PTR void *
#define I64_PTR const int64_t *
#define MUON_RT_SYMBOL_0(name) name
#define MUON_RT_SYMBOL_1(name) _mlir_ciface_##name
#define MUON_RT_SYMBOL(name, c) MUON_RT_SYMBOL_##c(name)

#define MUON_RT_FUNCTION(name, c, result, args)                                \
  static_assert(std::is_same<decltype(&MUON_RT_SYMBOL(name, c)),              \
                             result(*) args>::value,                           \
                #name ": the table and muon_runtime.h disagree");
#include "muon/Runtime/muon_runtime_functions.def"
#undef MUON_RT_FUNCTION

struct Row {
  std::string symbol;
  void *address;
};

#define MUON_RT_FUNCTION(name, c, result, args)                                \
  {c ? "_mlir_ciface_" #name : #name,                                          \
   reinterpret_cast<void *>(&MUON_RT_SYMBOL(name, c))},
const std::vector<Row> rows = {
#include "muon/Runtime/muon_runtime_functions.def"
};
#undef MUON_RT_FUNCTION

TEST(RuntimeFunctionTable, EveryRowLinks) {
  ASSERT_FALSE(rows.empty());
  for (const Row &r : rows)
    EXPECT_NE(r.address, nullptr) << r.symbol;
}

} // namespace
