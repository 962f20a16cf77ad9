// ConfigTable on top of toml++: typed reads with locations, --set overrides and unknown-key checks.
//
// One Document holds the parsed tree and the record of which keys were read; every ConfigTable
// (the root, its sub-tables and all copies) points into it. A sub-table stores only its path and
// looks its node up from the root on every access, so a table taken before set() creates or
// replaces it still sees the current tree and never holds a dangling pointer.
#include "sdprl/config.h"

#include "config/number_text.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include <toml++/toml.h>

#include "sdprl/error.h"

namespace sdprl {

namespace detail {

std::string format_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

std::string rule_bounds(const NumberRule& rule, std::string (*format)(double)) {
  const bool has_lo = !(std::isinf(rule.lo) && rule.lo < 0);
  const bool has_hi = !(std::isinf(rule.hi) && rule.hi > 0);
  if (has_lo && has_hi) {
    return std::string(" in ") + (rule.lo_inclusive ? "[" : "(") + format(rule.lo) + ", " +
           format(rule.hi) + (rule.hi_inclusive ? "]" : ")");
  }
  if (has_lo) return (rule.lo_inclusive ? " >= " : " > ") + format(rule.lo);
  if (has_hi) return (rule.hi_inclusive ? " <= " : " < ") + format(rule.hi);
  return {};
}

}  // namespace detail

namespace {

using detail::format_number;
using detail::rule_bounds;


using Components = std::vector<std::string>;

// Values given on the command line carry this prefix as their source path; they have no useful
// line or column (those would point into the synthetic "v = ..." document).
constexpr std::string_view kSetPrefix = "--set ";

struct Document {
  toml::table root;
  std::string source_file;
  std::filesystem::path base_directory;
  // The keys read in each table (keyed by the table's path), whether present or not: the valid
  // names that check_unknown_keys() suggests from.
  std::map<Components, std::set<std::string>> queried;
  // Keys given to mark_used(): the key and everything below it count as read.
  std::set<Components> used_subtrees;
  // Intermediate tables created by set(): the "--set KEY" that created them, for where().
  std::map<Components, std::string> set_tables;
};

std::string join(const Components& components) {
  std::string out;
  for (const std::string& c : components) {
    if (!out.empty()) out += '.';
    out += c;
  }
  return out;
}

Components child(Components components, std::string_view key) {
  components.emplace_back(key);
  return components;
}

std::filesystem::path current_directory() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::current_path(ec);
  return ec ? std::filesystem::path(".") : dir;
}

const toml::table* resolve(const toml::table& root, const Components& components) {
  const toml::table* table = &root;
  for (const std::string& key : components) {
    const toml::node* node = table->get(key);
    if (node == nullptr) return nullptr;
    table = node->as_table();
    if (table == nullptr) return nullptr;
  }
  return table;
}

// "file:line:column" of a parsed region; "--set KEY" for command-line values; "" when unknown.
std::string location_of(const toml::source_region& source) {
  if (!source.path) return {};
  const std::string& file = *source.path;
  if (file.compare(0, kSetPrefix.size(), kSetPrefix) == 0) return file;
  return format_location(file, static_cast<long>(source.begin.line),
                         static_cast<long>(source.begin.column));
}

bool from_file(const toml::source_region& source) {
  return source.path && source.path->compare(0, kSetPrefix.size(), kSetPrefix) != 0;
}

// The keys of a table in file order. toml++ keeps them sorted by name, so they are re-sorted by
// position; keys added by set() (no file position) follow, by name.
std::vector<std::pair<const toml::key*, const toml::node*>> ordered_entries(
    const toml::table& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (auto&& [key, node] : table) entries.emplace_back(&key, &node);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const toml::source_region& sa = a.first->source();
    const toml::source_region& sb = b.first->source();
    const bool fa = from_file(sa);
    const bool fb = from_file(sb);
    if (fa != fb) return fa;
    if (!fa) return false;
    if (sa.begin.line != sb.begin.line) return sa.begin.line < sb.begin.line;
    return sa.begin.column < sb.begin.column;
  });
  return entries;
}

