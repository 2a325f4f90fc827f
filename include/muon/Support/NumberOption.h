//===- NumberOption.h - Real-number options, never empty ----*- C++ -*-===//
//
// llvm::cl reads a double option's empty value (`--lr=`, or
// `intra-node-latency-us=` in a pass pipeline) as 0, because its parser
// accepts any text strtod consumes entirely, and the empty text is consumed
// entirely. A script whose variable is unset (`--lr=$LR`) would then run
// with 0 where 0 is a legal value (a latency, a learning rate) and say
// nothing. `muon::Number` is a double whose option parser refuses the empty
// text and text that is not a number; everything else (range checks) stays
// with the option's user.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_NUMBEROPTION_H
#define MUON_SUPPORT_NUMBEROPTION_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace muon {

/// A double read from an option: converts to and from double, so an option
/// of this type reads as one.
struct Number {
  double value = 0;
  constexpr Number(double value = 0) : value(value) {}
  constexpr operator double() const { return value; }
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Number n) {
  return os << n.value;
}

} // namespace muon

namespace llvm {
namespace cl {

/// The parser of `muon::Number` options (pass options find it by type).
template <> class parser<muon::Number> : public basic_parser<muon::Number> {
public:
  parser(Option &option) : basic_parser(option) {}

  /// Refuses an empty value and one that does not read as a number, with
  /// llvm::cl's message for the option.
  bool parse(Option &option, StringRef argName, StringRef arg,
             muon::Number &value);

  StringRef getValueName() const override { return "number"; }

  void printOptionDiff(const Option &option, muon::Number value,
                       const OptionValue<muon::Number> &defaultValue,
                       size_t globalWidth) const;

  void anchor() override;
};

} // namespace cl
} // namespace llvm

#endif // MUON_SUPPORT_NUMBEROPTION_H
