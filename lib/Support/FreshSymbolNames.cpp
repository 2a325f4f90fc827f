//===- FreshSymbolNames.cpp - Names no symbol of a table has --------------===//

#include "muon/Support/FreshSymbolNames.h"

std::string muon::FreshSymbolNames::operator()(const std::string &base) {
  int &n = next.try_emplace(base, -1).first->second;
  while (true) {
    std::string name = n < 0 ? base : base + "_" + std::to_string(n);
    ++n;
    if (!symbols.lookup(name))
      return name;
  }
}
