// Tests of sdprl::ConfigTable, NumberRule, edit_distance, Error and format_location.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/error.h"

namespace sdprl {
namespace {

namespace fs = std::filesystem;

// Runs `body`, which must throw sdprl::Error, and returns the error.
Error catch_error(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected sdprl::Error, nothing was thrown";
  return Error("", "");
}

ConfigTable parse(const std::string& text) { return ConfigTable::parse_string(text, "model.toml"); }

// A scratch directory under the system temp directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sdprl_config_test_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path file = dir_ / name;
    std::ofstream(file) << text;
    return file;
  }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

// --- Error and format_location ---------------------------------------------------------------

TEST(ErrorTest, WhatJoinsWhereAndMessage) {
  const Error located("model.toml:3:7", "solver.rank: expected an integer, got a string");
  EXPECT_EQ(located.where(), "model.toml:3:7");
  EXPECT_EQ(located.message(), "solver.rank: expected an integer, got a string");
  EXPECT_STREQ(located.what(), "model.toml:3:7: solver.rank: expected an integer, got a string");

  const Error unlocated("", "no place");
  EXPECT_STREQ(unlocated.what(), "no place");
}

TEST(ErrorTest, IsARuntimeError) {
  try {
    throw Error("here", "boom");
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "here: boom");
  }
}

TEST(ErrorTest, FormatLocationOmitsZeroParts) {
  EXPECT_EQ(format_location("a.toml", 12, 9), "a.toml:12:9");
  EXPECT_EQ(format_location("a.toml", 12), "a.toml:12");
  EXPECT_EQ(format_location("a.toml"), "a.toml");
  EXPECT_EQ(format_location("a.toml", 0, 5), "a.toml");  // a column without a line means nothing
}

// --- NumberRule and edit_distance ------------------------------------------------------------

TEST(NumberRuleTest, Describe) {
  EXPECT_EQ(NumberRule::any().describe(), "a number");
  EXPECT_EQ(NumberRule::positive().describe(), "a number > 0");
  EXPECT_EQ(NumberRule::non_negative().describe(), "a number >= 0");
  EXPECT_EQ(NumberRule::at_least(1).describe(), "a number >= 1");
  EXPECT_EQ(NumberRule::closed(0, 1).describe(), "a number in [0, 1]");
  EXPECT_EQ(NumberRule::open(0, 1).describe(), "a number in (0, 1)");
  EXPECT_EQ((NumberRule{0.5, 2, false, true}).describe(), "a number in (0.5, 2]");
  EXPECT_EQ((NumberRule{-1.0 / 0.0, 10, true, false}).describe(), "a number < 10");
  EXPECT_EQ((NumberRule{-1.0 / 0.0, 1e-05, true, true}).describe(), "a number <= 1e-05");
}

TEST(NumberRuleTest, Accepts) {
  EXPECT_TRUE(NumberRule::any().accepts(-1e300));
  EXPECT_FALSE(NumberRule::any().accepts(0.0 / 0.0));  // NaN is not a number
  EXPECT_FALSE(NumberRule::positive().accepts(0));
  EXPECT_TRUE(NumberRule::positive().accepts(1e-300));
  EXPECT_TRUE(NumberRule::non_negative().accepts(0));
  EXPECT_FALSE(NumberRule::non_negative().accepts(-1e-12));
  EXPECT_TRUE(NumberRule::closed(0, 1).accepts(0));
  EXPECT_TRUE(NumberRule::closed(0, 1).accepts(1));
  EXPECT_FALSE(NumberRule::open(0, 1).accepts(0));
  EXPECT_FALSE(NumberRule::open(0, 1).accepts(1));
  EXPECT_TRUE(NumberRule::open(0, 1).accepts(0.5));
}

