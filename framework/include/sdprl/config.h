// ConfigTable: typed, located reading of one table of a TOML model file (toml++ underneath, hidden).
//
// Every read names its key; a wrong type or a value that breaks its rule throws sdprl::Error with
// where = "model.toml:12:9" and message = "solver.admm.rho: expected a number > 0, got -1".
// Keys that were never read are reported by check_unknown_keys() with the nearest valid name, so a
// typo never silently falls back to a default.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sdprl/export.h"

namespace sdprl {

// A rule for a number: lo < x (or <=) and x < hi (or <=). Its description ("> 0", "in [0, 1]")
// goes into the error message.
struct SDPRL_API NumberRule {
  double lo = -1.0 / 0.0;
  double hi = 1.0 / 0.0;
  bool lo_inclusive = true;
  bool hi_inclusive = true;

  bool accepts(double x) const;
  std::string describe() const;  // e.g. "a number > 0"

  static NumberRule any() { return {}; }
  static NumberRule positive() { return {0.0, 1.0 / 0.0, false, true}; }
  static NumberRule non_negative() { return {0.0, 1.0 / 0.0, true, true}; }
  static NumberRule at_least(double lo) { return {lo, 1.0 / 0.0, true, true}; }
  static NumberRule closed(double lo, double hi) { return {lo, hi, true, true}; }
  static NumberRule open(double lo, double hi) { return {lo, hi, false, false}; }
  static NumberRule half_open(double lo, double hi) { return {lo, hi, false, true}; }  // (lo, hi]
};

class SDPRL_API ConfigTable {
 public:
  ConfigTable();  // an empty table with no source
  ~ConfigTable();
  ConfigTable(const ConfigTable&);
  ConfigTable& operator=(const ConfigTable&);

  // Parses a TOML file; a syntax error throws Error with its line and column.
  static ConfigTable parse_file(const std::filesystem::path& file);
  // Parses TOML text; `source_name` stands for the file in messages.
  static ConfigTable parse_string(std::string_view text, const std::string& source_name);

  // Sets a dotted key (e.g. "solver.admm.rho") to a value given as TOML text ("2.5", "\"l1\"",
  // "[0.1, 1]"); text that is not a TOML value is taken as a string (so --set loss.type=l1 works).
  // Intermediate tables are created. Messages about the key then point at "--set KEY".
  void set(std::string_view dotted_key, std::string_view value_text);

  // The dotted path of this table ("" for the root, "solver.admm" for a sub-table).
  const std::string& path() const;
  // The file the table came from.
  const std::string& source_file() const;
  // The directory that relative data paths are resolved against (the file's directory).
  std::filesystem::path base_directory() const;

  bool contains(std::string_view key) const;
  bool is_table(std::string_view key) const;
  bool is_array(std::string_view key) const;
  bool is_string(std::string_view key) const;
  // Keys present in this table, in file order.
  std::vector<std::string> keys() const;

  // A sub-table (a [section] or an inline table). Absent: an empty table, so that every read
  // falls back to its default. Present but not a table: Error.
  ConfigTable table(std::string_view key) const;

  // Typed reads with a default for an absent key. Wrong type or rule: Error.
  double number(std::string_view key, double fallback, const NumberRule& rule = {}) const;
  std::int64_t integer(std::string_view key, std::int64_t fallback, const NumberRule& rule = {}) const;
  bool boolean(std::string_view key, bool fallback) const;
  // `choices` non-empty: the value must be one of them.
  std::string string(std::string_view key, const std::string& fallback,
                     const std::vector<std::string>& choices = {}) const;
  // A number or an array of numbers (e.g. a lambda grid). Absent: `fallback`.
  std::vector<double> numbers(std::string_view key, const std::vector<double>& fallback,
                              const NumberRule& rule = {}) const;
  // A file name, resolved against base_directory(). Absent: nullopt.
  std::optional<std::filesystem::path> file(std::string_view key) const;
  // A file name as above; absent: `fallback` resolved against base_directory() (a data file that
  // ships beside the model), which must then exist (Error naming the key and the default).
  std::filesystem::path file(std::string_view key, const std::filesystem::path& fallback) const;

  // Required forms: absent throws Error "missing required key".
  double require_number(std::string_view key, const NumberRule& rule = {}) const;
  std::string require_string(std::string_view key, const std::vector<std::string>& choices = {}) const;

  // "file:line:column" of the key's value (of the table when key is empty or absent).
  std::string where(std::string_view key = {}) const;
  // Throws Error at the key's location with message "<path.key>: <message>".
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

  // Throws Error for the first key (in this table and every sub-table read through it) that was
  // never read: "unknown key 'rnak' in [solver]; did you mean 'rank'?".
  void check_unknown_keys() const;
  // Marks a key (and everything below it) as read without reading it, e.g. a table handed to a
  // component that validates it separately.
  void mark_used(std::string_view key) const;

 private:
  struct Impl;
  explicit ConfigTable(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// The edit distance between two strings (for "did you mean" suggestions).
SDPRL_API std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace sdprl
