// The table of [solver] keys (framework/src/config/options_table.h): it reads every key into its
// member with the struct's default when absent, SolverOptions::is_valid applies its rules, and the
// committed docs/options.md is what `sdprl help options --markdown` prints.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "config/options_table.h"
#include "sdprl/error.h"
#include "test_files.h"

namespace sdprl {
namespace {

ConfigTable parse(const std::string& text) { return ConfigTable::parse_string(text, "model.toml"); }

SolverOptions read(const std::string& text) {
  Matrix given;
  return read_solver_options(parse(text).table("solver"), &given);
}

// The text of `[solver]` (or `[solver.admm]`) setting `option` to `value` (TOML text).
std::string setting(const SolverOption& option, const std::string& value) {
  const std::size_t dot = option.key.rfind('.');
  if (dot == std::string::npos) return "[solver]\n" + option.key + " = " + value + "\n";
  return "[solver." + option.key.substr(0, dot) + "]\n" + option.key.substr(dot + 1) + " = " + value + "\n";
}

// stdout of `sdprl ARGS`.
std::string program_output(const std::string& args) {
  const std::string command = testing_support::shell_quote(SDPRL_EXECUTABLE) + " " + args;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

TEST(OptionsTable, KeysAreUniqueAndDocumented) {
  std::set<std::string> keys;
  for (const SolverOption& option : solver_option_table()) {
    EXPECT_TRUE(keys.insert(option.key).second) << option.key << " twice";
    EXPECT_FALSE(option.doc.empty()) << option.key;
    EXPECT_EQ(option.get == nullptr, option.kind == OptionKind::kFile) << option.key;
  }
}

TEST(OptionsTable, DefaultsAreValid) {
  std::string error;
  EXPECT_TRUE(SolverOptions().is_valid(&error)) << error;
}

// An empty [solver] gives the struct's defaults, member by member.
TEST(OptionsTable, AbsentKeysKeepTheDefaults) {
  const SolverOptions defaults;
  const SolverOptions o = read("[solver]\n");
  for (const SolverOption& option : solver_option_table()) {
    if (option.get) {
      EXPECT_EQ(option.get(o), option.get(defaults)) << option.key;
    }
  }
}

// Each key reaches its own member: a value other than the default, within the rule, is read back.
TEST(OptionsTable, EveryKeySetsItsMember) {
  const SolverOptions defaults;
  for (const SolverOption& option : solver_option_table()) {
    SCOPED_TRACE(option.key);
    switch (option.kind) {
      case OptionKind::kInteger:
      case OptionKind::kNumber: {
        bool tried = false;
        for (const double v : {2.0, 7.0, 0.5, 0.25}) {
          if (!option.rule.accepts(v) || v == option.get(defaults)) continue;
          if (option.kind == OptionKind::kInteger && v != static_cast<double>(static_cast<int>(v))) continue;
          std::ostringstream text;
          text << v;
          EXPECT_EQ(option.get(read(setting(option, text.str()))), v);
          tried = true;
          break;
        }
        EXPECT_TRUE(tried);
        break;
      }
      case OptionKind::kBoolean: {
        const bool other = option.get(defaults) == 0.0;
        EXPECT_EQ(option.get(read(setting(option, other ? "true" : "false"))), other ? 1.0 : 0.0);
        break;
      }
      case OptionKind::kChoice:
        for (const OptionChoice& c : option.choices) {
          if (c.name == "file") continue;  // needs init_file (below)
          EXPECT_EQ(option.get(read(setting(option, "\"" + c.name + "\""))), c.value) << c.name;
        }
        break;
      case OptionKind::kFile:
        break;
    }
  }
}

TEST(OptionsTable, TomlMessagesNameTheKeyAndTheRule) {
  try {
    read("[solver]\nrank = 0\n");
    ADD_FAILURE() << "rank = 0 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "model.toml:2:8: solver.rank: expected an integer >= 1, got 0");
  }
  try {
    read("[solver.admm]\nrho = -1\n");
    ADD_FAILURE() << "rho = -1 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "model.toml:2:7: solver.admm.rho: expected a number >= 0, got -1");
  }
  try {
    read("[solver]\ninit = \"file\"\n");
    ADD_FAILURE() << "init = \"file\" without init_file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs init_file"), std::string::npos) << e.what();
  }
}

// rank takes "auto" (kAutoRank) besides an integer; any other string is refused where it stands.
TEST(OptionsTable, RankTakesAuto) {
  EXPECT_EQ(read("[solver]\nrank = \"auto\"\n").rank, kAutoRank);
  EXPECT_EQ(read("[solver]\nrank = 7\n").rank, 7);
  SolverOptions o;
  o.rank = kAutoRank;
  EXPECT_TRUE(o.is_valid(nullptr));
  o.rank = -2;
  EXPECT_FALSE(o.is_valid(nullptr));
  try {
    read("[solver]\nrank = \"two\"\n");
    ADD_FAILURE() << "rank = \"two\" was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.toml:2:8: solver.rank"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"auto\""), std::string::npos) << e.what();
  }
}

