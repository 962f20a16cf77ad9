// Internal (not installed): the clock and the number text of the MM loop's messages.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace sdprl::mm {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// printf-formatted x ("%.17g" for a value a user compares with a saved one, "%.3g" for a size).
inline std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

}  // namespace sdprl::mm
