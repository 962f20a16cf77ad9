// MatrixMarket coordinate/array files and CSV triplets. Every parse error names file:line[:column]
// and says what was expected and what was found.
#include "sdprl/io/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <istream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "io/compressed_input.h"
#include "io/fields.h"
#include "number_parsing.h"
#include "sdprl/error.h"
#include "sdprl/io/atomic_file.h"

namespace sdprl::io {
namespace {

using namespace detail;  // LineInput, Field and the number parsing

constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int64_t>::max() - 1;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s, long* offset = nullptr) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  if (offset) *offset = static_cast<long>(b);
  return s.substr(b, e - b);
}

std::vector<Field> split_whitespace(std::string_view line) {
  std::vector<Field> fields;
  append_fields(line, is_space, fields);
  return fields;
}

// Fields separated by ',', each trimmed; the column is that of the trimmed field (or of the
// position where it would start when empty).
std::vector<Field> split_csv(std::string_view line) {
  std::vector<Field> fields;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    long offset = 0;
    std::string_view f = trim(line.substr(start, end - start), &offset);
    fields.push_back({f, static_cast<long>(start) + offset + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

// Next line that is neither blank nor a '%' comment; false at the end of the file.
bool next_data_line(LineInput& reader, std::string& line) {
  while (reader.next(line)) {
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    return true;
  }
  return false;
}

struct Banner {
  std::string format, field, symmetry;
};

// Reads and checks the banner line "%%MatrixMarket matrix <format> <field> <symmetry>".
Banner read_banner(LineInput& reader, std::string_view expected_format,
                   const std::string& example) {
  std::string line;
  if (!reader.next(line)) {
    throw Error(reader.path(), "file is empty, expected banner '" + example + "'");
  }
  std::vector<Field> f = split_whitespace(line);
  if (f.empty() || lower(f[0].text) != "%%matrixmarket") {
    reader.fail("expected banner '" + example + "' on the first line, got " + quote(line));
  }
  if (f.size() != 5) {
    reader.fail("expected 5 fields in banner '" + example + "', got " + std::to_string(f.size()));
  }
  if (lower(f[1].text) != "matrix") {
    reader.fail("unsupported MatrixMarket object " + quote(f[1].text) + " (expected matrix)",
                f[1].column);
  }
  Banner b{lower(f[2].text), lower(f[3].text), lower(f[4].text)};
  if (b.format != expected_format) {
    reader.fail("unsupported MatrixMarket format " + quote(f[2].text) + " (expected " +
                    std::string(expected_format) + ")",
                f[2].column);
  }
  if (expected_format == "coordinate") {
    if (b.field != "real" && b.field != "integer" && b.field != "pattern") {
      reader.fail("unsupported MatrixMarket field " + quote(f[3].text) +
                      " (expected real, integer or pattern)",
                  f[3].column);
    }
    if (b.symmetry != "general" && b.symmetry != "symmetric") {
      reader.fail("unsupported MatrixMarket symmetry " + quote(f[4].text) +
                      " (expected general or symmetric)",
                  f[4].column);
    }
  } else {
    if (b.field != "real" && b.field != "integer") {
      reader.fail("unsupported MatrixMarket field " + quote(f[3].text) +
                      " (expected real or integer)",
                  f[3].column);
    }
    if (b.symmetry != "general") {
      reader.fail("unsupported MatrixMarket symmetry " + quote(f[4].text) + " (expected general)",
                  f[4].column);
    }
  }
  return b;
}

// A non-negative integer of a size line.
std::int64_t size_value(const LineInput& reader, const Field& f, const char* what) {
  std::int64_t v = 0;
  ParseStatus s = parse_int(f.text, v);
  if (s == ParseStatus::out_of_range) {
    reader.fail(std::string(what) + " " + quote(f.text) + " is too large", f.column);
  }
  if (s != ParseStatus::ok) {
    reader.fail(std::string("expected an integer ") + what + ", got " + quote(f.text), f.column);
  }
  if (v < 0) reader.fail(std::string(what) + " must be >= 0, got " + std::to_string(v), f.column);
  return v;
}

// An index of a row/column field: an integer in [lo, hi].
std::int64_t index_value(const LineInput& reader, const Field& f, const char* what,
                         std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  ParseStatus s = parse_int(f.text, v);
  if (s == ParseStatus::invalid) {
    reader.fail(std::string("expected an integer ") + what + " index, got " + quote(f.text),
                f.column);
  }
  if (s == ParseStatus::out_of_range || v < lo || v > hi) {
    reader.fail(std::string(what) + " index " + std::string(f.text) + " out of range [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]",
                f.column);
  }
  return v;
}

// An index that only has a lower bound (CSV).
std::int64_t index_at_least(const LineInput& reader, const Field& f, const char* what,
                            std::int64_t base) {
  std::int64_t v = 0;
  ParseStatus s = parse_int(f.text, v);
  if (s == ParseStatus::invalid) {
    reader.fail(std::string("expected an integer ") + what + " index, got " + quote(f.text),
                f.column);
  }
  if (s == ParseStatus::out_of_range || v > kMaxIndex) {
    reader.fail(std::string(what) + " index " + quote(f.text) + " is too large", f.column);
  }
  if (v < base) {
    reader.fail(std::string(what) + " index " + std::to_string(v) + " is below the index base " +
                    std::to_string(base) + " (expected >= " + std::to_string(base) + ")",
                f.column);
  }
  return v;
}

// A finite real value. With `integer`, the token must be an integer. With `data`, also within
// kLargestDataValue (an array is also read as a starting factor, which the solver checks itself).
double real_value(const LineInput& reader, const Field& f, bool integer, bool data = true) {
  if (integer) {
    std::int64_t v = 0;
    ParseStatus s = parse_int(f.text, v);
    if (s == ParseStatus::out_of_range) {
      reader.fail("value " + quote(f.text) + " is out of the range of a 64-bit integer", f.column);
    }
    if (s != ParseStatus::ok) {
      reader.fail("expected an integer value, got " + quote(f.text), f.column);
    }
    return static_cast<double>(v);
  }
  double v = 0.0;
  ParseStatus s = parse_double(f.text, v);
  if (s == ParseStatus::out_of_range) {
    reader.fail("value " + quote(f.text) + " is out of the range of a double", f.column);
  }
  if (s != ParseStatus::ok) reader.fail("expected a real value, got " + quote(f.text), f.column);
  if (!std::isfinite(v)) reader.fail("value is NaN/Inf, got " + quote(f.text), f.column);
  if (const std::string problem = data ? scale_problem(v, f.text) : std::string(); !problem.empty())
    reader.fail(problem, f.column);
  return v;
}

std::string count_of(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

CoordinateMatrix read_matrix_market_coordinate(std::istream& in, const std::string& name) {
  LineInput reader(in, name);
  static const std::string example = "%%MatrixMarket matrix coordinate real general";
  const Banner banner = read_banner(reader, "coordinate", example);
  const bool pattern = banner.field == "pattern";
  const bool integer = banner.field == "integer";

  CoordinateMatrix m;
  m.symmetric = banner.symmetry == "symmetric";

  std::string line;
  if (!next_data_line(reader, line)) {
    reader.fail("expected size line 'rows cols nnz', file ends after the header");
  }
  {
    std::vector<Field> f = split_whitespace(line);
    if (f.size() != 3) {
      reader.fail("expected 3 fields in size line 'rows cols nnz', got " +
                  std::to_string(f.size()));
    }
    m.rows = size_value(reader, f[0], "row count");
    m.cols = size_value(reader, f[1], "column count");
    const std::int64_t nnz = size_value(reader, f[2], "entry count");
    if (m.symmetric && m.rows != m.cols) {
      reader.fail("a symmetric matrix must be square, got " + std::to_string(m.rows) + " x " +
                  std::to_string(m.cols));
    }
    m.entries.reserve(static_cast<std::size_t>(std::min<std::int64_t>(nnz, 1 << 20)));

    const std::size_t nfields = pattern ? 2 : 3;
    const char* layout = pattern ? "'row col'" : "'row col value'";
    std::int64_t count = 0;
    while (next_data_line(reader, line)) {
      std::vector<Field> e = split_whitespace(line);
      if (count == nnz) {
        reader.fail("expected " + count_of(nnz, "entry", "entries") +
                    " (from the size line), found more");
      }
      if (e.size() != nfields) {
        reader.fail("expected " + std::to_string(nfields) + " fields " + layout + ", got " +
                        std::to_string(e.size()),
                    e.size() > nfields ? e[nfields].column : 0);
      }
      Triplet t;
      t.row = index_value(reader, e[0], "row", 1, m.rows) - 1;
      t.col = index_value(reader, e[1], "column", 1, m.cols) - 1;
      t.value = pattern ? 1.0 : real_value(reader, e[2], integer);
      t.line = reader.line();
      if (m.symmetric && t.row < t.col) {
        reader.fail("entry (" + std::to_string(t.row + 1) + ", " + std::to_string(t.col + 1) +
                    ") is above the diagonal; a symmetric file must list only the lower "
                    "triangle (row >= col)");
      }
      m.entries.push_back(t);
      ++count;
    }
    if (count < nnz) {
      reader.fail("expected " + count_of(nnz, "entry", "entries") + ", file ends after " +
                  std::to_string(count));
    }
  }
  return m;
}

CoordinateMatrix read_matrix_market_coordinate(const std::filesystem::path& file) {
  return read_matrix_market_coordinate(*detail::open_input(file), file.string());
}

Matrix read_matrix_market_array(std::istream& in, const std::string& name) {
  LineInput reader(in, name);
  static const std::string example = "%%MatrixMarket matrix array real general";
  const Banner banner = read_banner(reader, "array", example);
  const bool integer = banner.field == "integer";

  std::string line;
  if (!next_data_line(reader, line)) {
    reader.fail("expected size line 'rows cols', file ends after the header");
  }
  std::vector<Field> f = split_whitespace(line);
  if (f.size() != 2) {
    reader.fail("expected 2 fields in size line 'rows cols', got " + std::to_string(f.size()));
  }
  const std::int64_t rows = size_value(reader, f[0], "row count");
  const std::int64_t cols = size_value(reader, f[1], "column count");
  // 0 x N holds no value, so nothing in the file bounds N; a loop over its columns would not end.
  if ((rows == 0) != (cols == 0)) {
    reader.fail("expected an empty matrix to be 0 x 0, got " + std::to_string(rows) + " x " +
                std::to_string(cols));
  }
  if (rows > 0 && cols > std::numeric_limits<std::int64_t>::max() / rows) {
    reader.fail("matrix size " + std::to_string(rows) + " x " + std::to_string(cols) +
                " is too large");
  }
  const std::int64_t total = rows * cols;

  // Values are collected first so that a corrupt size line cannot trigger a huge allocation.
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(std::min<std::int64_t>(total, 1 << 20)));
  while (next_data_line(reader, line)) {
    std::vector<Field> v = split_whitespace(line);
    if (static_cast<std::int64_t>(values.size()) == total) {
      reader.fail("expected " + count_of(total, "value", "values") + " (from the size line " +
                  std::to_string(rows) + " x " + std::to_string(cols) + "), found more");
    }
    if (v.size() != 1) {
      reader.fail("expected 1 field 'value' per line, got " + std::to_string(v.size()),
                  v[1].column);
    }
    values.push_back(real_value(reader, v[0], integer, false));
  }
  if (static_cast<std::int64_t>(values.size()) < total) {
    reader.fail("expected " + count_of(total, "value", "values") + ", file ends after " +
                std::to_string(values.size()));
  }

  Matrix X(static_cast<Index>(rows), static_cast<Index>(cols));
  std::size_t k = 0;
  for (Index j = 0; j < X.cols(); ++j) {
    for (Index i = 0; i < X.rows(); ++i) X(i, j) = values[k++];
  }
  return X;
}

Matrix read_matrix_market_array(const std::filesystem::path& file) {
  return read_matrix_market_array(*detail::open_input(file), file.string());
}

namespace {

void check_index_base(const std::string& name, int index_base) {
  if (index_base != 0 && index_base != 1) {
    throw Error(name, "index base must be 0 or 1, got " + std::to_string(index_base));
  }
}

}  // namespace

void check_writable_values(const std::filesystem::path& file, const Matrix& X) {
  for (Index j = 0; j < X.cols(); ++j) {
    for (Index i = 0; i < X.rows(); ++i) {
      if (!std::isfinite(X(i, j))) {
        throw Error(file.string(), "cannot write: value at (" + std::to_string(i + 1) + ", " +
                                       std::to_string(j + 1) + ") is NaN/Inf");
      }
    }
  }
}

void write_matrix_market_array(const std::filesystem::path& file, const Matrix& X,
                               const std::string& comment) {
  check_writable_values(file, X);
  write_atomically(file, [&](std::ostream& out) { write_matrix_market_array(out, X, comment); });
}

void write_matrix_market_array(std::ostream& out, const Matrix& X, const std::string& comment) {
  {
    out << "%%MatrixMarket matrix array real general\n";
    if (!comment.empty()) {
      std::string_view rest = comment;
      if (rest.back() == '\n') rest.remove_suffix(1);
      while (true) {
        std::size_t nl = rest.find('\n');
        std::string_view piece = rest.substr(0, nl);
        if (!piece.empty() && piece.back() == '\r') piece.remove_suffix(1);
        out << '%';
        if (!piece.empty()) out << ' ' << piece;
        out << '\n';
        if (nl == std::string_view::npos) break;
        rest.remove_prefix(nl + 1);
      }
    }
    out << X.rows() << ' ' << X.cols() << '\n';
    std::string buffer;
    buffer.reserve(1 << 16);
    char number[64];
    for (Index j = 0; j < X.cols(); ++j) {
      for (Index i = 0; i < X.rows(); ++i) {
        // The shortest digits that read back as the same double, independent of the locale (and
        // cheaper than to_chars at a fixed 17 digits: mcp250-1's X, 5500 values, 4.6M -> 3.7M
        // instructions).
        auto r = std::to_chars(number, number + sizeof number, X(i, j));
        buffer.append(number, r.ptr);
        buffer.push_back('\n');
        if (buffer.size() >= (1 << 16) - 64) {
          out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
          buffer.clear();
        }
      }
    }
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  }
}

CoordinateMatrix read_csv_triplets(std::istream& in, const std::string& name, int index_base) {
  check_index_base(name, index_base);
  LineInput reader(in, name);
  CoordinateMatrix m;
  std::int64_t max_row = -1, max_col = -1;
  bool first = true;
  std::string line;
  while (reader.next(line)) {
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    std::vector<Field> f = split_csv(line);
    if (first) {
      first = false;
      // A header: no field is a number (or even starts like one). Only the first field was looked
      // at before, and "l,2,3.0", a typo for "1,2,3.0", vanished as a header without a word.
      bool header = true;
      for (const Field& field : f) {
        const std::string_view h = field.text;
        double ignored = 0.0;
        const bool numeric_start =
            !h.empty() && (std::isdigit(static_cast<unsigned char>(h[0])) || h[0] == '+' ||
                           h[0] == '-' || h[0] == '.');
        if (parse_double(h, ignored) == ParseStatus::ok || numeric_start) header = false;
      }
      if (header) continue;
    }
    if (f.size() != 3) {
      reader.fail("expected 3 fields 'row,col,value', got " + std::to_string(f.size()),
                  f.size() > 3 ? f[3].column : 0);
    }
    Triplet tr;
    tr.row = index_at_least(reader, f[0], "row", index_base) - index_base;
    tr.col = index_at_least(reader, f[1], "column", index_base) - index_base;
    tr.value = real_value(reader, f[2], false);
    tr.line = reader.line();
    max_row = std::max(max_row, tr.row);
    max_col = std::max(max_col, tr.col);
    m.entries.push_back(tr);
  }
  m.rows = max_row + 1;
  m.cols = max_col + 1;
  return m;
}

CoordinateMatrix read_csv_triplets(const std::filesystem::path& file, int index_base) {
  return read_csv_triplets(*detail::open_input(file), file.string(), index_base);
}

}  // namespace sdprl::io