// The inner solver's test switches (xt_step::Paths, private) are no keys of a model file.
TEST(OptionsTable, TestSwitchesAreNoKeys) {
  for (const char* key : {"fused", "fused_rebuild"}) {
    const ConfigTable config = parse(std::string("[solver.admm]\n") + key + " = false\n");
    Matrix given;
    read_solver_options(config.table("solver"), &given);
    try {
      config.check_unknown_keys();
      ADD_FAILURE() << key << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("unknown key '") + key + "' in [solver.admm]"),
                std::string::npos)
          << e.what();
    }
  }
}

// is_valid applies the rules of the table to every member, naming the key, the value and the rule.
TEST(OptionsTable, IsValidNamesTheKeyTheValueAndTheRule) {
  auto error_of = [](const SolverOptions& o) {
    std::string error;
    EXPECT_FALSE(o.is_valid(&error));
    return error;
  };
  SolverOptions o;
  o.rank = -2;
  EXPECT_EQ(error_of(o), "solver.rank = -2: must be >= 1 (or 0 for the model's default, -1 for \"auto\")");
  o = SolverOptions();
  o.curvature_scale = 1.5;
  EXPECT_EQ(error_of(o), "solver.curvature_scale = 1.5: must be in [0, 1]");
  o = SolverOptions();
  o.admm.rho = -0.5;
  EXPECT_EQ(error_of(o), "solver.admm.rho = -0.5: must be >= 0 (0 = automatic)");
  o = SolverOptions();
  o.admm.cg_tolerance = std::nan("");
  EXPECT_EQ(error_of(o), "solver.admm.cg_tolerance = nan: must be in (0, 1)");
  o = SolverOptions();
  o.admm.max_iterations = 0;
  EXPECT_EQ(error_of(o), "solver.admm.max_iterations = 0: must be in [1, 1e9]");
  o = SolverOptions();
  o.rank = 0;  // the model's default: valid in C++, though a model file cannot write it
  EXPECT_TRUE(o.is_valid(nullptr));

  // Every numeric key: a value below its lower bound is refused under its own name.
  for (const SolverOption& option : solver_option_table()) {
    if (option.kind != OptionKind::kNumber && option.kind != OptionKind::kInteger) continue;
    if (std::isinf(option.rule.lo) || option.key == "seed") continue;  // seed: -1 wraps to a valid seed
    SolverOptions bad;
    const double v = option.rule.lo - 1.0;
    if (v == 0.0 && !option.zero_means.empty()) continue;  // rank: 0 is the model's default
    if (option.kind == OptionKind::kNumber) option.set_number(bad, v);
    else option.set_integer(bad, static_cast<std::int64_t>(v));
    const std::string error = error_of(bad);
    EXPECT_EQ(error.rfind(option.full_key() + " = ", 0), 0u) << option.key << ": " << error;
  }
}

TEST(OptionsTable, HelpListsEveryKey) {
  const std::string text = program_output("help options");
  for (const SolverOption& option : solver_option_table())
    EXPECT_NE(text.find("\n" + option.key + " = "), std::string::npos) << option.key;
  EXPECT_EQ(text.find("fused ="), std::string::npos);
  EXPECT_EQ(text.find("fused_rebuild"), std::string::npos);
}

// docs/options.md is generated: a change of the table must come with the regenerated file.
TEST(OptionsTable, CommittedReferenceIsCurrent) {
  const std::filesystem::path file = std::filesystem::path(SDPRL_SOURCE_DIR) / "docs" / "options.md";
  std::ifstream in(file, std::ios::binary);
  std::ostringstream committed;
  committed << in.rdbuf();
  EXPECT_TRUE(committed.str() == program_output("help options --markdown"))
      << file.string() << " is not what `sdprl help options --markdown` prints; regenerate it from the "
      << "build directory:\n  tools/sdprl/sdprl help options --markdown > " << file.string();
}

}  // namespace
}  // namespace sdprl
