// LIBSVM sparse and dense labelled text files (see sdprl/io/libsvm.h). Every parse error names
// file:line:column and says what was expected and what was found.
#include "sdprl/io/libsvm.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "io/compressed_input.h"
#include "io/fields.h"
#include "sdprl/error.h"
#include "number_parsing.h"

namespace sdprl::io {
namespace {

using namespace detail;  // LineInput, Field and the number parsing

// The whitespace-separated tokens of `line` up to a '#' comment.
void split_fields(std::string_view line, std::vector<Field>& fields) {
  fields.clear();
  const std::size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  append_fields(line, is_space, fields);
}

// A finite real number; `what` names it in messages ("label", "value").
double finite_value(const LineInput& in, std::string_view text, long column, const char* what) {
  double v = 0.0;
  const ParseStatus s = parse_double(text, v);
  if (s == ParseStatus::out_of_range) {
    in.fail(std::string(what) + " " + quote(text) + " is out of the range of a double", column);
  }
  if (s != ParseStatus::ok) {
    in.fail(std::string("expected a real ") + what + ", got " + quote(text), column);
  }
  if (!std::isfinite(v)) in.fail(std::string(what) + " is NaN/Inf, got " + quote(text), column);
  if (const std::string problem = scale_problem(v, text); !problem.empty()) in.fail(problem, column);
  return v;
}

// The largest dense matrix a reader builds, in bytes: $SDPRL_MAX_DENSE_MB when set, else half the
// physical memory. A bogus index ("1 123456789012:1") must be refused with its place rather than
// make the program allocate and touch more memory than the machine has.
std::uint64_t dense_limit_bytes() {
  if (const char* env = std::getenv("SDPRL_MAX_DENSE_MB")) {
    std::int64_t mb = 0;
    if (parse_int(env, mb) != ParseStatus::ok || mb < 1 || mb > (std::int64_t{1} << 40)) {
      throw Error("SDPRL_MAX_DENSE_MB", "expected a whole number of megabytes >= 1, got " +
                                            quote(env));
    }
    return static_cast<std::uint64_t>(mb) << 20;
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2;
}

std::string megabytes(long double bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.0Lf MB", bytes / (1 << 20));
  return text;
}

// The dense n x d matrix, or an Error when it is larger than dense_limit_bytes() or cannot be
// allocated. `where_d` is the place that set d: the largest index (file:line:column), or the file
// when d was declared.
Matrix allocate(const std::string& path, const std::string& where_d, Index n, Index d) {
  const long double bytes = static_cast<long double>(n) * static_cast<long double>(d) * sizeof(double);
  const std::uint64_t limit = dense_limit_bytes();
  if (bytes > static_cast<long double>(limit)) {
    throw Error(where_d, std::to_string(d) + " features make the dense " + std::to_string(n) +
                             " x " + std::to_string(d) + " matrix " + megabytes(bytes) +
                             ", more than the limit of " + megabytes(limit) +
                             " (half the memory; SDPRL_MAX_DENSE_MB sets it): expected feature "
                             "indices up to the data set's dimension");
  }
  try {
    return Matrix::Zero(n, d);
  } catch (const std::bad_alloc&) {
    throw Error(path, "cannot allocate a dense " + std::to_string(n) + " x " + std::to_string(d) +
                          " matrix");
  }
}

struct Entry {
  Index column = 0;  // 0-based feature
  double value = 0.0;
};

void check_features(const std::string& name, Index features) {
  if (features < 0) {
    throw Error(name, "the declared number of features must be >= 0 (0: the largest "
                      "index seen), got " + std::to_string(features));
  }
}

}  // namespace

LabeledData read_libsvm(std::istream& stream, const std::string& name, Index features) {
  check_features(name, features);
  LineInput in(stream, name);
  std::vector<double> labels;
  std::vector<Entry> entries;        // all rows, concatenated
  std::vector<std::size_t> row_end;  // entries of row i: [row_end[i-1], row_end[i])
  std::int64_t max_index = 0;
  std::string max_index_where;  // file:line:column of the largest index
  std::string line;
  std::vector<Field> fields;
  while (in.next(line)) {
    split_fields(line, fields);
    if (fields.empty()) continue;
    labels.push_back(finite_value(in, fields[0].text, fields[0].column, "label"));
    std::int64_t previous = 0;
    for (std::size_t k = 1; k < fields.size(); ++k) {
      const Field& f = fields[k];
      const std::size_t colon = f.text.find(':');
      if (colon == std::string_view::npos) {
        in.fail("expected 'index:value', got " + quote(f.text), f.column);
      }
      const std::string_view index_text = f.text.substr(0, colon);
      const std::string_view value_text = f.text.substr(colon + 1);
      const long value_column = f.column + static_cast<long>(colon) + 1;
      std::int64_t index = 0;
      const ParseStatus s = parse_int(index_text, index);
      if (s == ParseStatus::out_of_range) {
        in.fail("index " + quote(index_text) + " is too large", f.column);
      }
      if (s != ParseStatus::ok) {
        in.fail("expected an integer index in 'index:value', got " + quote(f.text), f.column);
      }
      if (index < 1) {
        in.fail("indices are 1-based: expected an index >= 1, got " + std::to_string(index),
                f.column);
      }
      if (index <= previous) {
        in.fail("indices must be strictly increasing: expected an index > " +
                    std::to_string(previous) + ", got " + std::to_string(index),
                f.column);
      }
      if (features > 0 && index > features) {
        in.fail("index " + std::to_string(index) + " exceeds the declared " +
                    std::to_string(features) + " features",
                f.column);
      }
      if (value_text.empty()) {
        in.fail("expected a value after ':' in 'index:value', got " + quote(f.text),
                value_column);
      }
      const double value = finite_value(in, value_text, value_column, "value");
      previous = index;
      if (index > max_index) {
        max_index = index;
        max_index_where = format_location(in.path(), in.line(), f.column);
      }
      entries.push_back({static_cast<Index>(index - 1), value});
    }
    row_end.push_back(entries.size());
  }
  if (labels.empty()) {
    throw Error(in.path(), "expected at least one sample line 'label index:value ...', the "
                               "file has none");
  }
  const Index n = static_cast<Index>(labels.size());
  const Index d = features > 0 ? features : static_cast<Index>(max_index);
  LabeledData data;
  data.samples = allocate(in.path(), features > 0 ? in.path() : max_index_where, n, d);
  std::size_t k = 0;
  for (Index i = 0; i < n; ++i) {
    for (; k < row_end[static_cast<std::size_t>(i)]; ++k) {
      data.samples(i, entries[k].column) = entries[k].value;
    }
  }
  data.labels = std::move(labels);
  return data;
}

LabeledData read_libsvm(const std::filesystem::path& file, Index features) {
  return read_libsvm(*detail::open_input(file), file.string(), features);
}

LabeledData read_dense_labeled(std::istream& stream, const std::string& name) {
  LineInput in(stream, name);
  std::vector<double> labels;
  std::vector<double> values;  // row-major, d per row
  std::size_t d = 0;
  long first_line = 0;
  std::string line;
  std::vector<Field> fields;
  while (in.next(line)) {
    split_fields(line, fields);
    if (fields.empty()) continue;
    if (first_line == 0) {
      if (fields.size() < 2) {
        in.fail("expected 'label v1 v2 ... vd' with at least one value, got only " +
                quote(fields[0].text));
      }
      first_line = in.line();
      d = fields.size() - 1;
    } else if (fields.size() - 1 != d) {
      in.fail("expected " + std::to_string(d) + " values after the label (as on line " +
                  std::to_string(first_line) + "), got " + std::to_string(fields.size() - 1),
              fields.size() - 1 > d ? fields[d + 1].column : 0);
    }
    labels.push_back(finite_value(in, fields[0].text, fields[0].column, "label"));
    for (std::size_t k = 1; k < fields.size(); ++k) {
      values.push_back(finite_value(in, fields[k].text, fields[k].column, "value"));
    }
  }
  if (labels.empty()) {
    throw Error(in.path(), "expected at least one sample line 'label v1 v2 ... vd', the file "
                               "has none");
  }
  LabeledData data;
  const Index n = static_cast<Index>(labels.size());
  data.samples = Eigen::Map<const Matrix>(values.data(), n, static_cast<Index>(d));
  data.labels = std::move(labels);
  return data;
}

LabeledData read_dense_labeled(const std::filesystem::path& file) {
  return read_dense_labeled(*detail::open_input(file), file.string());
}

}  // namespace sdprl::io