TEST(EditDistanceTest, Levenshtein) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("rank", "rank"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("rnak", "rank"), 2u);
  EXPECT_EQ(edit_distance("rho", "rhoo"), 1u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

// --- Parsing ---------------------------------------------------------------------------------

TEST(ConfigParseTest, SyntaxErrorGivesLineAndColumn) {
  const Error error = catch_error([] { parse("a = 1\nb = 2\nc = = 3\n"); });
  EXPECT_EQ(error.where(), "model.toml:3:5");
  EXPECT_FALSE(error.message().empty());
}

TEST(ConfigParseTest, DuplicateKeyIsASyntaxError) {
  const Error error = catch_error([] { parse("[solver]\nrank = 1\nrank = 2\n"); });
  EXPECT_EQ(error.where().rfind("model.toml:3:", 0), 0u) << error.where();
}

TEST(ConfigParseTest, ParseFileSetsSourceAndBaseDirectory) {
  TempDir dir;
  const fs::path file = dir.write("model.toml", "[data]\nmatrix = \"m.csv\"\n");
  const ConfigTable config = ConfigTable::parse_file(file);
  EXPECT_EQ(config.source_file(), file.string());
  EXPECT_EQ(config.path(), "");
  EXPECT_EQ(fs::weakly_canonical(config.base_directory()), fs::weakly_canonical(dir.path()));
  EXPECT_EQ(config.table("data").where("matrix"), file.string() + ":2:10");
}

TEST(ConfigParseTest, ParseFileSyntaxErrorNamesTheFile) {
  TempDir dir;
  const fs::path file = dir.write("bad.toml", "# comment\n[solver]\nrank = [1, 2\n");
  const Error error = catch_error([&] { ConfigTable::parse_file(file); });
  EXPECT_EQ(error.where().rfind(file.string() + ":", 0), 0u) << error.where();
  EXPECT_FALSE(error.message().empty());
}

TEST(ConfigParseTest, MissingFileThrows) {
  TempDir dir;
  const fs::path file = dir.path() / "absent.toml";
  const Error error = catch_error([&] { ConfigTable::parse_file(file); });
  EXPECT_EQ(error.where().rfind(file.string(), 0), 0u) << error.where();
}

TEST(ConfigParseTest, ParseStringUsesCurrentDirectory) {
  const ConfigTable config = parse("x = 1\n");
  EXPECT_EQ(config.source_file(), "model.toml");
  EXPECT_EQ(config.base_directory(), fs::current_path());
}

TEST(ConfigParseTest, DefaultConstructedIsEmpty) {
  const ConfigTable config;
  EXPECT_TRUE(config.keys().empty());
  EXPECT_EQ(config.source_file(), "");
  EXPECT_EQ(config.number("x", 2.5), 2.5);
  EXPECT_NO_THROW(config.check_unknown_keys());
}

// --- Typed reads -----------------------------------------------------------------------------

TEST(ConfigReadTest, ReadsValuesAndDefaults) {
  const ConfigTable config = parse(
      "name = \"demo\"\n"
      "verbose = true\n"
      "[solver]\n"
      "rank = 5\n"
      "tol = 1e-6\n"
      "scale = 2\n");
  const ConfigTable solver = config.table("solver");
  EXPECT_EQ(solver.path(), "solver");
  EXPECT_EQ(solver.integer("rank", 1), 5);
  EXPECT_DOUBLE_EQ(solver.number("tol", 0), 1e-6);
  EXPECT_DOUBLE_EQ(solver.number("scale", 0), 2.0);  // an integer is a number
  EXPECT_EQ(solver.integer("max_iterations", 100), 100);
  EXPECT_DOUBLE_EQ(solver.number("absent", 0.25), 0.25);
  EXPECT_EQ(config.string("name", ""), "demo");
  EXPECT_EQ(config.string("other", "fallback"), "fallback");
  EXPECT_TRUE(config.boolean("verbose", false));
  EXPECT_FALSE(config.boolean("quiet", false));
}

TEST(ConfigReadTest, WrongTypeGivesTheValueLocation) {
  const ConfigTable solver = parse(
                                 "[solver]\n"
                                 "rank = \"five\"\n"
                                 "flag = true\n"
                                 "ratio = 2.0\n"
                                 "on = 1\n")
                                 .table("solver");
  Error error = catch_error([&] { solver.integer("rank", 1); });
  EXPECT_EQ(error.where(), "model.toml:2:8");
  EXPECT_EQ(error.message(), "solver.rank: expected an integer, got a string");

  error = catch_error([&] { solver.integer("flag", 1); });  // a bool is not an integer
  EXPECT_EQ(error.where(), "model.toml:3:8");
  EXPECT_EQ(error.message(), "solver.flag: expected an integer, got a boolean");

  error = catch_error([&] { solver.number("flag", 1); });  // nor a number
  EXPECT_EQ(error.message(), "solver.flag: expected a number, got a boolean");

  error = catch_error([&] { solver.integer("ratio", 1); });  // a double is not an integer
  EXPECT_EQ(error.where(), "model.toml:4:9");
  EXPECT_EQ(error.message(), "solver.ratio: expected an integer, got 2.0");

  error = catch_error([&] { solver.boolean("on", false); });
  EXPECT_EQ(error.message(), "solver.on: expected a boolean, got an integer");

  EXPECT_EQ(solver.string("rank", ""), "five");
  error = catch_error([&] { solver.string("on", ""); });
  EXPECT_EQ(error.message(), "solver.on: expected a string, got an integer");
}

TEST(ConfigReadTest, OutOfRange) {
  const ConfigTable config = parse(
      "[solver.admm]\n"
      "rho = -1\n"
      "alpha = 1.5\n"
      "[solver]\n"
      "rank = 0\n");
  const ConfigTable admm = config.table("solver").table("admm");
  EXPECT_EQ(admm.path(), "solver.admm");
  Error error = catch_error([&] { admm.number("rho", 1, NumberRule::positive()); });
  EXPECT_EQ(error.where(), "model.toml:2:7");
  EXPECT_EQ(error.message(), "solver.admm.rho: expected a number > 0, got -1");
  EXPECT_EQ(std::string(error.what()),
            "model.toml:2:7: solver.admm.rho: expected a number > 0, got -1");

  error = catch_error([&] { admm.number("alpha", 1, NumberRule::open(0, 1)); });
  EXPECT_EQ(error.message(), "solver.admm.alpha: expected a number in (0, 1), got 1.5");
  EXPECT_DOUBLE_EQ(admm.number("alpha", 1, NumberRule::closed(0, 2)), 1.5);
  // (lo, hi], as solver.curvature_scale's: hi itself is accepted, lo and beyond hi are not.
  error = catch_error([&] { admm.number("alpha", 1, NumberRule::half_open(0, 1)); });
  EXPECT_EQ(error.message(), "solver.admm.alpha: expected a number in (0, 1], got 1.5");
  EXPECT_DOUBLE_EQ(admm.number("alpha", 1, NumberRule::half_open(0, 1.5)), 1.5);
  EXPECT_FALSE(NumberRule::half_open(0, 1).accepts(0.0));
  EXPECT_TRUE(NumberRule::half_open(0, 1).accepts(1.0));

  error = catch_error([&] { config.table("solver").integer("rank", 1, NumberRule::at_least(1)); });
  EXPECT_EQ(error.where(), "model.toml:5:8");
  EXPECT_EQ(error.message(), "solver.rank: expected an integer >= 1, got 0");
}

TEST(ConfigReadTest, TopLevelKeyPathHasNoPrefix) {
  const Error error = catch_error([] { parse("seed = \"x\"\n").integer("seed", 0); });
  EXPECT_EQ(error.message(), "seed: expected an integer, got a string");
}

TEST(ConfigReadTest, StringChoices) {
  const ConfigTable loss = parse("[loss]\ntype = \"foo\"\nother = \"l1\"\n").table("loss");
  const Error error = catch_error([&] { loss.string("type", "l1", {"l1", "leaky-mcp"}); });
  EXPECT_EQ(error.where(), "model.toml:2:8");
  EXPECT_EQ(error.message(), "loss.type: expected one of \"l1\", \"leaky-mcp\", got \"foo\"");
  EXPECT_EQ(loss.string("other", "", {"l1", "leaky-mcp"}), "l1");
  EXPECT_EQ(loss.string("absent", "leaky-mcp", {"l1", "leaky-mcp"}), "leaky-mcp");
}

TEST(ConfigReadTest, NumbersScalarAndArray) {
  const ConfigTable config = parse(
      "single = 0.5\n"
      "whole = 3\n"
      "grid = [0.1, 1, 10]\n"
      "empty = []\n"
      "bad = [1, -2, 3]\n"
      "mixed = [1, \"two\"]\n"
      "text = \"x\"\n");
  EXPECT_EQ(config.numbers("single", {}), std::vector<double>{0.5});
  EXPECT_EQ(config.numbers("whole", {}), std::vector<double>{3.0});
  EXPECT_EQ(config.numbers("grid", {}, NumberRule::positive()), (std::vector<double>{0.1, 1, 10}));
  EXPECT_TRUE(config.numbers("empty", {1.0}).empty());
  EXPECT_EQ(config.numbers("absent", {1.0, 2.0}), (std::vector<double>{1.0, 2.0}));

  Error error = catch_error([&] { config.numbers("bad", {}, NumberRule::positive()); });
  EXPECT_EQ(error.where(), "model.toml:5:11");  // the element, not the array
  EXPECT_EQ(error.message(), "bad[1]: expected a number > 0, got -2");

  error = catch_error([&] { config.numbers("mixed", {}); });
  EXPECT_EQ(error.message(), "mixed[1]: expected a number, got a string");

  error = catch_error([&] { config.numbers("text", {}); });
  EXPECT_EQ(error.where(), "model.toml:7:8");
  EXPECT_EQ(error.message(), "text: expected a number or an array of numbers, got a string");
}

TEST(ConfigReadTest, FileResolvesAgainstBaseDirectory) {
  TempDir dir;
  const fs::path absolute = dir.path() / "elsewhere" / "y.csv";
  const fs::path file = dir.write("model.toml", "[data]\nmatrix = \"sub/x.csv\"\nlabels = \"" +
                                                    absolute.generic_string() +
                                                    "\"\ncount = 3\n");
  const ConfigTable data = ConfigTable::parse_file(file).table("data");
  const auto matrix = data.file("matrix");
  ASSERT_TRUE(matrix.has_value());
  EXPECT_EQ(fs::weakly_canonical(*matrix), fs::weakly_canonical(dir.path() / "sub" / "x.csv"));
  EXPECT_EQ(matrix->parent_path().parent_path(), data.base_directory());
  EXPECT_EQ(data.file("labels"), absolute);
  EXPECT_FALSE(data.file("absent").has_value());
  const Error error = catch_error([&] { data.file("count"); });
  EXPECT_EQ(error.message(), "data.count: expected a file name, got an integer");
}

TEST(ConfigReadTest, FileWithADefaultBesideTheModel) {
  TempDir dir;
  const fs::path file = dir.write("model.toml", "[data]\ngiven = \"x.csv\"\n");
  const ConfigTable data = ConfigTable::parse_file(file).table("data");
  EXPECT_EQ(data.file("given", "data/none.csv"), data.base_directory() / "x.csv");  // given: not checked
  fs::create_directories(dir.path() / "data");
  dir.write("data/shipped.csv", "1\n");
  EXPECT_EQ(data.file("absent", "data/shipped.csv"), data.base_directory() / "data" / "shipped.csv");
  const Error error = catch_error([&] { data.file("absent", "data/none.csv"); });
  EXPECT_EQ(error.where(), file.string() + ":1:1");
  EXPECT_NE(error.message().find("no 'absent = \"FILE\"' given and the default "), std::string::npos);
  EXPECT_NE(error.message().find("none.csv does not exist"), std::string::npos);
}

TEST(ConfigReadTest, RequireMissing) {
  const ConfigTable config = parse("x = 1\n\n[solver]\nrank = 2\n");
  const ConfigTable solver = config.table("solver");
  Error error = catch_error([&] { solver.require_string("type"); });
  EXPECT_EQ(error.where(), "model.toml:3:1");
  EXPECT_EQ(error.message(), "solver: missing required key 'type'");

  error = catch_error([&] { solver.require_number("tol"); });
  EXPECT_EQ(error.message(), "solver: missing required key 'tol'");

  error = catch_error([&] { config.require_number("y"); });
  EXPECT_EQ(error.where(), "model.toml");
  EXPECT_EQ(error.message(), "missing required key 'y'");

  // An absent table: located at the file.
  error = catch_error([&] { config.table("loss").require_string("type"); });
  EXPECT_EQ(error.where(), "model.toml");
  EXPECT_EQ(error.message(), "loss: missing required key 'type'");

  EXPECT_DOUBLE_EQ(solver.require_number("rank", NumberRule::positive()), 2.0);
  EXPECT_DOUBLE_EQ(config.require_number("x"), 1.0);
  error = catch_error([&] { config.require_number("x", NumberRule::open(2, 3)); });
  EXPECT_EQ(error.message(), "x: expected a number in (2, 3), got 1");
}

TEST(ConfigReadTest, RequireStringChecksChoices) {
  const ConfigTable loss = parse("[loss]\ntype = \"l2\"\n").table("loss");
  EXPECT_EQ(loss.require_string("type"), "l2");
  const Error error = catch_error([&] { loss.require_string("type", {"l1"}); });
  EXPECT_EQ(error.message(), "loss.type: expected one of \"l1\", got \"l2\"");
}

TEST(ConfigReadTest, FailNamesTheKey) {
  const ConfigTable solver = parse("[solver]\nrank = 3\n").table("solver");
  Error error = catch_error([&] { solver.fail("rank", "must not exceed n"); });
  EXPECT_EQ(error.where(), "model.toml:2:8");
  EXPECT_EQ(error.message(), "solver.rank: must not exceed n");

  error = catch_error([&] { solver.fail("", "is inconsistent"); });
  EXPECT_EQ(error.where(), "model.toml:1:1");
  EXPECT_EQ(error.message(), "solver: is inconsistent");
}

// --- Tables ----------------------------------------------------------------------------------

TEST(ConfigTableTest, AbsentSubTableFallsBackToDefaults) {
  const ConfigTable config = parse("x = 1\n");
  const ConfigTable admm = config.table("solver").table("admm");
  EXPECT_EQ(admm.path(), "solver.admm");
  EXPECT_TRUE(admm.keys().empty());
  EXPECT_FALSE(admm.contains("rho"));
  EXPECT_DOUBLE_EQ(admm.number("rho", 1.5), 1.5);
  EXPECT_EQ(admm.where(), "model.toml");
}

TEST(ConfigTableTest, InlineAndSectionTablesBothWork) {
  const ConfigTable config = parse(
      "[solver]\n"
      "admm = { rho = 2, alpha = 1.6 }\n"
      "[solver.mm]\n"
      "iterations = 7\n");
  const ConfigTable solver = config.table("solver");
  EXPECT_TRUE(solver.is_table("admm"));
  EXPECT_TRUE(solver.is_table("mm"));
  EXPECT_DOUBLE_EQ(solver.table("admm").number("rho", 1), 2.0);
  EXPECT_DOUBLE_EQ(solver.table("admm").number("alpha", 1), 1.6);
  EXPECT_EQ(solver.table("mm").integer("iterations", 1), 7);
  EXPECT_EQ(solver.table("admm").where("alpha"), "model.toml:2:27");
}

TEST(ConfigTableTest, NonTableIsAnError) {
  const ConfigTable config = parse("solver = 3\n");
  const Error error = catch_error([&] { config.table("solver"); });
  EXPECT_EQ(error.where(), "model.toml:1:10");
  EXPECT_EQ(error.message(), "solver: expected a table, got an integer");
}

TEST(ConfigTableTest, KeysInFileOrderAndPredicates) {
  const ConfigTable config = parse(
      "zeta = 1\n"
      "alpha = [1, 2]\n"
      "[middle]\n"
      "b = 1\n");
  EXPECT_EQ(config.keys(), (std::vector<std::string>{"zeta", "alpha", "middle"}));
  EXPECT_TRUE(config.contains("zeta"));
  EXPECT_FALSE(config.contains("beta"));
  EXPECT_TRUE(config.is_array("alpha"));
  EXPECT_FALSE(config.is_array("zeta"));
  EXPECT_TRUE(config.is_table("middle"));
  EXPECT_FALSE(config.is_table("alpha"));
  EXPECT_FALSE(config.is_table("absent"));
}

TEST(ConfigTableTest, CopiesShareState) {
  ConfigTable config = parse("[solver]\nrank = 3\n");
  const ConfigTable copy = config;  // NOLINT(performance-unnecessary-copy-initialization)
  const ConfigTable solver = copy.table("solver");
  config.set("solver.rank", "4");
  EXPECT_EQ(solver.integer("rank", 0), 4);
  // The read through the sub-table of the copy counts for the original.
  EXPECT_NO_THROW(config.check_unknown_keys());

  ConfigTable assigned;
  assigned = config;
  EXPECT_EQ(assigned.table("solver").integer("rank", 0), 4);
}

// --- set() -----------------------------------------------------------------------------------

TEST(ConfigSetTest, OverridesAndCreatesKeys) {
  ConfigTable config = parse("[solver]\nrank = 3\n[solver.admm]\nrho = 1.0\n");
  config.set("solver.rank", "8");
  config.set("solver.admm.rho", "2.5");
  config.set("solver.admm.alpha", "1.5");
  config.set("solver.grid", "[0.1, 1]");
  config.set("loss.type", "l1");        // not TOML: taken as a string
  config.set("loss.name", "\"quoted\"");  // a TOML string
  config.set("loss.params", "{ delta = 0.5 }");
  config.set("flag", "true");

  const ConfigTable solver = config.table("solver");
  EXPECT_EQ(solver.integer("rank", 0), 8);
  EXPECT_DOUBLE_EQ(solver.table("admm").number("rho", 0), 2.5);
  EXPECT_DOUBLE_EQ(solver.table("admm").number("alpha", 0), 1.5);
  EXPECT_EQ(solver.numbers("grid", {}), (std::vector<double>{0.1, 1}));
  const ConfigTable loss = config.table("loss");
  EXPECT_EQ(loss.string("type", ""), "l1");
  EXPECT_EQ(loss.string("name", ""), "quoted");
  EXPECT_DOUBLE_EQ(loss.table("params").number("delta", 0), 0.5);
  EXPECT_TRUE(config.boolean("flag", false));
  // A replaced key keeps its place in file order; new keys follow.
  EXPECT_EQ(solver.keys().front(), "rank");
}

// Text that reads as a number TOML cannot hold is refused as that, not taken as a string (which
// drew "expected a number, got a string" for --set noise_variance=1e310).
TEST(ConfigSetTest, NumberOutOfRangeIsNotAString) {
  ConfigTable config = parse("[model]\n");
  const Error error = catch_error([&] { config.set("model.noise_variance", "1e310"); });
  EXPECT_EQ(error.where(), "--set model.noise_variance");
  EXPECT_EQ(error.message(), "'1e310' looks like a number but is none TOML reads (a double holds magnitudes up to 1.8e308)");
}

// A key of more than 64 dotted parts is refused before toml++ sees it (its recursion overflowed the
// stack at 40000), in a file and in --set.
TEST(ConfigParseTest, KeyOfTooManyPartsIsRefusedWithItsLine) {
  std::string key = "a";
  for (int i = 0; i < 100; ++i) key += ".a";
  const Error in_file = catch_error([&] { parse("x = 1\n[" + key + "]\n"); });
  EXPECT_EQ(in_file.where(), "model.toml:2:1");
  EXPECT_NE(in_file.message().find("a key of 101 dotted parts; expected at most 64"), std::string::npos);
  // Dots in strings, comments and values do not count; a 64-part key is fine.
  std::string ok = "a";
  for (int i = 0; i < 63; ++i) ok += ".b";
  EXPECT_NO_THROW(parse("s = \"" + key + "\" # " + key + "\n" + ok + " = 1\n"));
  ConfigTable config;
  const Error in_set = catch_error([&] { config.set(key, "1"); });
  EXPECT_NE(in_set.message().find("a key of more than 64 dotted parts"), std::string::npos);
}

TEST(ConfigSetTest, TextThatIsNotOneValueIsAString) {
  ConfigTable config;
  config.set("a", "hello world");
  config.set("b", "1\nc = 2");
  config.set("d", "path/with \"quotes\" and \\ back");
  config.set("e", "");
  EXPECT_EQ(config.string("a", ""), "hello world");
  EXPECT_EQ(config.string("b", ""), "1\nc = 2");
  EXPECT_FALSE(config.contains("c"));
  EXPECT_EQ(config.string("d", ""), "path/with \"quotes\" and \\ back");
  EXPECT_EQ(config.string("e", "x"), "");
}

TEST(ConfigSetTest, ErrorsPointAtTheOption) {
  ConfigTable config = parse("[solver]\nrank = 3\n");
  config.set("solver.rank", "\"many\"");
  config.set("solver.admm.rho", "-2");
  config.set("grid", "[1, -1]");
  Error error = catch_error([&] { config.table("solver").integer("rank", 1); });
  EXPECT_EQ(error.where(), "--set solver.rank");
  EXPECT_EQ(error.message(), "solver.rank: expected an integer, got a string");

  error = catch_error(
      [&] { config.table("solver").table("admm").number("rho", 1, NumberRule::positive()); });
  EXPECT_EQ(error.where(), "--set solver.admm.rho");
  EXPECT_EQ(error.message(), "solver.admm.rho: expected a number > 0, got -2");

  error = catch_error([&] { config.numbers("grid", {}, NumberRule::positive()); });
  EXPECT_EQ(error.where(), "--set grid");
  EXPECT_EQ(error.message(), "grid[1]: expected a number > 0, got -1");

  // The table that set() created is located at the option as well.
  EXPECT_EQ(config.table("solver").table("admm").where(), "--set solver.admm.rho");
}

TEST(ConfigSetTest, SubTableTakenBeforeSetSeesTheValue) {
  ConfigTable config = parse("x = 1\n");
  const ConfigTable admm = config.table("solver").table("admm");
  config.set("solver.admm.rho", "3");
  EXPECT_DOUBLE_EQ(admm.number("rho", 0), 3.0);
}

TEST(ConfigSetTest, SetOnSubTableIsRelative) {
  ConfigTable config = parse("[solver]\nrank = 3\n");
  ConfigTable solver = config.table("solver");
  solver.set("admm.rho", "4");
  EXPECT_DOUBLE_EQ(config.table("solver").table("admm").number("rho", 0), 4.0);
  EXPECT_EQ(solver.where("admm"), "--set solver.admm.rho");
}

TEST(ConfigSetTest, BelowANonTableIsAnError) {
  ConfigTable config = parse("[solver]\nrank = 3\n");
  const Error error = catch_error([&] { config.set("solver.rank.x", "1"); });
  EXPECT_EQ(error.where(), "--set solver.rank.x");
  const Error bad_key = catch_error([&] { config.set("solver..rank", "1"); });
  EXPECT_EQ(bad_key.where(), "--set solver..rank");
}

// --- Unknown keys ----------------------------------------------------------------------------

TEST(ConfigUnknownKeysTest, SuggestsTheNearestKey) {
  const ConfigTable config = parse(
      "[solver]\n"
      "rank = 3\n"
      "rnak = 4\n");
  const ConfigTable solver = config.table("solver");
  solver.integer("rank", 1);
  solver.number("tolerance", 1e-6);
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.where(), "model.toml:3:1");
  EXPECT_EQ(error.message(), "unknown key 'rnak' in [solver]; did you mean 'rank'?");
}