const char* type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// The value of a numeric node as the file spells it: a float keeps a decimal point ("3.0"), so
// that "expected an integer, got 3.0" does not read as a contradiction.
std::string format_value(const toml::node& node) {
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* f = node.as_floating_point()) {
    std::string text = format_number(f->get());
    if (text.find_first_of(".eni") == std::string::npos) text += ".0";
    return text;
  }
  return type_name(node);
}

// A TOML basic string holding `text` verbatim (for --set values that are not TOML values).
std::string quote_toml(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(u));
      out += escape;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// toml++ parses a dotted key or a table header recursively, a stack frame per part: a header of
// 40000 parts overflowed the stack (a segfault), and --set with a 10000-part key took 8 s and
// 1.8 GB. No model needs more than a few parts; more than kMaxKeyParts are refused before parsing,
// with the line. A line is a key line when it starts with '[' (up to the closing ']') or holds an
// '=' (the text before it); dots inside quotes and after a '#' do not count, and lines inside a
// multi-line string are skipped.
constexpr long kMaxKeyParts = 64;

void check_key_depth(std::string_view text, const std::string& source) {
  bool in_multiline = false;
  long line = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view l = text.substr(start, end - start);
    ++line;
    start = end + 1;
    // A line with an odd number of triple quotes opens or closes a multi-line string.
    long triples = 0;
    for (std::size_t i = 0; i + 2 < l.size(); ++i)
      if ((l[i] == '"' || l[i] == '\'') && l[i + 1] == l[i] && l[i + 2] == l[i]) {
        ++triples;
        i += 2;
      }
    const bool skip = in_multiline;
    if (triples % 2 == 1) in_multiline = !in_multiline;
    if (skip) continue;
    std::size_t i = l.find_first_not_of(" \t");
    if (i == std::string_view::npos) continue;
    const long column = static_cast<long>(i) + 1;
    const bool header = l[i] == '[';
    long dots = 0;
    char quote = 0;
    for (; i < l.size(); ++i) {
      const char c = l[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      else if (c == '#' || (header && c == ']' && (i + 1 >= l.size() || l[i + 1] != ']')) || (!header && c == '=')) break;
      else if (c == '.') ++dots;
    }
    if (!header && (i >= l.size() || l[i] != '=')) continue;  // not a key line
    if (dots >= kMaxKeyParts)
      throw Error(format_location(source, line, column), "a key of " + std::to_string(dots + 1) + " dotted parts; expected at most " +
                                                     std::to_string(kMaxKeyParts) + " (sdprl's deepest is 4, e.g. solver.admm.rho)");
    if (start > text.size()) break;
  }
}

