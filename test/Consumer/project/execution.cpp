// Muon::MuonExecution linked alone: its header compiles (it includes LLVM's
// ORC headers) and a compiled-object check links and runs.
#include "muon/Execution/CompiledEntry.h"

#include <cstdio>

int main() {
  bool readable = muon::exec::CompiledEntry::isReadable("/nonexistent.o");
  std::printf("execution: nonexistent object readable = %d\n", readable);
  return readable ? 1 : 0;
}