TEST(ConfigUnknownKeysTest, AbsentQueriedKeysAreSuggested) {
  const ConfigTable config = parse("[solver]\ntolerence = 1e-6\n");
  config.table("solver").number("tolerance", 1e-8);  // absent, but a valid name
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.message(), "unknown key 'tolerence' in [solver]; did you mean 'tolerance'?");
}

TEST(ConfigUnknownKeysTest, TopLevelAndNoSuggestionWhenFar) {
  const ConfigTable config = parse("seed = 1\ncompletely_different = 2\n");
  config.integer("seed", 0);
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.where(), "model.toml:2:1");
  EXPECT_EQ(error.message(), "unknown key 'completely_different' at top level");
}

TEST(ConfigUnknownKeysTest, UnreadSubTableIsUnknown) {
  const ConfigTable config = parse("[solver]\nrank = 3\n[solvre]\nrank = 3\n");
  config.table("solver").integer("rank", 1);
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.message(), "unknown key 'solvre' at top level; did you mean 'solver'?");
  EXPECT_EQ(error.where(), "model.toml:3:2");
}

TEST(ConfigUnknownKeysTest, ChecksInlineSubTablesRecursively) {
  const ConfigTable config = parse("[solver]\nadmm = { rho = 1, rhoo = 2 }\n");
  config.table("solver").table("admm").number("rho", 1);
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.message(), "unknown key 'rhoo' in [solver.admm]; did you mean 'rho'?");
  EXPECT_EQ(error.where(), "model.toml:2:19");
}

