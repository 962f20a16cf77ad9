// Internal (not installed): how numbers and number rules are written in messages and in the options
// reference.
#pragma once

#include <string>

#include "sdprl/config.h"

namespace sdprl::detail {

// Shortest text that reads back as the same double ("0.1", "1e-05", "inf").
std::string format_number(double x);

// " >= 1", " in (0, 1]", or "" for an unbounded rule, the bounds written by `format`.
std::string rule_bounds(const NumberRule& rule, std::string (*format)(double) = format_number);

}  // namespace sdprl::detail
