// SDPA sparse format reader and writer (see sdprl/io/sdpa.h for the format). Every parse error
// names file:line:column and says what was expected and what was found.
#include "sdprl/io/sdpa.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "io/compressed_input.h"
#include "io/fields.h"
#include "number_parsing.h"
#include "sdprl/error.h"
#include "sdprl/io/atomic_file.h"

namespace sdprl::io {
namespace {

using namespace detail;  // LineInput, Field and the number parsing

using Token = Field;

// SDPA's separators: blanks and the punctuation , ( ) { } that its dense format and SDPLIB's
// headers use ("{1, -2}"). '=' is not one: "3 = mDIM" is a number followed by ignored text.
bool is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == ',' || c == '(' || c == ')' ||
         c == '{' || c == '}';
}

std::vector<Token> tokenize(std::string_view line) {
  std::vector<Token> tokens;
  append_fields(line, is_separator, tokens);
  return tokens;
}

bool is_comment_or_blank(std::string_view line) {
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') continue;
    return c == '"' || c == '*';
  }
  return true;
}

// The data lines of the file, tokenized, with their line numbers kept by the LineInput.
class Reader {
 public:
  Reader(std::istream& in, const std::string& name) : in_(in, name) {}

  // Next non-comment, non-blank line; false at the end of the file.
  bool next_line() {
    while (in_.next(line_)) {
      if (is_comment_or_blank(line_)) continue;
      tokens_ = tokenize(line_);
      if (tokens_.empty()) continue;  // only separators, e.g. a lone "}"
      pos_ = 0;
      return true;
    }
    return false;
  }
  bool has_token() const { return pos_ < tokens_.size(); }
  const Token& peek() const { return tokens_[pos_]; }
  Token take() { return tokens_[pos_++]; }
  void skip_rest() { pos_ = tokens_.size(); }
  long line() const { return in_.line(); }
  const std::string& path() const { return in_.path(); }
  [[noreturn]] void fail(const std::string& message, long column = 0) const { in_.fail(message, column); }
  [[noreturn]] void fail_at_end(const std::string& message) const {
    throw Error(format_location(in_.path(), in_.line()), "unexpected end of file: " + message);
  }

  std::int64_t integer(const Token& t, const std::string& what) const {
    std::int64_t v = 0;
    const ParseStatus s = parse_int(t.text, v);
    if (s == ParseStatus::out_of_range) fail(what + " " + quote(t.text) + " is too large", t.column);
    if (s != ParseStatus::ok) fail("expected an integer " + what + ", got " + quote(t.text), t.column);
    return v;
  }
  double real(const Token& t, const std::string& what) const {
    double v = 0.0;
    const ParseStatus s = parse_double(t.text, v);
    if (s == ParseStatus::out_of_range) fail(what + " " + quote(t.text) + " is out of the range of a double", t.column);
    if (s != ParseStatus::ok) fail("expected a real " + what + ", got " + quote(t.text), t.column);
    if (!std::isfinite(v)) fail(what + " is NaN/Inf, got " + quote(t.text), t.column);
    if (const std::string problem = scale_problem(v, t.text); !problem.empty()) fail(problem, t.column);
    return v;
  }

 private:
  LineInput in_;
  std::string line_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

// A header count (m or nBLOCK): the first number of the next data line, the rest of which is
// ignored ("3 = mDIM").
std::int64_t header_count(Reader& in, const std::string& what, const std::string& missing) {
  if (!in.next_line()) in.fail_at_end("expected " + missing);
  const Token t = in.take();
  const std::int64_t v = in.integer(t, what);
  if (v < 1) in.fail(what + " must be >= 1, got " + std::to_string(v), t.column);
  if (v > std::numeric_limits<std::int32_t>::max()) in.fail(what + " is too large", t.column);
  in.skip_rest();
  return v;
}

}  // namespace

