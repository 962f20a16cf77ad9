// Errors of configuration and data. Each carries where the problem is (file:line:column, or the
// configuration field) and what was expected, so that the program can print one clear message.
#pragma once

#include <stdexcept>
#include <string>

#include "sdprl/export.h"

namespace sdprl {

class SDPRL_API Error : public std::runtime_error {
 public:
  // `where` is "file:line:column", "file:line", "file" or a field path such as "solver.rank";
  // it may be empty when no place applies.
  Error(std::string where, std::string message);
  ~Error() override;

  const std::string& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  std::string where_;
  std::string message_;
};

// Formats "file:line:column" (omitting parts that are zero).
SDPRL_API std::string format_location(const std::string& file, long line = 0, long column = 0);

}  // namespace sdprl
