// sdprl::Error and format_location: the one exception type for configuration and data problems.
#include "sdprl/error.h"

#include <utility>

namespace sdprl {

namespace {

// what() reads "where: message", or just the message when no place applies.
std::string compose_what(const std::string& where, const std::string& message) {
  return where.empty() ? message : where + ": " + message;
}

}  // namespace

Error::Error(std::string where, std::string message)
    : std::runtime_error(compose_what(where, message)),
      where_(std::move(where)),
      message_(std::move(message)) {}

// Out of line so that the vtable and typeinfo live once, in the framework library.
Error::~Error() = default;

std::string format_location(const std::string& file, long line, long column) {
  std::string out = file;
  // A column means nothing without its line, so it is dropped together with it.
  if (line > 0) {
    if (!out.empty()) out += ':';
    out += std::to_string(line);
    if (column > 0) out += ':' + std::to_string(column);
  }
  return out;
}

}  // namespace sdprl