SdpaProblem read_sdpa(std::istream& stream, const std::string& name) {
  Reader in(stream, name);
  SdpaProblem p;
  p.m = header_count(in, "number of constraint matrices m", "m, the number of constraint matrices (mDIM)");
  const std::int64_t nblock = header_count(in, "number of blocks nBLOCK", "nBLOCK, the number of blocks");

  // Block sizes: nBLOCK integers, possibly over several lines; the rest of the last line is ignored.
  if (!in.next_line()) in.fail_at_end("expected the " + std::to_string(nblock) + " block sizes (bLOCKsTRUCT)");
  p.blocks_line = in.line();
  while (static_cast<std::int64_t>(p.blocks.size()) < nblock) {
    if (!in.has_token() && !in.next_line())
      in.fail_at_end("expected " + std::to_string(nblock) + " block sizes, found " + std::to_string(p.blocks.size()));
    const Token t = in.take();
    const std::int64_t b = in.integer(t, "block size (block " + std::to_string(p.blocks.size() + 1) + " of " +
                                             std::to_string(nblock) + ")");
    if (b == 0) in.fail("block size must be nonzero (positive: SDP block, negative: diagonal block)", t.column);
    if (std::abs(b) > std::numeric_limits<std::int32_t>::max()) in.fail("block size is too large", t.column);
    p.blocks.push_back(b);
  }
  in.skip_rest();

  // c: exactly m numbers, possibly over several lines. Collected as they are read, not sized by
  // m first: a header "2000000000 = mDIM" must not allocate 16 GB before the file shows a single
  // number (the SDPA fuzz target found it).
  std::vector<double> c;
  if (!in.next_line()) in.fail_at_end("expected the " + std::to_string(p.m) + " numbers of c");
  for (std::int64_t i = 0; i < p.m; ++i) {
    if (!in.has_token() && !in.next_line())
      in.fail_at_end("expected " + std::to_string(p.m) + " numbers of c, found " + std::to_string(i));
    c.push_back(in.real(in.take(), "c_" + std::to_string(i + 1)));
  }
  p.c = Eigen::Map<const Vector>(c.data(), static_cast<Index>(c.size()));
  if (in.has_token())
    in.fail("expected m = " + std::to_string(p.m) + " numbers of c, found more: " + quote(in.peek().text) +
                " (is m right?)",
            in.peek().column);

  // Entries: one per line, 5 numbers.
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t>, long> seen;
  while (in.next_line()) {
    std::vector<Token> t;
    while (in.has_token()) t.push_back(in.take());
    if (t.size() != 5)
      in.fail("expected an entry 'matno blkno i j value' (5 numbers), got " + std::to_string(t.size()) +
                  " fields (only SDPA's sparse format, .dat-s, is read)",
              t.size() > 5 ? t[5].column : 0);
    const std::int64_t mat = in.integer(t[0], "matrix number");
    if (mat < 0 || mat > p.m)
      in.fail("matrix number " + std::to_string(mat) + " outside [0, m = " + std::to_string(p.m) + "]", t[0].column);
    const std::int64_t blk = in.integer(t[1], "block number");
    if (blk < 1 || blk > nblock)
      in.fail("block number " + std::to_string(blk) + " outside [1, nBLOCK = " + std::to_string(nblock) + "]",
              t[1].column);
    const std::int64_t size = p.blocks[blk - 1];
    const std::int64_t dim = std::abs(size);
    std::int64_t i = in.integer(t[2], "row index"), j = in.integer(t[3], "column index");
    if (i < 1 || i > dim)
      in.fail("row index " + std::to_string(i) + " outside block " + std::to_string(blk) + " of size " +
                  std::to_string(dim),
              t[2].column);
    if (j < 1 || j > dim)
      in.fail("column index " + std::to_string(j) + " outside block " + std::to_string(blk) + " of size " +
                  std::to_string(dim),
              t[3].column);
    if (size < 0 && i != j)
      in.fail("block " + std::to_string(blk) + " is diagonal (size " + std::to_string(size) +
                  "), so an entry needs i = j, got (" + std::to_string(i) + ", " + std::to_string(j) + ")",
              t[2].column);
    const double value = in.real(t[4], "entry value");
    if (i > j) std::swap(i, j);  // the same symmetric entry
    const auto key = std::make_tuple(static_cast<std::int32_t>(mat), static_cast<std::int32_t>(blk - 1),
                                     static_cast<std::int32_t>(i - 1), static_cast<std::int32_t>(j - 1));
    const auto [it, fresh] = seen.emplace(key, in.line());
    if (!fresh)
      in.fail("duplicate entry: matrix " + std::to_string(mat) + ", block " + std::to_string(blk) + ", (" +
                  std::to_string(i) + ", " + std::to_string(j) + ") was given on line " + std::to_string(it->second),
              t[0].column);
    if (value == 0.0) continue;
    p.entries.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), value, in.line()});
  }
  return p;
}

SdpaProblem read_sdpa(const std::filesystem::path& file) {
  return read_sdpa(*detail::open_input(file), file.string());
}

void write_sdpa(const std::filesystem::path& file, const SdpaProblem& p, const std::string& comment) {
  write_atomically(file, [&](std::ostream& os) {
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);) os << '"' << line << '\n';
    os << p.m << " = mDIM\n" << p.blocks.size() << " = nBLOCK\n";
    for (std::size_t b = 0; b < p.blocks.size(); ++b) os << (b ? " " : "") << p.blocks[b];
    os << " = bLOCKsTRUCT\n";
    char buf[64];
    for (Index i = 0; i < p.c.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%.17g", p.c[i]);
      os << (i ? " " : "") << buf;
    }
    os << '\n';
    for (const SdpaEntry& e : p.entries) {
      std::snprintf(buf, sizeof buf, "%.17g", e.value);
      os << e.matrix << ' ' << e.block + 1 << ' ' << e.row + 1 << ' ' << e.col + 1 << ' ' << buf << '\n';
    }
  });
}

}  // namespace sdprl::io
