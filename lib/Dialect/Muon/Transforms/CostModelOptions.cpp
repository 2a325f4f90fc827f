//===- CostModelOptions.cpp - The machine the estimates assume ------------===//

#include "muon/Dialect/Muon/Transforms/CostModelOptions.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace ::muon::optim;
namespace plan = ::muon::plan;

bool CostModelOptions::isDefault() const {
  CostModelOptions d;
  return ranksPerNode == d.ranksPerNode && intraNodeGBps == d.intraNodeGBps &&
         intraNodeLatencyUs == d.intraNodeLatencyUs &&
         interNodeGBps == d.interNodeGBps &&
         interNodeLatencyUs == d.interNodeLatencyUs && nsTflops == d.nsTflops;
}

/// `value` with as few digits as read back as the same double: a value
/// just past a bound (1.000001e9) is not shown as the bound itself.
static std::string shortest(double value) {
  std::string text;
  for (int digits = 6; digits <= 17; ++digits) {
    text.clear();
    llvm::raw_string_ostream(text) << llvm::format("%.*g", digits, value);
    if (std::strtod(text.c_str(), nullptr) == value)
      break;
  }
  return text;
}

static LogicalResult verifyCostModelOptions(Location loc, StringRef pass,
                                            const CostModelOptions &options) {
  auto fail = [&](StringRef option, double value, StringRef want) {
    return emitError(loc) << pass << ": " << option << " = " << shortest(value)
                          << " must be " << want;
  };
  if (options.ranksPerNode < 1)
    return emitError(loc) << pass
                          << ": ranks-per-node = " << options.ranksPerNode
                          << " must be at least 1";
  // Bounded so that no estimate can overflow to infinity (which JSON
  // cannot hold): at 1 byte/s and 10^9 s per call, a step of any size
  // still sums to a finite time.
  auto within = [](double v, double lo, double hi) {
    return std::isfinite(v) && v >= lo && v <= hi;
  };
  for (auto [option, value] :
       {std::pair<StringRef, double>{"intra-node-gbps", options.intraNodeGBps},
        {"inter-node-gbps", options.interNodeGBps}})
    if (!within(value, 1e-9, 1e9))
      return fail(option, value, "a bandwidth from 1e-09 to 1e+09 GB/s");
  for (auto [option, value] :
       {std::pair<StringRef, double>{"intra-node-latency-us",
                                     options.intraNodeLatencyUs},
        {"inter-node-latency-us", options.interNodeLatencyUs}})
    if (!within(value, 0, 1e9))
      return fail(option, value, "a latency from 0 to 1e+09 us");
  if (options.nsTflops != 0 && !within(options.nsTflops, 1e-9, 1e9))
    return fail("ns-tflops", options.nsTflops,
                "0 (by ns_dtype) or a rate from 1e-09 to 1e+09 TFLOP/s");
  return success();
}

FailureOr<CostModelOptions>
muon::optim::costModelOptions(Location loc, StringRef pass,
                              int64_t ranksPerNode, double intraNodeGBps,
                              double intraNodeLatencyUs, double interNodeGBps,
                              double interNodeLatencyUs, double nsTflops) {
  // + 0.0 turns a -0 into 0, which the estimates' header then prints.
  CostModelOptions options{
      ranksPerNode,        intraNodeGBps + 0.0,      intraNodeLatencyUs + 0.0,
      interNodeGBps + 0.0, interNodeLatencyUs + 0.0, nsTflops + 0.0};
  if (failed(verifyCostModelOptions(loc, pass, options)))
    return failure();
  return options;
}

plan::CostModel muon::optim::costModelFor(StepOp step,
                                          const CostModelOptions &options) {
  plan::CostModel model;
  model.ranksPerNode = options.ranksPerNode;
  // Divided, not multiplied by 1e-6: 10 us is then exactly 1e-5 s, so a
  // comparison at a documented threshold comes out as documented.
  model.intraNode = {options.intraNodeLatencyUs / 1e6,
                     options.intraNodeGBps * 1e9};
  model.interNode = {options.interNodeLatencyUs / 1e6,
                     options.interNodeGBps * 1e9};
  if (options.nsTflops > 0)
    model.nsFlopRate = options.nsTflops * 1e12;
  else if (!step.getNsElementType().isBF16())
    model.nsFlopRate = 67e12;
  return model;
}
