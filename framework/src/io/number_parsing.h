// Strict token parsing shared by the text readers (MatrixMarket, CSV, LIBSVM): the whole token must
// be a number, so "1.5x" is an error, not 1.5.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace sdprl::io::detail {

// A token for messages, shortened to 40 characters and quoted; bytes that are not printable ASCII
// (a compressed file read as text) as \xHH, so that the message stays one readable line (a NUL
// cut it short, without its closing quote).
inline std::string quote(std::string_view s) {
  constexpr std::size_t kMax = 40;
  const bool cut = s.size() > kMax;
  if (cut) s = s.substr(0, kMax);
  std::string out = "'";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      static const char* const kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out + (cut ? "...'" : "'");
}

// A leading '+' is accepted (std::from_chars does not).
inline std::string_view strip_plus(std::string_view s) {
  if (s.size() >= 2 && s[0] == '+' && s[1] != '-' && s[1] != '+') return s.substr(1);
  return s;
}

enum class ParseStatus { ok, invalid, out_of_range };

template <class T>
ParseStatus parse_number(std::string_view s, T& out) {
  s = strip_plus(s);
  if (s.empty()) return ParseStatus::invalid;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc::result_out_of_range) return ParseStatus::out_of_range;
  if (ec != std::errc() || ptr != s.data() + s.size()) return ParseStatus::invalid;
  return ParseStatus::ok;
}

// The largest magnitude a data value may have: the objective squares values and multiplies them
// in pairs, and 1e300 read as a target ended as "non-finite objective at MM iteration 1" with no
// place named. Refused where it is read instead.
constexpr double kLargestDataValue = 1e150;

// "" when |v| is within kLargestDataValue, else why not (for the reader's located message).
inline std::string scale_problem(double v, std::string_view text) {
  if (!(v > kLargestDataValue || v < -kLargestDataValue)) return {};
  return "value " + quote(text) + " is too large: sdprl needs |x| <= 1e150 so that products of two values stay "
         "finite (rescale the data)";
}

inline ParseStatus parse_int(std::string_view s, std::int64_t& out) { return parse_number(s, out); }
inline ParseStatus parse_double(std::string_view s, double& out) { return parse_number(s, out); }

}  // namespace sdprl::io::detail
