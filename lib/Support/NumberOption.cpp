//===- NumberOption.cpp - Real-number options, never empty ----------------===//

#include "muon/Support/NumberOption.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

bool cl::parser<muon::Number>::parse(Option &option, StringRef, StringRef arg,
                                     muon::Number &value) {
  double parsed;
  if (arg.trim().empty())
    return option.error("needs a number; the value is empty");
  if (!to_float(arg, parsed))
    return option.error("'" + arg + "' is not a number");
  value = parsed;
  return false;
}

void cl::parser<muon::Number>::printOptionDiff(
    const Option &option, muon::Number value, const OptionValue<muon::Number> &,
    size_t globalWidth) const {
  printOptionName(option, globalWidth);
  outs() << "= " << value << "\n";
}

void cl::parser<muon::Number>::anchor() {}
