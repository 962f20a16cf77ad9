// The [solver] keys of a model file, written once: each key with its SolverOptions member, the
// values it accepts, what 0 means where 0 means something, and one line of description.
//
// The table drives the reading of [solver] (read_solver_options), SolverOptions::is_valid,
// `sdprl help options` and docs/options.md (`sdprl help options --markdown`). The defaults are
// the in-class initialisers of SolverOptions (sdprl/solver.h): the table reads them from a
// default-constructed struct and writes no default of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/export.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"

namespace sdprl {

enum class OptionKind {
  kInteger,  // a TOML integer (int, Index or std::uint64_t member)
  kNumber,   // a TOML integer or float (double member)
  kBoolean,
  kChoice,   // one of a few strings (enum member)
  kFile,     // a file name, relative to the model file (no member: init_file)
};

struct OptionChoice {
  std::string name;  // as written in TOML
  int value;         // the enum's value
  std::string doc;
};

struct SDPRL_API SolverOption {
  std::string key;  // relative to [solver]: "rank", "admm.rho"
  OptionKind kind = OptionKind::kNumber;
  // kInteger, kNumber: the values a model file may give. SolverOptions::is_valid applies it too.
  NumberRule rule;
  // kInteger, kNumber: what the value 0 means, when it is a sentinel ("automatic"). If `rule`
  // refuses 0, 0 is the member's value for an absent key that no file can write (rank: 0 = the
  // model's default) and is_valid accepts it besides `rule`.
  std::string zero_means;
  // kInteger: a string a model file may give instead of a number, and the member's value for it
  // (rank: "auto" = kAutoRank); empty for none.
  std::string word;
  std::int64_t word_value = 0;
  std::vector<OptionChoice> choices;  // kChoice
  std::string doc;                    // one line
  // The member, read as a number (kInteger, kNumber), 0/1 (kBoolean) or the enum's value
  // (kChoice), and written back; empty for kFile.
  std::function<double(const SolverOptions&)> get;
  std::function<void(SolverOptions&, double)> set_number;
  std::function<void(SolverOptions&, std::int64_t)> set_integer;

  // The full dotted key: "solver.admm.rho".
  std::string full_key() const { return "solver." + key; }
  // "" when `value` is acceptable, else "must be in (0, 1]" and what 0 means where it applies.
  std::string violation(double value) const;
};

// (Exported for the tests and the program; not installed.)
// Every [solver] key, in the order of docs/options.md ([solver] first, then [solver.admm]).
SDPRL_API const std::vector<SolverOption>& solver_option_table();

// Reads [solver] into SolverOptions (absent keys keep their defaults). With init = "file" the
// starting factor of init_file is read into *given_start.
SDPRL_API SolverOptions read_solver_options(const ConfigTable& solver, Matrix* given_start);

// solver.seed alone: it also seeds the applications' synthetic data, so export-sdpa reads it.
SDPRL_API std::uint64_t read_seed(const ConfigTable& solver);

// The table as `sdprl help options` prints it: plain text, or (markdown) docs/options.md.
SDPRL_API std::string solver_options_reference(bool markdown);

}  // namespace sdprl