// Splits "solver.admm.rho" into its keys (no quoting: command-line keys are bare TOML keys).
Components split_dotted(std::string_view dotted, const std::string& where) {
  if (std::count(dotted.begin(), dotted.end(), '.') >= kMaxKeyParts)
    throw Error(where.substr(0, 200), "a key of more than " + std::to_string(kMaxKeyParts) +
                                          " dotted parts; sdprl's deepest is 4 (e.g. solver.admm.rho)");
  Components keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    std::string_view part = dotted.substr(start, dot == std::string_view::npos ? dotted.npos
                                                                                : dot - start);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
    if (part.empty()) throw Error(where, "invalid key '" + std::string(dotted) + "'");
    keys.emplace_back(part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return keys;
}

Error parse_failure(const toml::parse_error& error, const std::string& source_name) {
  const toml::source_region& source = error.source();
  return Error(format_location(source_name, static_cast<long>(source.begin.line),
                               static_cast<long>(source.begin.column)),
               std::string(error.description()));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// NumberRule

bool NumberRule::accepts(double x) const {
  if (std::isnan(x)) return false;
  const bool lo_ok = lo_inclusive ? x >= lo : x > lo;
  const bool hi_ok = hi_inclusive ? x <= hi : x < hi;
  return lo_ok && hi_ok;
}

std::string NumberRule::describe() const { return "a number" + rule_bounds(*this); }

// ---------------------------------------------------------------------------------------------
// ConfigTable::Impl

struct ConfigTable::Impl {
  std::shared_ptr<Document> doc;
  Components components;  // the table's path from the root
  std::string path;       // the same, dotted

  Impl(std::shared_ptr<Document> d, Components c)
      : doc(std::move(d)), components(std::move(c)), path(join(components)) {}

  // The table's node, or null when it is absent (an empty table).
  const toml::table* node() const { return resolve(doc->root, components); }

  // The value of `key`, or null when absent.
  const toml::node* get(std::string_view key) const {
    const toml::table* table = node();
    return table == nullptr ? nullptr : table->get(key);
  }

  // Records the read, then returns the value (null when absent).
  const toml::node* read(std::string_view key) const {
    doc->queried[components].emplace(key);
    return get(key);
  }

  std::string full_key(std::string_view key) const {
    if (path.empty()) return std::string(key);
    if (key.empty()) return path;
    return path + "." + std::string(key);
  }

  std::string table_where() const {
    if (components.empty()) return doc->source_file;
    if (const toml::table* table = node()) {
      std::string where = location_of(table->source());
      if (!where.empty()) return where;
    }
    const auto it = doc->set_tables.find(components);
    return it != doc->set_tables.end() ? it->second : doc->source_file;
  }

  std::string node_where(const toml::node& node) const {
    std::string where = location_of(node.source());
    return where.empty() ? table_where() : where;
  }

  [[noreturn]] void fail_at(const toml::node& node, const std::string& label,
                            const std::string& message) const {
    throw Error(node_where(node), label + ": " + message);
  }

  [[noreturn]] void missing(std::string_view key) const {
    const std::string prefix = path.empty() ? "" : path + ": ";
    throw Error(table_where(), prefix + "missing required key '" + std::string(key) + "'");
  }

  // An integer or a floating-point value, checked against `rule`.
  double to_number(const toml::node& node, const std::string& label, const NumberRule& rule) const {
    double x = 0.0;
    if (const auto* i = node.as_integer()) {
      x = static_cast<double>(i->get());
    } else if (const auto* f = node.as_floating_point()) {
      x = f->get();
    } else {
      fail_at(node, label, "expected " + rule.describe() + ", got " + type_name(node));
    }
    // TOML has inf and nan literals; no sdprl key means one (lambda = inf passed ">= 0" and failed
    // later as a numerical error).
    if (!std::isfinite(x)) fail_at(node, label, "expected a finite " + rule.describe().substr(2) + ", got " + format_value(node));
    if (!rule.accepts(x)) {
      fail_at(node, label, "expected " + rule.describe() + ", got " + format_value(node));
    }
    return x;
  }

  std::string checked_string(const toml::node& node, const std::string& label,
                        const std::vector<std::string>& choices) const {
    const auto* s = node.as_string();
    if (s == nullptr) fail_at(node, label, std::string("expected a string, got ") + type_name(node));
    const std::string& value = s->get();
    if (choices.empty() || std::find(choices.begin(), choices.end(), value) != choices.end()) {
      return value;
    }
    std::string message = "expected one of ";
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (i > 0) message += ", ";
      message += '"' + choices[i] + '"';
    }
    fail_at(node, label, message + ", got \"" + value + "\"");
  }

  bool subtree_used(const Components& c) const {
    Components prefix;
    for (const std::string& key : c) {
      prefix.push_back(key);
      if (doc->used_subtrees.count(prefix) != 0) return true;
    }
    return false;
  }

  void check_unknown(const Components& c) const {
    if (subtree_used(c)) return;
    const toml::table* table = resolve(doc->root, c);
    if (table == nullptr) return;
    static const std::set<std::string> kNone;
    const auto q = doc->queried.find(c);
    const std::set<std::string>& read = q == doc->queried.end() ? kNone : q->second;
    for (const auto& [key, value] : ordered_entries(*table)) {
      const std::string name(key->str());
      const Components sub = child(c, name);
      if (doc->used_subtrees.count(sub) != 0) continue;
      if (read.count(name) == 0) unknown_key(c, *key, *value, read);
      // A queried key holding a table was taken with table(); its own keys must be known too.
      if (value->is_table()) check_unknown(sub);
    }
  }

  [[noreturn]] void unknown_key(const Components& c, const toml::key& key, const toml::node& value,
                                const std::set<std::string>& read) const {
    const std::string name(key.str());
    std::string message = "unknown key '" + name + "' ";
    message += c.empty() ? "at top level" : "in [" + join(c) + "]";
    // The nearest valid name, if it is near enough to be a plausible typo.
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    const std::string* best = nullptr;
    std::size_t best_distance = limit + 1;
    for (const std::string& candidate : read) {
      const std::size_t d = edit_distance(name, candidate);
      if (d < best_distance) {
        best = &candidate;
        best_distance = d;
      }
    }
    if (best != nullptr) message += "; did you mean '" + *best + "'?";
    std::string where = location_of(key.source());
    if (where.empty()) where = location_of(value.source());
    // A table that only a --set created (--set foo.bar=1) is that option's, not the file's.
    if (const auto made = doc->set_tables.find(child(c, name)); where.empty() && made != doc->set_tables.end())
      where = made->second;
    if (where.empty()) where = doc->source_file;
    throw Error(where, message);
  }
};

// ---------------------------------------------------------------------------------------------
// ConfigTable

ConfigTable::ConfigTable()
    : impl_(std::make_shared<Impl>(std::make_shared<Document>(), Components{})) {
  impl_->doc->base_directory = current_directory();
}

ConfigTable::~ConfigTable() = default;
ConfigTable::ConfigTable(const ConfigTable&) = default;
ConfigTable& ConfigTable::operator=(const ConfigTable&) = default;
ConfigTable::ConfigTable(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

ConfigTable ConfigTable::parse_file(const std::filesystem::path& file) {
  auto doc = std::make_shared<Document>();
  doc->source_file = file.string();
  // Read here rather than by toml::parse_file, whose message for a directory was a missing key
  // and for an unreadable file gave no reason.
  std::error_code dir_ec;
  if (std::filesystem::is_directory(file, dir_ec))
    throw Error(doc->source_file, "is a directory; expected a TOML model file");
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw Error(doc->source_file, std::string("cannot open the model file: ") + std::strerror(err));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(doc->source_file, std::string("cannot read the model file: ") + std::strerror(errno));
  const std::string contents = text.str();
  check_key_depth(contents, doc->source_file);
  try {
    doc->root = toml::parse(contents, doc->source_file);
  } catch (const toml::parse_error& error) {
    throw parse_failure(error, doc->source_file);
  }
  // Absolute, so that a later change of the working directory does not move the data files.
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
  doc->base_directory = (ec ? file : absolute).parent_path();
  if (doc->base_directory.empty()) doc->base_directory = current_directory();
  return ConfigTable(std::make_shared<Impl>(std::move(doc), Components{}));
}

ConfigTable ConfigTable::parse_string(std::string_view text, const std::string& source_name) {
  auto doc = std::make_shared<Document>();
  doc->source_file = source_name;
  check_key_depth(text, source_name);
  try {
    doc->root = toml::parse(text, source_name);
  } catch (const toml::parse_error& error) {
    throw parse_failure(error, source_name);
  }
  doc->base_directory = current_directory();
  return ConfigTable(std::make_shared<Impl>(std::move(doc), Components{}));
}

void ConfigTable::set(std::string_view dotted_key, std::string_view value_text) {
  // Keys are relative to this table; the location names the full path.
  const std::string relative(dotted_key);
  const std::string where = std::string(kSetPrefix) + impl_->full_key(relative);
  Components full = impl_->components;
  for (std::string& key : split_dotted(relative, where)) full.push_back(std::move(key));

  // The text is parsed as the value of a one-line document whose source path is "--set KEY", so
  // that every node of the value (also inside an inline table or array) points at the option.
  toml::table parsed;
  bool is_value = false;
  try {
    parsed = toml::parse("v = " + std::string(value_text), where);
    // "1\nw = 2" parses too, but is not a single value.
    is_value = parsed.size() == 1 && parsed.contains("v");
  } catch (const toml::parse_error&) {
  }
  // Text that reads as a number but is none TOML can hold (1e310, beyond a double) is that, not a
  // string: taken as one, it drew "expected a number, got a string".
  if (!is_value && !value_text.empty() && value_text.find_first_not_of("0123456789+-.eE_") == std::string_view::npos &&
      value_text.find_first_of("0123456789") != std::string_view::npos)
    throw Error(where, "'" + std::string(value_text) + "' looks like a number but is none TOML reads (a double holds magnitudes up to 1.8e308)");
  if (!is_value) {
    try {
      parsed = toml::parse("v = " + quote_toml(value_text), where);
    } catch (const toml::parse_error& error) {  // e.g. text that is not UTF-8
      throw Error(where, std::string(error.description()));
    }
  }

  toml::table* table = &impl_->doc->root;
  for (std::size_t i = 0; i + 1 < full.size(); ++i) {
    toml::node* node = table->get(full[i]);
    if (node == nullptr) {
      node = table->insert(full[i], toml::table{}).first->second.as_table();
      impl_->doc->set_tables[Components(full.begin(), full.begin() + i + 1)] = where;
    }
    table = node->as_table();
    if (table == nullptr) {
      throw Error(where, join(Components(full.begin(), full.begin() + i + 1)) +
                             " is not a table, so it has no key '" + full[i + 1] + "'");
    }
  }
  // An existing key keeps its toml::key (and so its place in file order); only the value changes.
  table->insert_or_assign(full.back(), std::move(*parsed.get("v")));
}

const std::string& ConfigTable::path() const { return impl_->path; }
const std::string& ConfigTable::source_file() const { return impl_->doc->source_file; }
std::filesystem::path ConfigTable::base_directory() const { return impl_->doc->base_directory; }

bool ConfigTable::contains(std::string_view key) const { return impl_->get(key) != nullptr; }

bool ConfigTable::is_table(std::string_view key) const {
  const toml::node* node = impl_->get(key);
  return node != nullptr && node->is_table();
}

bool ConfigTable::is_array(std::string_view key) const {
  const toml::node* node = impl_->get(key);
  return node != nullptr && node->is_array();
}

bool ConfigTable::is_string(std::string_view key) const {
  const toml::node* node = impl_->get(key);
  return node != nullptr && node->is_string();
}

std::vector<std::string> ConfigTable::keys() const {
  std::vector<std::string> out;
  if (const toml::table* table = impl_->node()) {
    for (const auto& entry : ordered_entries(*table)) out.emplace_back(entry.first->str());
  }
  return out;
}

ConfigTable ConfigTable::table(std::string_view key) const {
  const toml::node* node = impl_->read(key);
  if (node != nullptr && !node->is_table()) {
    impl_->fail_at(*node, impl_->full_key(key),
                   std::string("expected a table, got ") + type_name(*node));
  }
  return ConfigTable(std::make_shared<Impl>(impl_->doc, child(impl_->components, key)));
}

double ConfigTable::number(std::string_view key, double fallback, const NumberRule& rule) const {
  const toml::node* node = impl_->read(key);
  if (node != nullptr) return impl_->to_number(*node, impl_->full_key(key), rule);
  // A default can break a rule that depends on another key (leaky-mcp's eta < theta with theta =
  // 0.01 set): said here, at the table, rather than later by whatever the value breaks.
  if (!rule.accepts(fallback))
    fail(key, "not set, and its default " + detail::format_number(fallback) + " is not" + rule_bounds(rule) + "; set it");
  return fallback;
}

std::int64_t ConfigTable::integer(std::string_view key, std::int64_t fallback,
                                  const NumberRule& rule) const {
  const toml::node* node = impl_->read(key);
  if (node == nullptr) return fallback;
  const std::string label = impl_->full_key(key);
  const std::string expected = "expected an integer" + rule_bounds(rule) + ", got ";
  const auto* i = node->as_integer();
  if (i == nullptr) {
    // A float is refused even when integral: "rank = 3.0" is most likely a slip.
    impl_->fail_at(*node, label,
                   expected + (node->is_floating_point() ? format_value(*node) : type_name(*node)));
  }
  if (!rule.accepts(static_cast<double>(i->get()))) {
    impl_->fail_at(*node, label, expected + format_value(*node));
  }
  return i->get();
}

bool ConfigTable::boolean(std::string_view key, bool fallback) const {
  const toml::node* node = impl_->read(key);
  if (node == nullptr) return fallback;
  const auto* b = node->as_boolean();
  if (b == nullptr) {
    impl_->fail_at(*node, impl_->full_key(key),
                   std::string("expected a boolean, got ") + type_name(*node));
  }
  return b->get();
}

std::string ConfigTable::string(std::string_view key, const std::string& fallback,
                                const std::vector<std::string>& choices) const {
  const toml::node* node = impl_->read(key);
  return node == nullptr ? fallback : impl_->checked_string(*node, impl_->full_key(key), choices);
}

std::vector<double> ConfigTable::numbers(std::string_view key, const std::vector<double>& fallback,
                                         const NumberRule& rule) const {
  const toml::node* node = impl_->read(key);
  if (node == nullptr) return fallback;
  const std::string label = impl_->full_key(key);
  if (const toml::array* array = node->as_array()) {
    std::vector<double> out;
    out.reserve(array->size());
    for (std::size_t i = 0; i < array->size(); ++i) {
      out.push_back(impl_->to_number(*array->get(i), label + "[" + std::to_string(i) + "]", rule));
    }
    return out;
  }
  if (node->is_number()) return {impl_->to_number(*node, label, rule)};
  impl_->fail_at(*node, label,
                 "expected " + rule.describe() + " or an array of numbers, got " + type_name(*node));
}

std::optional<std::filesystem::path> ConfigTable::file(std::string_view key) const {
  const toml::node* node = impl_->read(key);
  if (node == nullptr) return std::nullopt;
  const auto* s = node->as_string();
  const std::string label = impl_->full_key(key);
  if (s == nullptr) {
    impl_->fail_at(*node, label, std::string("expected a file name, got ") + type_name(*node));
  }
  if (s->get().empty()) impl_->fail_at(*node, label, "expected a file name, got \"\"");
  const std::filesystem::path name(s->get());
  return name.is_absolute() ? name : impl_->doc->base_directory / name;
}

std::filesystem::path ConfigTable::file(std::string_view key, const std::filesystem::path& fallback) const {
  if (auto given = file(key)) return *given;
  const std::filesystem::path path = fallback.is_absolute() ? fallback : impl_->doc->base_directory / fallback;
  if (!std::filesystem::exists(path))
    fail("", "no '" + std::string(key) + " = \"FILE\"' given and the default " + path.string() + " does not exist");
  return path;
}

double ConfigTable::require_number(std::string_view key, const NumberRule& rule) const {
  const toml::node* node = impl_->read(key);
  if (node == nullptr) impl_->missing(key);
  return impl_->to_number(*node, impl_->full_key(key), rule);
}

std::string ConfigTable::require_string(std::string_view key,
                                        const std::vector<std::string>& choices) const {
  const toml::node* node = impl_->read(key);
  if (node == nullptr) impl_->missing(key);
  return impl_->checked_string(*node, impl_->full_key(key), choices);
}

std::string ConfigTable::where(std::string_view key) const {
  const toml::node* node = key.empty() ? nullptr : impl_->get(key);
  if (node == nullptr) return impl_->table_where();
  // A table made by set() has no source of its own; the sub-table's where() knows its option.
  if (node->is_table()) return Impl(impl_->doc, child(impl_->components, key)).table_where();
  return impl_->node_where(*node);
}

void ConfigTable::fail(std::string_view key, const std::string& message) const {
  const std::string label = impl_->full_key(key);
  throw Error(where(key), label.empty() ? message : label + ": " + message);
}

void ConfigTable::check_unknown_keys() const { impl_->check_unknown(impl_->components); }

void ConfigTable::mark_used(std::string_view key) const {
  // An empty key marks this whole table.
  if (key.empty()) {
    impl_->doc->used_subtrees.insert(impl_->components);
    return;
  }
  impl_->doc->queried[impl_->components].emplace(key);
  impl_->doc->used_subtrees.insert(child(impl_->components, key));
}

// ---------------------------------------------------------------------------------------------

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Levenshtein distance (insert, delete, substitute), one row at a time.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // row[i-1][j-1]
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];  // row[i-1][j]
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace sdprl