TEST(ConfigUnknownKeysTest, AllReadPasses) {
  const ConfigTable config = parse(
      "name = \"x\"\n"
      "[solver]\n"
      "rank = 3\n"
      "[solver.admm]\n"
      "rho = 1\n");
  config.string("name", "");
  const ConfigTable solver = config.table("solver");
  solver.integer("rank", 1);
  solver.table("admm").number("rho", 1);
  EXPECT_NO_THROW(config.check_unknown_keys());
  // Checking a sub-table alone covers only that sub-table.
  EXPECT_NO_THROW(solver.check_unknown_keys());
}

TEST(ConfigUnknownKeysTest, MarkUsedCoversTheSubtree) {
  const ConfigTable config = parse(
      "[solver]\n"
      "rank = 3\n"
      "[plugin]\n"
      "anything = 1\n"
      "[plugin.deep]\n"
      "whatever = 2\n");
  config.table("solver").integer("rank", 1);
  EXPECT_THROW(config.check_unknown_keys(), Error);
  config.mark_used("plugin");
  EXPECT_NO_THROW(config.check_unknown_keys());
}

TEST(ConfigUnknownKeysTest, MarkUsedOnASingleKey) {
  const ConfigTable config = parse("[loss]\ntype = \"l1\"\ndelta = 1\n");
  const ConfigTable loss = config.table("loss");
  loss.string("type", "");
  loss.mark_used("delta");
  EXPECT_NO_THROW(config.check_unknown_keys());
}

TEST(ConfigUnknownKeysTest, SetKeysAreCheckedToo) {
  ConfigTable config = parse("[solver]\nrank = 3\n");
  config.set("solver.rnak", "5");
  config.table("solver").integer("rank", 1);
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.where(), "--set solver.rnak");
  EXPECT_EQ(error.message(), "unknown key 'rnak' in [solver]; did you mean 'rank'?");
}

TEST(ConfigUnknownKeysTest, FirstUnknownInFileOrder) {
  const ConfigTable config = parse("zz = 1\naa = 2\n");
  const Error error = catch_error([&] { config.check_unknown_keys(); });
  EXPECT_EQ(error.message(), "unknown key 'zz' at top level");
}

}  // namespace
}  // namespace sdprl
