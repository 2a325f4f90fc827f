//===- Errors.h - Fatal error reporting of the runtime -------*- C++ -*-===//
//
// A failing collective or a bad input ends the job: there is no retry and
// no fallback. One line names rank, operation, communicator and cause; then
// the backend aborts every rank (so peers blocked in a collective do not
// hang).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_ERRORS_H
#define MUON_RUNTIME_ERRORS_H

#include <string>

namespace muon {
namespace rt {

[[noreturn]] void fatal(const std::string &op, const std::string &comm,
                        const std::string &cause);

/// Seconds a wait may block (MUON_RT_TIMEOUT_S, default 300).
double timeoutSeconds();
void setTimeoutSeconds(double s);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_ERRORS_H
