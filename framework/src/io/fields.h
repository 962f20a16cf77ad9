// Splitting a line of a text data file into tokens with their columns, shared by the text readers
// (MatrixMarket, LIBSVM, SDPA), so that their messages point at the same column for the same token.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace sdprl::io::detail {

// A token of a line with its 1-based column.
struct Field {
  std::string_view text;
  long column = 0;
};

// Blank characters within a line (std::getline has removed the '\n').
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

// Appends to `fields` the runs of `line` that contain no separator (is_separator(c) true).
template <class IsSeparator>
void append_fields(std::string_view line, IsSeparator is_separator, std::vector<Field>& fields) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_separator(line[i])) ++i;
    if (i >= line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_separator(line[i])) ++i;
    fields.push_back({line.substr(start, i - start), static_cast<long>(start) + 1});
  }
}

}  // namespace sdprl::io::detail
