// The bad-input table (docs/bad-input.md): one test per class of bad input, each running the
// `sdprl` program as a user does and checking its answer: the exit status (2: the model, its
// data or a plugin; 3: numerical failure), one message "sdprl: error: WHERE: WHAT" whose WHERE is
// file:line:column (or the file, or the field) and whose WHAT says what was expected, and no
// partial output: no output file, no temporary file, or only complete files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sdprl/loss.h"
#include "sdprl/loss_check.h"
#include "sdprl/plugin.h"
#include "sdprl/error.h"
#include "sdprl/runner.h"
#include "test_files.h"
#include "test_run.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using sdprl::testing_support::TempDir;
using sdprl::testing_support::shell_quote;

const fs::path kExecutable = SDPRL_EXECUTABLE;
const fs::path kTestPluginDir = SDPRL_TEST_PLUGIN_DIR;

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << file;
}

std::string escape_regex(const std::string& s) {
  return std::regex_replace(s, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

struct Result {
  int code = -1;
  std::string out, err;
};

// A small model on MatrixMarket data: a 6 x 6 PSD matrix of rank 1 (M_ij = v_i v_j), every row
// observed; `obs` replaces the observation file's text.
const char* kObservations =
    "%%MatrixMarket matrix coordinate real general\n"
    "6 6 8\n"
    "1 1 1.0\n"
    "1 2 2.0\n"
    "2 3 6.0\n"
    "3 4 12.0\n"
    "4 5 20.0\n"
    "5 6 30.0\n"
    "6 6 36.0\n"
    "2 2 4.0\n";

std::string file_model(const std::string& extra_model = "", const std::string& loss = "l1",
                       const std::string& solver = "rank = 1\n") {
  return "[model]\n"
         "type = \"matrix-completion\"\n"
         "observations = \"obs.mtx\"\n" +
         extra_model +
         "[loss]\n"
         "type = \"" + loss + "\"\n"
         "[regularizer]\n"
         "lambda = 0.1\n"
         "[solver]\n" +
         solver;
}

// A small synthetic model (m = 150, rank 3), solved in well under a second.
std::string synthetic_model(const std::string& solver_extra = "") {
  return "[model]\n"
         "type = \"matrix-completion\"\n"
         "synthetic = { m = 150, rank = 3, s = 2.0, outlier_fraction = 0.05, seed = 3 }\n"
         "[loss]\n"
         "type = \"leaky-mcp\"\n"
         "[loss.leaky-mcp]\n"
         "theta = 5.0\n"
         "eta = 0.05\n"
         "[regularizer]\n"
         "lambda = 1.0\n"
         "[solver]\n"
         "rank = 3\n" +
         solver_extra;
}

class BadInputTest : public ::testing::Test {
 protected:
  const fs::path& dir() const { return tmp_.path(); }
  fs::path out() const { return dir() / "out"; }

  fs::path model(const std::string& text, const std::string& observations = kObservations) {
    write_file(dir() / "obs.mtx", observations);
    const fs::path file = dir() / "model.toml";
    write_file(file, text);
    return file;
  }

  // Runs `sdprl run MODEL --quiet --out DIR args...` (through `prefix`, a shell fragment such as
  // "ulimit -f 4;"), stdout and stderr captured.
  Result run(const fs::path& model_file, const std::vector<std::string>& args = {},
             const std::string& prefix = "", const fs::path& out_dir = {}) {
    const fs::path o = out_dir.empty() ? out() : out_dir;
    const fs::path out_file = dir() / "stdout.txt";
    const fs::path err_file = dir() / "stderr.txt";
    std::string command = prefix + " env -u SDPRL_PLUGIN_PATH " + shell_quote(kExecutable.string()) +
                          " run " + shell_quote(model_file.string()) + " --quiet --out " + shell_quote(o.string());
    for (const std::string& a : args) command += " " + shell_quote(a);
    command += " >" + shell_quote(out_file.string()) + " 2>" + shell_quote(err_file.string()) + " </dev/null";
    const int status = std::system(("/bin/sh -c " + shell_quote(command)).c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out_file);
    r.err = read_file(err_file);
    return r;
  }

  // Exit status 2, nothing on stdout, exactly one line "sdprl: error: WHERE: WHAT" on stderr whose
  // WHERE matches `where` (a regex) and whose WHAT contains each of `what`, and no output at all.
  void expect_refused(const Result& r, const std::string& where, const std::vector<std::string>& what) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line:\n" << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("^sdprl: error: " + where + ": ")))
        << "expected the place " << where << " in:\n" << r.err;
    for (const std::string& w : what) EXPECT_NE(r.err.find(w), std::string::npos) << "'" << w << "' in:\n" << r.err;
    EXPECT_FALSE(fs::exists(out())) << "a refused run must not create its output directory";
  }

  // Only complete files in `directory`: no temporary file of an atomic write, and the files that
  // are there parse (summary.json as JSON).
  static void expect_no_partial_files(const fs::path& directory) {
    if (!fs::exists(directory)) return;
    for (const auto& entry : fs::directory_iterator(directory)) {
      const std::string name = entry.path().filename().string();
      EXPECT_EQ(name.find(".tmp."), std::string::npos) << "temporary file left: " << name;
      EXPECT_EQ(name.find(".sdprl_write_probe"), std::string::npos) << "probe left: " << name;
      if (name == "summary.json") {
        EXPECT_TRUE(json::accept(read_file(entry.path()))) << "summary.json is not valid JSON";
      }
    }
  }

  std::string located(const fs::path& file, int line) const {
    return escape_regex(file.string()) + ":" + std::to_string(line) + ":[0-9]+";
  }

 private:
  TempDir tmp_;
};

// ---------------------------------------------------------------------------------------------
// The model file.

TEST_F(BadInputTest, MalformedToml) {
  const fs::path file = model("[model]\ntype = \"matrix-completion\"\n[solver]\nrank = = 5\n");
  expect_refused(run(file), located(file, 4), {"could not determine value type"});
}

// toml++ parses a dotted key recursively: 40000 parts overflowed the stack (a segfault) before
// sdprl refused keys of more than 64 parts, in a file and in --set (where 10000 parts took 8 s).
TEST_F(BadInputTest, KeyOfTooManyDottedParts) {
  std::string header = "[model";
  for (int i = 0; i < 40000; ++i) header += ".a";
  const fs::path file = model(file_model() + header + "]\n");
  expect_refused(run(file), located(file, 10), {"a key of 40001 dotted parts; expected at most 64"});
  std::string key = "model";
  for (int i = 0; i < 10000; ++i) key += ".a";
  const fs::path good = model(file_model());
  expect_refused(run(good, {"--set", key + "=1"}), "--set model\\.a\\.a[.a]*", {"dotted parts"});
}

TEST_F(BadInputTest, ModelFileThatIsADirectory) {
  fs::create_directories(dir() / "models");
  expect_refused(run(dir() / "models"), escape_regex((dir() / "models").string()), {"is a directory; expected a TOML model file"});
}

TEST_F(BadInputTest, EmptyOutOption) {
  const fs::path file = model(file_model());
  const fs::path err_file = dir() / "stderr.txt";
  const std::string command = "cd " + shell_quote(dir().string()) + " && " + shell_quote(kExecutable.string()) + " run " +
                              shell_quote(file.string()) + " --quiet --out '' >/dev/null 2>" + shell_quote(err_file.string());
  const int status = std::system(("/bin/sh -c " + shell_quote(command)).c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2);
  EXPECT_EQ(read_file(err_file),
            "sdprl: error: --out: an empty directory would write the outputs into the current directory; name one\n");
  EXPECT_FALSE(fs::exists(dir() / "X.mtx"));
}

// A CSV declares no shape: one triangle of a symmetric matrix ("3,2" without "2,3") is the 3 x 3
// matrix of its largest index, where it was refused as "the file declares 3 x 2".
TEST_F(BadInputTest, CsvTriangleIsSquare) {
  write_file(dir() / "obs.csv", "1,1,1\n2,1,0.5\n3,1,0.5\n3,2,0.5\n");
  std::string text = file_model();
  text.replace(text.find("obs.mtx"), 7, "obs.csv");
  const Result r = run(model(text));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(json::parse(read_file(out() / "summary.json"))["n"] == 3);
}

// [loss.NAME] tables of losses other than the one run are checked as those losses read them: a
// misspelt loss name or parameter there was ignored without a word.
TEST_F(BadInputTest, TableOfAnotherLoss) {
  const fs::path misspelt = model(file_model() + "[loss.leaky-mpc]\ntheta = 0.5\n");
  expect_refused(run(misspelt), located(misspelt, 10), {"loss.leaky-mpc: no loss plugin named 'leaky-mpc'"});
  const fs::path unknown = model(file_model() + "[loss.geman]\nbogus = 1\n");
  expect_refused(run(unknown), located(unknown, 11), {"unknown key 'bogus' in [loss.geman]"});
  const fs::path fine = model(file_model() + "[loss.leaky-mcp]\ntheta = 0.5\neta = 0.05\n");
  EXPECT_EQ(run(fine).code, 0);
}

// A default that breaks its rule because of another key: leaky-mcp's eta (default 0.05) must lie
// in (0, theta); with theta = 0.01 the run failed later, unlocated, on "phi(0) must be 0".
TEST_F(BadInputTest, DefaultBrokenByAnotherKey) {
  const fs::path file = model(file_model("", "leaky-mcp") + "[loss.leaky-mcp]\ntheta = 0.01\n");
  expect_refused(run(file), located(file, 10), {"loss.leaky-mcp.eta: not set, and its default 0.05 is not in (0, 0.01); set it"});
}

// A lambda twice in the grid was solved twice; [plugins] path naming nothing was accepted (while
// --plugin-path refused it).
TEST_F(BadInputTest, LambdaGridWithADuplicateAndAMissingPluginPath) {
  std::string text = file_model();
  text.replace(text.find("lambda = 0.1"), 12, "lambda = [0.1, 1.0, 0.1]");
  const fs::path grid = model(text);
  expect_refused(run(grid), located(grid, 7), {"regularizer.lambda: the grid holds 0.1 twice (entries 1 and 3)"});
  const fs::path plugins = model(file_model() + "[plugins]\npath = \"plugns\"\n");
  expect_refused(run(plugins), located(plugins, 11), {"plugins.path: '", "plugns' does not exist"});
}

// Observations fitted exactly (all zero): F falls geometrically to 0 and its relative change stays
// put, so the run never "converged" (2000 steps, exit 1); rule 4 now measures changes against at
// least 1e-12 of F(X_0).
TEST_F(BadInputTest, ZeroOptimumConverges) {
  const fs::path file = model(file_model(),
                              "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 0\n1 2 0\n2 2 0\n");
  const Result r = run(file);
  EXPECT_EQ(r.code, 0) << r.err;
  const json summary = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(summary["status"], "optimal") << "the l1 certificate proves F = 0 the minimum";
  EXPECT_LT(summary["mm_iterations"].get<int>(), 2000);
}

// init = "model" for an application without a starting point was refused by the solver: no place,
// and after the output directory was made (empty).
TEST_F(BadInputTest, ModelStartTheApplicationHasNot) {
  const fs::path file = model(file_model("", "l1", "rank = 1\ninit = \"model\"\n"));
  expect_refused(run(file), located(file, 10), {"solver.init: init = \"model\": the application 'matrix-completion' has no starting point"});
}

TEST_F(BadInputTest, UnknownKey) {
  std::string text = file_model();
  text += "rnak = 2\n";
  const fs::path file = model(text);
  expect_refused(run(file), located(file, 10), {"unknown key 'rnak' in [solver]", "did you mean 'rank'?"});
}

TEST_F(BadInputTest, WrongType) {
  const fs::path file = model(file_model("", "l1", "rank = \"two\"\n"));
  expect_refused(run(file), located(file, 9), {"solver.rank: expected an integer >= 1 or \"auto\", got \"two\""});
}

TEST_F(BadInputTest, NegativeLambda) {
  std::string text = file_model();
  text.replace(text.find("lambda = 0.1"), 12, "lambda = -0.5");
  const fs::path file = model(text);
  expect_refused(run(file), located(file, 7), {"regularizer.lambda: expected a number >= 0, got -0.5"});
}

TEST_F(BadInputTest, RankZero) {
  const fs::path file = model(file_model("", "l1", "rank = 0\n"));
  expect_refused(run(file), located(file, 9), {"solver.rank: expected an integer >= 1, got 0"});
}

TEST_F(BadInputTest, RankAboveDimension) {
  const fs::path file = model(file_model("", "l1", "rank = 7\n"));
  expect_refused(run(file), located(file, 9), {"solver.rank: rank 7 exceeds the dimension n = 6"});
}

TEST_F(BadInputTest, LossParameterNotPositive) {
  std::string text = synthetic_model();
  text.replace(text.find("theta = 5.0"), 11, "theta = 0.0");
  const fs::path file = model(text);
  expect_refused(run(file), located(file, 7), {"loss.leaky-mcp.theta: expected a number > 0, got 0.0"});
}

TEST_F(BadInputTest, MissingRequiredKey) {
  const fs::path file = model("[model]\nobservations = \"obs.mtx\"\n[solver]\nrank = 1\n");
  expect_refused(run(file), escape_regex(file.string()) + "(:1:1)?", {"model: missing required key 'type'"});
}

TEST_F(BadInputTest, LambdaGridWithoutValidationSet) {
  std::string text = file_model();
  text.replace(text.find("lambda = 0.1"), 12, "lambda = [0.1, 1]");
  const fs::path file = model(text);
  expect_refused(run(file), located(file, 7), {"a lambda grid needs a validation set"});
}

// Messages blame the right place: an unknown key that only a --set made is that option's; a key
// the file does not contain is named as its default.
TEST_F(BadInputTest, UnknownKeyFromSetIsTheOptions) {
  const fs::path file = model(file_model());
  expect_refused(run(file, {"--set", "foo.bar=1"}), "--set foo\\.bar", {"unknown key 'foo' at top level"});
}

TEST_F(BadInputTest, DefaultValueIsNamedAsSuch) {
  const fs::path data = dir() / "two.svm";
  write_file(data, "1 1:0.5\n-1 1:1.5\n1 1:2.5\n");
  const fs::path file = model("[model]\ntype = \"npkl\"\ndata = \"two.svm\"\n");
  const Result r = run(file);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("model.toml:1:1: model.pairs_per_sample: not set, and its default 6 asks for 18 pairs, more "
                       "than the 3 pairs of the 3 samples"),
            std::string::npos)
      << r.err;
}

// A MatrixMarket file named .txt is read as CSV (the extension chooses the reader): the message
// says so.
TEST_F(BadInputTest, ReaderChosenByExtensionIsNamed) {
  std::string text = file_model();
  text.replace(text.find("obs.mtx"), 7, "obs.txt");
  const fs::path file = model(text);
  write_file(dir() / "obs.txt", kObservations);
  const Result r = run(file);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("(read as CSV \"i,j,value\" because the file name ends in .txt; a MatrixMarket file must end "
                       "in .mtx)\n"),
            std::string::npos)
      << r.err;
}

// Running out of memory is a message that names the structure and its size, not "std::bad_alloc":
// under a 300 MB address-space limit, m = 5 10^4 builds its data but not the solver's state, and
// m = 10^5 not even its data (on this machine; the test takes either message for either size).
TEST_F(BadInputTest, OutOfMemory) {
// (gcc defines __SANITIZE_ADDRESS__; clang answers __has_feature.)
#if defined(__SANITIZE_ADDRESS__)
#define SDPRL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SDPRL_ASAN 1
#endif
#endif
#ifdef SDPRL_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#endif
  for (const char* m : {"50000", "100000"}) {
    const fs::path file = model(std::string("[model]\ntype = \"matrix-completion\"\n") +
                                "synthetic = { m = " + m + ", rank = 5, s = 2.0, outlier_fraction = 0.05, seed = 3 }\n"
                                "[loss]\ntype = \"l1\"\n[regularizer]\nlambda = 1.0\n");
    const Result r = run(file, {"--force"}, "ulimit -v 300000;");
    EXPECT_EQ(r.code, 2) << r.err;
    const std::regex solver("^sdprl: error: solver: out of memory in the solver: its state for [0-9]+ terms, n = [0-9]+ "
                            "and rank 5 needs about [0-9.]+ GB, more than this process could allocate; lower "
                            "solver.rank, use fewer data, or raise the process's memory limit\n$");
    const std::regex data("^sdprl: error: " + escape_regex(file.string()) +
                          ": out of memory while the application 'matrix-completion' built the model's data \\(\\[model\\]\\); "
                          "use fewer data, or raise the process's memory limit\n$");
    EXPECT_TRUE(std::regex_search(r.err, solver) || std::regex_search(r.err, data)) << "m = " << m << ": " << r.err;
  }
}

TEST_F(BadInputTest, BadCommandLineOverride) {
  const fs::path file = model(file_model());
  expect_refused(run(file, {"--set", "solver.admm.rho=-1"}), "--set solver\\.admm\\.rho",
                 {"solver.admm.rho: expected a number >= 0, got -1"});
}

// ---------------------------------------------------------------------------------------------
// The data files.

TEST_F(BadInputTest, MissingDataFile) {
  std::string text = file_model();
  text.replace(text.find("obs.mtx"), 7, "nope.mtx");
  const fs::path file = model(text);
  expect_refused(run(file), escape_regex((dir() / "nope.mtx").string()),
                 {"cannot open file: No such file or directory"});
}

TEST_F(BadInputTest, MalformedDataLine) {
  std::string obs = kObservations;
  obs.replace(obs.find("2 3 6.0"), 7, "2 x 6.0");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":5:3",
                 {"expected an integer column index, got 'x'"});
}

TEST_F(BadInputTest, NanInData) {
  std::string obs = kObservations;
  obs.replace(obs.find("3 4 12.0"), 8, "3 4 nan");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":6:5",
                 {"value is NaN/Inf, got 'nan'"});
}

TEST_F(BadInputTest, InfInData) {
  std::string obs = kObservations;
  obs.replace(obs.find("3 4 12.0"), 8, "3 4 -inf");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":6:5",
                 {"value is NaN/Inf, got '-inf'"});
}

// A value whose square overflows is refused where it is read, with its place; before, 1e300 ended
// as "non-finite objective at MM iteration 1" with no file named.
TEST_F(BadInputTest, HugeValueInData) {
  std::string obs = kObservations;
  obs.replace(obs.find("3 4 12.0"), 8, "3 4 1e300");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":6:5",
                 {"value '1e300' is too large: sdprl needs |x| <= 1e150 so that products of two values stay finite"});
}

// TOML's inf and nan pass a rule such as ">= 0"; no key means one.
TEST_F(BadInputTest, InfiniteNumberInModel) {
  std::string text = file_model();
  text.replace(text.find("lambda = 0.1"), 12, "lambda = inf");
  const fs::path file = model(text);
  expect_refused(run(file), located(file, 7), {"regularizer.lambda: expected a finite number >= 0, got inf"});
}

TEST_F(BadInputTest, IndexOutOfRange) {
  std::string obs = kObservations;
  obs.replace(obs.find("4 5 20.0"), 8, "4 7 20.0");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":7:3",
                 {"column index 7 out of range [1, 6]"});
}

TEST_F(BadInputTest, DuplicateObservation) {
  std::string obs = kObservations;
  obs.replace(obs.find("2 2 4.0"), 7, "1 2 2.5");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":10",
                 {"duplicate observation of entry (1, 2), first given on line 4"});
}

TEST_F(BadInputTest, WrongEntryCount) {
  std::string obs = kObservations;
  obs.replace(obs.find("6 6 8"), 5, "6 6 9");
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()) + ":10",
                 {"expected 9 entries, file ends after 8"});
}

TEST_F(BadInputTest, EmptyObservationSet) {
  const fs::path file = model(file_model(), "%%MatrixMarket matrix coordinate real general\n6 6 0\n");
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()),
                 {"expected at least one observation 'row col value', the file has none"});
}

TEST_F(BadInputTest, RowWithNoObservations) {
  std::string obs = kObservations;
  obs.replace(obs.find("3 4 12.0"), 8, "3 3 9.0");
  obs.replace(obs.find("4 5 20.0"), 8, "3 5 15.0");  // row 4 no longer appears
  const fs::path file = model(file_model(), obs);
  expect_refused(run(file), escape_regex((dir() / "obs.mtx").string()),
                 {"row 4 of the 6 x 6 matrix has no observation: expected every row to be observed at least once"});
}

TEST_F(BadInputTest, StartingFactorOfTheWrongShape) {
  write_file(dir() / "X0.mtx", "%%MatrixMarket matrix array real general\n5 1\n1\n2\n3\n4\n5\n");
  const fs::path file = model(file_model("", "l1", "rank = 1\ninit = \"file\"\ninit_file = \"X0.mtx\"\n"));
  expect_refused(run(file), located(file, 11), {"solver.init_file: the starting factor is 5 x 1, expected 6 x 1"});
}

// ---------------------------------------------------------------------------------------------
// Plugins.

TEST_F(BadInputTest, UnknownPlugin) {
  const fs::path file = model(file_model("", "huber"));
  expect_refused(run(file), located(file, 5), {"loss.type: no loss plugin named 'huber'; searched: ", "plugins found: "});
}

TEST_F(BadInputTest, UnknownApplication) {
  std::string text = file_model();
  text.replace(text.find("matrix-completion"), 17, "matrix-complete");
  const fs::path file = model(text);
  expect_refused(run(file), located(file, 2), {"model.type: no application plugin named 'matrix-complete'"});
}

// A user's plugin named like a built-in one replaced it without a word, and nothing in the results
// said which file had run. The program now says which one shadows which (not under --quiet), and
// summary.json names each plugin's file and version.
TEST_F(BadInputTest, PluginThatShadowsABuiltInIsSaidAndRecorded) {
  const fs::path mine = dir() / "mine", builtin = kExecutable.parent_path().parent_path() / "lib" / "sdprl" / "plugins";
  fs::create_directories(mine);
  fs::copy_file(builtin / "sdprl-loss-l1.so", mine / "sdprl-loss-l1.so");
  const fs::path file = model(file_model());
  Result r = run(file, {"--plugin-path", mine.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // --quiet
  const json summary = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(summary["plugins"]["loss"]["file"], (mine / "sdprl-loss-l1.so").string());
  EXPECT_EQ(summary["plugins"]["loss"]["name"], "l1");
  EXPECT_EQ(summary["plugins"]["loss"]["version"], "1.0");
  EXPECT_EQ(fs::path(summary["plugins"]["application"]["file"].get<std::string>()).filename(),
            "sdprl-application-matrix-completion.so");
  // Without --quiet: one note naming both files.
  const std::string command = "env -u SDPRL_PLUGIN_PATH " + shell_quote(kExecutable.string()) + " run " +
                              shell_quote(file.string()) + " --force --out " + shell_quote(out().string()) +
                              " --plugin-path " + shell_quote(mine.string()) + " 2>&1 >/dev/null | grep 'note:'";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[4096] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  ::pclose(pipe);
  ASSERT_TRUE(got);
  EXPECT_EQ(std::string(line), "sdprl: note: the loss plugin 'l1' is " + (mine / "sdprl-loss-l1.so").string() +
                                   ", which comes first in the search order; " +
                                   fs::weakly_canonical(builtin / "sdprl-loss-l1.so").string() + " is not used\n");
}

TEST_F(BadInputTest, PluginOfAnotherAbiVersion) {
  const fs::path file = model(file_model("", "test-abi"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, escape_regex((kTestPluginDir / "sdprl-loss-test-abi.so").string()),
                 {"loss plugin ABI version 999, this sdprl expects " + std::to_string(sdprl::kLossAbiVersion)});
}

TEST_F(BadInputTest, PluginThatIsNotASharedLibrary) {
  const fs::path file = model(file_model("", "test-garbage"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, escape_regex((kTestPluginDir / "sdprl-loss-test-garbage.so").string()), {"cannot load plugin"});
}

TEST_F(BadInputTest, PluginThatThrows) {
  const fs::path file = model(file_model("", "test-throw-std"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, escape_regex((kTestPluginDir / "sdprl-loss-test-throw-std.so").string()),
                 {"loss plugin 'test-throw-std' failed: out of widgets"});
}

// phi(a) = c a^2 / 2 with phi'(a) = d a: a loss for the L-BFGS solver when c = d > 0.
class QuadraticTestLoss final : public sdprl::Loss {
 public:
  QuadraticTestLoss(double c, double d) : c_(c), d_(d) {}
  std::string name() const override { return "test-quadratic"; }
  double value(double a) const override { return 0.5 * c_ * a * a; }
  double derivative(double a) const override { return d_ * a; }

 private:
  double c_, d_;
};

// A factory that throws what is no std::exception ended in std::terminate (exit 134).
TEST_F(BadInputTest, PluginThatThrowsAnInt) {
  const fs::path file = model(file_model("", "test-throw-int"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, escape_regex((kTestPluginDir / "sdprl-loss-test-throw-int.so").string()),
                 {"loss plugin 'test-throw-int' failed: it threw something that is not a std::exception"});
}

// A loss for L-BFGS (phi'(0) = 0) whose phi decreases, or whose phi' is not phi's derivative, ran:
// -0.5 a^2 ended "converged" at F = -7e118. It is refused as the MM losses are (the check is
// also run by the program before the solve: runner.cc, solver.cc).
TEST_F(BadInputTest, SmoothLossBreakingItsContract) {
  const fs::path file = model(file_model("", "square", "rank = 1\ntype = \"lbfgs\"\n"));
  EXPECT_EQ(run(file).code, 0);  // the square loss itself passes
  const QuadraticTestLoss decreasing(-1.0, -1.0), wrong_derivative(1.0, 0.6);
  EXPECT_NE(sdprl::smooth_loss_violation(decreasing).find("phi' must be non-negative"), std::string::npos)
      << sdprl::smooth_loss_violation(decreasing);
  EXPECT_NE(sdprl::smooth_loss_violation(wrong_derivative).find("phi' disagrees with phi"), std::string::npos)
      << sdprl::smooth_loss_violation(wrong_derivative);
}

// Twelve labelled points in R^4 (LIBSVM), each coordinate times `scale`: a small CMVU data set.
std::string twelve_points(double scale = 1.0) {
  const double x[12][4] = {{1.905, 2.12, 2.848, 1.931}, {3.016, 3.175, 2.369, 3.024}, {4.26, 4.586, 3.188, 3.607},
                           {1.181, 2.619, 2.387, 1.084}, {3.964, 3.93, 3.308, 3.231},  {3.315, 3.03, 4.057, 3.119},
                           {1.38, 1.484, 1.06, 1.928},   {2.881, 3.685, 3.038, 3.281}, {4.0, 4.325, 3.915, 3.556},
                           {2.995, 2.991, 2.68, 2.416},  {2.631, 2.459, 2.578, 2.14},  {4.533, 3.801, 4.693, 3.773}};
  std::ostringstream os;
  os.precision(17);
  for (int i = 0; i < 12; ++i) {
    os << 1 + i % 3;
    for (int f = 0; f < 4; ++f) os << ' ' << f + 1 << ':' << x[i][f] * scale;
    os << '\n';
  }
  return os.str();
}

// CMVU on data near 1e-150: the targets (squared distances) near 1e-300 squared to 0 in the RMSE,
// which read 0 with no relative RMSE at all. The metrics now scale before they square.
TEST_F(BadInputTest, TinyDataKeepsItsMetrics) {
  const std::string text = "[model]\ntype = \"cmvu\"\ndata = \"data.libsvm\"\nneighbours = 2\ncorruption = \"none\"\n"
                           "[loss]\ntype = \"l1\"\n[regularizer]\ngamma = 0.01\nlambda = 1.0\n[solver]\nrank = 3\n";
  write_file(dir() / "data.libsvm", twelve_points(1e-150));
  ASSERT_EQ(run(model(text)).code, 0);
  const json tiny = json::parse(read_file(out() / "summary.json")).at("metrics");
  write_file(dir() / "data.libsvm", twelve_points());
  ASSERT_EQ(run(model(text), {"--force"}).code, 0);
  const json unit = json::parse(read_file(out() / "summary.json")).at("metrics");
  ASSERT_TRUE(tiny.contains("test_relative_rmse")) << tiny.dump();
  EXPECT_NEAR(tiny.at("test_relative_rmse").get<double>(), unit.at("test_relative_rmse").get<double>(), 0.05);
  EXPECT_NEAR(tiny.at("test_rmse").get<double>() / 1e-300, unit.at("test_rmse").get<double>(), 0.1);
}

// CMVU on data near 1e100: F(X_0) = 7e200 is finite, an early row-split step overflows (the first
// or the second: which one depends on the machine's rounding of the ADMM sums). The message said
// "non-finite objective at MM iteration k" alone; it now says what to do.
TEST_F(BadInputTest, OverflowingStepSaysToRescale) {
  write_file(dir() / "data.libsvm", twelve_points(1e100));
  const Result r = run(model("[model]\ntype = \"cmvu\"\ndata = \"data.libsvm\"\nneighbours = 2\ncorruption = \"none\"\n"
                             "[loss]\ntype = \"l1\"\n[regularizer]\ngamma = 0.01\nlambda = 1.0\n[solver]\nrank = 3\n"
                             "admm = { xt_step = \"row-split\" }\n"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("non-finite objective at MM iteration "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the step overflowed; data or parameters far from unit scale? rescale them"), std::string::npos)
      << r.err;
  EXPECT_EQ(json::parse(read_file(out() / "summary.json")).at("status"), "numerical_error");
}

// The default on distance terms, the exact surrogate's dual coordinate step, keeps its sums within
// range there: the run at 1e100 is the unit-scale run scaled by 1e200 (F and the squared
// distances scale by s^2), to rounding.
TEST_F(BadInputTest, DefaultStepOnHugeDataIsTheUnitRunScaled) {
  const std::string text = "[model]\ntype = \"cmvu\"\ndata = \"data.libsvm\"\nneighbours = 2\ncorruption = \"none\"\n"
                           "[loss]\ntype = \"l1\"\n[regularizer]\ngamma = 0.01\nlambda = 1.0\n[solver]\nrank = 3\n";
  write_file(dir() / "data.libsvm", twelve_points(1e100));
  ASSERT_EQ(run(model(text)).code, 0);
  const json big = json::parse(read_file(out() / "summary.json"));
  write_file(dir() / "data.libsvm", twelve_points());
  ASSERT_EQ(run(model(text), {"--force"}).code, 0);
  const json unit = json::parse(read_file(out() / "summary.json"));
  // Both end certified by MM's early polish (direct solves, docs/method.md section 7.6).
  EXPECT_EQ(big.at("status"), "optimal");
  EXPECT_EQ(unit.at("status"), "optimal");
  EXPECT_NEAR(big.at("objective").at("final").get<double>() / 1e200, unit.at("objective").at("final").get<double>(),
              1e-9 * unit.at("objective").at("final").get<double>());
  EXPECT_NEAR(big.at("metrics").at("test_rmse").get<double>() / 1e200, unit.at("metrics").at("test_rmse").get<double>(),
              1e-9 * unit.at("metrics").at("test_rmse").get<double>());
}

// L-BFGS wrote a trace row per improving evaluation, line-search trials included: trace.csv had
// more rows than summary.json's mm_iterations (94 against 82 on a CMVU model). One row per
// iteration now (row 0 the start), the last row's F the final objective, X.mtx that point's.
TEST_F(BadInputTest, LbfgsTraceHasOneRowPerIteration) {
  // Twelve points in R^4 (CMVU): L-BFGS takes 82 iterations and 105 evaluations here.
  write_file(dir() / "data.libsvm", twelve_points());
  const fs::path file = model("[model]\ntype = \"cmvu\"\ndata = \"data.libsvm\"\nneighbours = 2\ncorruption = \"none\"\n"
                              "[loss]\ntype = \"square\"\n[regularizer]\ngamma = 0.01\nlambda = 1.0\n"
                              "[solver]\nrank = 3\nthreads = 1\n");
  for (const std::string cap : {"2000", "60"}) {
    const Result r = run(file, {"--set", "solver.max_mm_iterations=" + cap, "--force"});
    ASSERT_LE(r.code, 1) << r.err;
    const json s = json::parse(read_file(out() / "summary.json"));
    std::vector<std::vector<std::string>> rows;
    std::istringstream trace(read_file(out() / "trace.csv"));
    std::string line;
    std::getline(trace, line);  // header
    while (std::getline(trace, line)) {
      std::vector<std::string> fields;
      std::stringstream fs_(line);
      std::string field;
      while (std::getline(fs_, field, ',')) fields.push_back(field);
      rows.push_back(fields);
    }
    ASSERT_FALSE(rows.empty());
    const int iterations = s.at("mm_iterations").get<int>();
    EXPECT_EQ(static_cast<int>(rows.size()), iterations + 1) << cap;
    EXPECT_EQ(std::stoi(rows.back()[1]), iterations) << cap;
    EXPECT_NEAR(std::stod(rows.back()[2]), s.at("objective").at("final").get<double>(),
                1e-9 * std::abs(s.at("objective").at("final").get<double>())) << cap;
    if (cap == "60") {
      EXPECT_EQ(iterations, 60);
    }
  }
}

// An L-BFGS line search that ends on a NaN point (its last trial): the run went on with NaN rows
// for 2000 iterations and then failed to write X.mtx (exit 2, no summary). It stops with
// numerical_error (exit 3), the best finite point as X.mtx, and a complete summary.
TEST_F(BadInputTest, LbfgsReachingNaNKeepsTheBestFinitePoint) {
  const std::string observations = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1e100\n2 2 1\n1 2 2\n";
  const fs::path file = model(file_model("", "square", "rank = 1\n"), observations);
  const Result r = run(file);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("L-BFGS reached a non-finite objective or iterate; the factor is the best finite point seen"),
            std::string::npos) << r.err;
  const json s = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(s.at("status"), "numerical_error");
  EXPECT_TRUE(std::isfinite(s.at("objective").at("final").get<double>()));
  for (double x : sdprl::testing_support::matrix_market_values(out() / "X.mtx")) EXPECT_TRUE(std::isfinite(x));
}

// A loss that throws in the middle of the solve: the message says which lambda, loss and
// application, and the run leaves no empty output directory behind (it left one, and a message
// naming nothing).
TEST_F(BadInputTest, PluginThatThrowsDuringTheSolve) {
  const fs::path file = model(file_model("", "test-throw-later"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, "lambda = 0\\.1", {"a plugin failed during the solve (loss 'test-throw-later', application "
                                        "'matrix-completion'): out of widgets at call 50"});
}

// A lambda grid whose second lambda fails: the first lambda's result was lost with the run. It is
// kept in the checkpoint, the message says how to continue, and --resume gives both lambdas the
// results of a run that never failed. (The loss throws from its 4500th evaluate(): each lambda of
// this model makes about 3150 calls on one thread.)
TEST_F(BadInputTest, PluginThatThrowsLaterInTheGridKeepsTheFinishedLambdas) {
  const std::string text = synthetic_model("threads = 1\nmax_mm_iterations = 20\n[solver.admm]\nxt_step = \"row-split\"\n");
  auto with = [&](const std::string& after) {
    std::string t = std::regex_replace(text, std::regex("type = \"leaky-mcp\""), "type = \"test-throw-later\"");
    t = std::regex_replace(t, std::regex("\\[loss\\.leaky-mcp\\]\ntheta = 5.0\neta = 0.05\n"),
                           "[loss.test-throw-later]\nafter = " + after + "\n");
    return std::regex_replace(t, std::regex("lambda = 1.0"), "lambda = [1.0, 0.5]");
  };
  const fs::path whole = dir() / "whole";
  ASSERT_EQ(run(model(with("1000000")), {"--plugin-path", kTestPluginDir.string()}, "", whole).code, 1);
  const Result r = run(model(with("4500")), {"--plugin-path", kTestPluginDir.string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "sdprl: error: lambda = 0.5: a plugin failed during the solve (loss 'test-throw-later', application "
                   "'matrix-completion'): out of widgets at call 4500. The lambda finished before it is kept: `sdprl "
                   "run --resume " + out().string() + "` continues from lambda = 0.5\n");
  ASSERT_TRUE(fs::exists(out() / "checkpoint.sdprl"));
  EXPECT_FALSE(fs::exists(out() / "summary.json"));
  const auto resumed = sdprl::testing_support::run_sdprl({"run", "--resume", out().string(), "--quiet"}, dir());
  EXPECT_EQ(resumed.code, 1) << resumed.err;  // iteration_limit, as the run that never failed
  const json a = json::parse(read_file(whole / "summary.json"));
  const json b = json::parse(read_file(out() / "summary.json"));
  ASSERT_EQ(b["lambda_grid"].size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a["lambda_grid"][i]["objective"], b["lambda_grid"][i]["objective"]) << i;
    EXPECT_EQ(a["lambda_grid"][i]["mm_iterations"], b["lambda_grid"][i]["mm_iterations"]) << i;
  }
  EXPECT_EQ(sdprl::testing_support::matrix_market_values(whole / "X.mtx"),
            sdprl::testing_support::matrix_market_values(out() / "X.mtx"));
  EXPECT_FALSE(fs::exists(out() / "checkpoint.sdprl"));
}

TEST_F(BadInputTest, LossViolatingConcavity) {
  const fs::path file = model(file_model("", "test-convex"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, located(file, 5), {"loss.type: loss 'test-convex': cannot be used by the MM solver",
                                       "phi is not concave: phi'(1e-06) = 1.000001 > phi'(0) = 1"});
}

// A loss whose parameters break the contract is refused at its table (it named the loss alone).
TEST_F(BadInputTest, LossParametersBreakingTheContractAreLocated) {
  const fs::path file = model(file_model("", "geman") + "[loss.geman]\ntheta = 1e-200\n");
  expect_refused(run(file), located(file, 10),
                 {"loss.geman: loss 'geman': cannot be used by the MM solver", "phi'(0) = inf"});
}

TEST_F(BadInputTest, LossDerivativeDisagreesWithValue) {
  const fs::path file = model(file_model("", "test-wrong-derivative"));
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  expect_refused(r, located(file, 5),
                 {"loss.type: loss 'test-wrong-derivative': cannot be used by the MM solver", "phi' disagrees with phi: the slope (phi(b) - phi(a)) / (b - a) = "
                                                     "0.9999995 between a = 0 and b = 1e-06 is not within [phi'(b), "
                                                     "phi'(a)] = [0.4999995, 0.5]"});
}

// ---------------------------------------------------------------------------------------------
// The output.

// An output directory belongs to one run at a time: a second run while the first holds the lock
// (here: this test process holds it) is refused, and nothing of the first is touched.
TEST_F(BadInputTest, OutputDirectoryInUse) {
  const fs::path file = model(file_model());
  fs::create_directories(out());
  write_file(out() / "X.mtx", "the first run's\n");
  {
    const sdprl::OutputLock first(out());
    const Result r = run(file);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "sdprl: error: " + out().string() + ": another sdprl run (process " + std::to_string(::getpid()) +
                         ") is writing into this output directory; wait for it, or give another --out\n");
    EXPECT_EQ(read_file(out() / "X.mtx"), "the first run's\n");
  }
  EXPECT_FALSE(fs::exists(out() / ".sdprl.lock"));  // removed with the lock
  EXPECT_EQ(run(file).code, 0);                     // free again
  EXPECT_FALSE(fs::exists(out() / ".sdprl.lock"));
}

// A new run into a directory that holds a checkpoint would delete the unfinished run's state:
// refused, naming --resume and --force; --force starts over.
TEST_F(BadInputTest, CheckpointInOutputDirectory) {
  const fs::path file = model(file_model());
  fs::create_directories(out());
  write_file(out() / "checkpoint.sdprl", "an unfinished run's state");
  const Result r = run(file);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "sdprl: error: " + out().string() + ": holds the checkpoint of an unfinished run: continue it with "
                       "`sdprl run --resume " + out().string() + "`, or start a new run there with --force (which "
                       "deletes it)\n");
  EXPECT_EQ(read_file(out() / "checkpoint.sdprl"), "an unfinished run's state");
  const Result forced = run(file, {"--force"});
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_FALSE(fs::exists(out() / "checkpoint.sdprl"));
  EXPECT_TRUE(fs::exists(out() / "summary.json"));
}

// [output] directory = "" would write into the working directory.
TEST_F(BadInputTest, EmptyOutputDirectory) {
  const fs::path file = model(file_model() + "\n[output]\ndirectory = \"\"\n");
  sdprl::RunRequest req;
  req.model_file = file;
  req.quiet = true;
  try {
    sdprl::run_model(req);
    ADD_FAILURE() << "an empty output directory was accepted";
  } catch (const sdprl::Error& e) {
    EXPECT_TRUE(std::regex_match(e.where(), std::regex(escape_regex(file.string()) + ":[0-9]+:[0-9]+"))) << e.where();
    EXPECT_EQ(e.message(), "output.directory: an empty directory would write the outputs into the current directory; name one");
  }
}

TEST_F(BadInputTest, OutputDirectoryNotWritable) {
  // Below a regular file: no directory can be created there (even by root).
  write_file(dir() / "a_file", "x");
  const fs::path file = model(file_model());
  const fs::path target = dir() / "a_file" / "out";
  const Result r = run(file, {}, "", target);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^sdprl: error: " + escape_regex(target.string()) +
                                                  ": output directory is not writable: ")))
      << r.err;
  EXPECT_EQ(r.out, "");
}

// The disk fills up while X.mtx is written: a 4 KB tmpfs (in a private mount namespace) holds the
// write probe but not the factor of the 150 x 3 model. The run answers with the file and the
// system's reason, and leaves no temporary file; summary.json is never written.
TEST_F(BadInputTest, DiskFullWhileWriting) {
  const fs::path small = dir() / "small";
  fs::create_directories(small);
  if (std::system("unshare -m true >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mount namespace (unshare -m)";
  const fs::path file = model(synthetic_model());
  const std::string mount = "mount -t tmpfs -o size=4k tmpfs " + shell_quote(small.string()) + " &&";
  // The listing is taken inside the namespace: the tmpfs is gone when it ends.
  const fs::path listing = dir() / "listing.txt";
  const Result r = run(file, {}, "unshare -m /bin/sh -c " +
                                     shell_quote(mount + " \"$0\" \"$@\"; s=$?; ls -a " +
                                                 shell_quote((small / "out").string()) + " > " +
                                                 shell_quote(listing.string()) + "; exit $s") +
                                     " ", small / "out");
  // (the wrapper passes the program and its arguments through "$0" "$@")
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^sdprl: error: " + escape_regex((small / "out" / "X.mtx").string()) +
                                                  ": cannot write: .*No space left on device")))
      << r.err;
  const std::string files = read_file(listing);
  EXPECT_EQ(files.find(".tmp."), std::string::npos) << files;
  EXPECT_EQ(files.find("X.mtx"), std::string::npos) << files;
  EXPECT_EQ(files.find("summary.json"), std::string::npos) << files;
}

// The same with a file size limit (ulimit -f): sdprl ignores SIGXFSZ itself (which otherwise ends
// it mid-write with no message and a temporary file left), so writes fail with EFBIG.
TEST_F(BadInputTest, FileSizeLimitWhileWriting) {
  const fs::path file = model(synthetic_model());
  const Result r = run(file, {}, "ulimit -f 8;");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^sdprl: error: " + escape_regex((out() / "X.mtx").string()) +
                                                  ": cannot write: .*File too large")))
      << r.err;
  expect_no_partial_files(out());
  EXPECT_FALSE(fs::exists(out() / "X.mtx"));
  EXPECT_FALSE(fs::exists(out() / "summary.json"));
}

// Small MM steps that come from ADMMs stopped at their iteration cap above their tolerance are not
// convergence (a hand-set rho of 1e8 ended "converged", exit 0, 9% above the default run's F): the
// run ends with status iteration_limit, exit 1, and says why.
TEST_F(BadInputTest, SmallStepsFromUnsolvedSubproblemsAreNotConvergence) {
  const fs::path file = model(synthetic_model());
  // (Row-split: the default exact step on these entry terms has no rho.)
  const Result r = run(file, {"--set", "solver.admm.rho=1e8", "--set", "solver.admm.max_iterations=50", "--set",
                              "solver.admm.xt_step=row-split"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("sdprl: not converged: the last 3 MM steps' ADMM runs all stopped at admm.max_iterations = 50"),
            std::string::npos)
      << r.err;
  const json summary = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(summary["status"], "iteration_limit");
  EXPECT_LT(summary["mm_iterations"].get<int>(), 2000);
  EXPECT_EQ(run(file).code, 0);  // the default rho converges
}

// A run that cannot write one of its outputs (here a directory where trace.csv goes) replaces
// none: the previous run's X.mtx and summary.json stay as they were, and no temporary file is left
// (they were replaced one by one, so a new X.mtx sat beside the old summary).
TEST_F(BadInputTest, FailedWriteKeepsThePreviousOutputsWhole) {
  const fs::path file = model(synthetic_model());
  ASSERT_EQ(run(file).code, 0);
  const std::string x = read_file(out() / "X.mtx"), summary = read_file(out() / "summary.json");
  fs::remove(out() / "trace.csv");
  fs::create_directories(out() / "trace.csv");
  const Result r = run(file, {"--set", "regularizer.lambda=0.5"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("trace.csv: cannot write: it is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(out() / "X.mtx"), x);
  EXPECT_EQ(read_file(out() / "summary.json"), summary);
  expect_no_partial_files(out());
}

// ---------------------------------------------------------------------------------------------
// Numerical failure.

// A starting factor whose Gram matrix overflows (entries 1e200): the objective is Inf from the
// start. The run stops with status numerical_error (exit 3) and writes a complete summary.
TEST_F(BadInputTest, NumericalBlowUp) {
  write_file(dir() / "X0.mtx", "%%MatrixMarket matrix array real general\n6 1\n1e200\n1e200\n1e200\n1e200\n1e200\n1e200\n");
  const fs::path file = model(file_model("", "l1", "rank = 1\ninit = \"file\"\ninit_file = \"X0.mtx\"\n"));
  const Result r = run(file);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.out.find("status = numerical_error"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "sdprl: error: solver: numerical failure: the objective at the starting point is not finite; "
                   "summary.json, trace.csv and the last finite iterate are in " + out().string() + "\n");
  expect_no_partial_files(out());
  ASSERT_TRUE(fs::exists(out() / "summary.json"));
  EXPECT_EQ(json::parse(read_file(out() / "summary.json")).at("status"), "numerical_error");
}

// Sparse PCA on data near 1e80: the covariance's squares overflow, the ADMM's gap is inf, and the
// first step rose from F = -8.3e160 to 0 within eps_1 = |F_0|; the run then ended "converged"
// (exit 0) at X = 0. An infinite gap explains no rise: numerical_error, the PCA start kept.
TEST_F(BadInputTest, RiseAfterAnInfiniteGap) {
  write_file(dir() / "data.txt", "1 1e80 3e80\n2 2e80 1e80\n1 4e80 2e80\n");
  const fs::path file = model("[model]\ntype = \"sparse-pca\"\ndata = \"data.txt\"\nnormalize = \"center\"\nrank = 1\n"
                              "[loss]\ntype = \"l1\"\n[regularizer]\ngamma = 10.0\nlambda = 0.0\n"
                              "[solver]\ninit = \"model\"\n");
  const Result r = run(file);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("the objective rose at MM iteration 1 from -8.33333333333333"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("after an ADMM whose duality gap was inf, which bounds no rise: its sums overflowed"),
            std::string::npos) << r.err;
  const json s = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(s.at("status"), "numerical_error");
  EXPECT_LT(s.at("objective").at("final").get<double>(), -8e160);
}

// Rule 4's floor was 1e-12 |F_0|, which grows with the start: at lambda = 1e100, F_0 = 3.7e32 and
// the run "converged" at F = 22.3 where X = 0 gives F(0) = sum |t| = 4, the minimum (every step
// still fell by 90%, measured against the floor 3.7e20). The floor's size is now min(|F_0|, F(0)).
TEST_F(BadInputTest, HugeLambdaReachesTheZeroFactorsValue) {
  const std::string observations = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n1 2 2\n";
  const fs::path file = model(file_model("", "l1", "rank = 1\n"), observations);
  const Result r = run(file, {"--set", "regularizer.lambda=1e100"});
  EXPECT_EQ(r.code, 0) << r.err;
  const json s = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(s.at("status"), "optimal") << "the l1 certificate proves F(0) = 4 the minimum";
  EXPECT_NEAR(s.at("objective").at("final").get<double>(), 4.0, 1e-6);
}

// X = 0 is a stationary point of F: from it MM "converges" at once (objective 1213 against 145 on
// the quickstart). Refused, with the column named.
TEST_F(BadInputTest, ZeroStartingFactor) {
  write_file(dir() / "X0.mtx", "%%MatrixMarket matrix array real general\n6 1\n0\n0\n0\n0\n0\n0\n");
  const fs::path file = model(file_model("", "l1", "rank = 1\ninit = \"file\"\ninit_file = \"X0.mtx\"\n"));
  const Result r = run(file);
  expect_refused(r, located(file, 11), {"solver.init_file: column 1 of the starting factor is zero (the whole factor is zero): MM never "
                                         "moves a zero column of X"});
}

// A loss plugin whose batched values jump up from its 4th call on (tests/plugins/jump_loss.cc):
// F rises in MM step 3 (the loss is evaluated once at the start and once per step) by about
// 8 x 100, far beyond eps_3 = F_0 / 3^1.5 = 12, which no inexact ADMM explains (a jump of 1 per term
// stays within eps_3 and is only counted in monotonicity_violations). The run stops there with status numerical_error
// (exit 3) and writes the iterate before the rise: X.mtx equals the factor of the same run
// stopped by max_mm_iterations = 2.
TEST_F(BadInputTest, RisingObjective) {
  // The coupled Xt-step: its rebuild calls the loss once per MM step, which the plugin counts (the
  // row-split one-pass rebuild calls it once per row; over-relaxation's trial points would call it
  // more often).
  const fs::path file = model(file_model("", "test-jump", "rank = 1\noverrelax = false\n[solver.admm]\nxt_step = \"coupled\"\n") +
                              "[loss.test-jump]\nafter = 4\njump = 100.0\n");
  const Result r = run(file, {"--plugin-path", kTestPluginDir.string()});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.out.find("status = numerical_error"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex("^sdprl: error: solver: numerical failure: the objective rose at MM iteration 3 from "
                        "[0-9.e+-]+ to [0-9.e+-]+ \\(by [0-9.e+-]+\\), more than eps_k = [0-9.e+-]+ \\(ADMM gap "
                        "[0-9.e+-]+\\) allows: the surrogate does not majorise F .*; the factor is the last good "
                        "iterate; summary.json, trace.csv and the last finite iterate are in .*\n$")))
      << r.err;
  expect_no_partial_files(out());
  const json s = json::parse(read_file(out() / "summary.json"));
  EXPECT_EQ(s.at("status"), "numerical_error");
  EXPECT_EQ(s.at("mm_iterations"), 2);
  EXPECT_EQ(s.at("monotonicity_violations"), 1);
  // The message's F before the rise is F(X_2), the summary's final objective.
  const double f2 = s.at("objective").at("final").get<double>();
  char f2_text[64];
  std::snprintf(f2_text, sizeof f2_text, "from %.17g to ", f2);
  EXPECT_NE(r.err.find(f2_text), std::string::npos) << f2_text << " in " << r.err;

  const fs::path two = dir() / "two_steps";
  const Result r2 = run(file, {"--plugin-path", kTestPluginDir.string(), "--set", "solver.max_mm_iterations=2",
                                   "--set", "solver.relative_tolerance=0"}, "", two);
  ASSERT_EQ(r2.code, 0) << r2.err;
  EXPECT_EQ(json::parse(read_file(two / "summary.json")).at("status"), "iteration_limit");
  const std::vector<double> X = sdprl::testing_support::matrix_market_values(out() / "X.mtx");
  ASSERT_EQ(X.size(), 6u);
  EXPECT_EQ(X, sdprl::testing_support::matrix_market_values(two / "X.mtx"));
}

// ---------------------------------------------------------------------------------------------
// sdprl run --resume DIR.

class ResumeBadInputTest : public BadInputTest {
 protected:
  // A checkpoint in out(): the quickstart model (copied to model.toml, so that the test may edit
  // it) at n = 1000, a checkpoint every 10 ms, killed with SIGKILL once the first one exists.
  fs::path checkpointed_run() {
    const fs::path file = dir() / "model.toml";
    write_file(file, read_file(fs::path(SDPRL_SOURCE_DIR) / "models" / "quickstart.toml"));
    const pid_t pid = sdprl::testing_support::spawn_sdprl(
        {"run", file.string(), "--quiet", "--out", out().string(), "--set", "model.synthetic.m=1000", "--set",
         "regularizer.lambda=1", "--set", "solver.checkpoint_interval=0.01"},
        dir() / "run.out", dir() / "run.err");
    const bool saved = sdprl::testing_support::wait_for_file(out() / "checkpoint.sdprl", pid, 60.0);
    ::kill(pid, SIGKILL);
    sdprl::testing_support::wait_exit(pid);
    EXPECT_TRUE(saved) << read_file(dir() / "run.err");
    return file;
  }
  Result resume(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"run", "--resume", out().string(), "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = sdprl::testing_support::run_sdprl(args, dir());
    return Result{r.code, r.out, r.err};
  }
  // Exit 2, nothing on stdout, one line "sdprl: error: WHERE: WHAT".
  static void expect_refused_resume(const Result& r, const std::string& where, const std::string& what) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line:\n" << r.err;
    EXPECT_EQ(r.err.rfind("sdprl: error: " + where + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << "'" << what << "' in:\n" << r.err;
  }
};

TEST_F(ResumeBadInputTest, NoCheckpoint) {
  fs::create_directories(out());
  expect_refused_resume(resume(), (out() / "checkpoint.sdprl").string(),
                        "no checkpoint to resume from: the file does not exist");
  EXPECT_FALSE(fs::exists(out() / "summary.json"));
}

// --force starts a new run over a checkpoint, --resume continues it: together they were accepted
// and --force ignored.
TEST_F(ResumeBadInputTest, ResumeWithForce) {
  fs::create_directories(out());
  expect_refused_resume(resume({"--force"}), "--force", "--resume continues one: give one of them");
}

// A directory named checkpoint.sdprl was "does not exist"; a file holding only the magic was
// "expected the file to start with" that magic.
TEST_F(ResumeBadInputTest, CheckpointThatIsADirectoryOrOnlyTheMagic) {
  fs::create_directories(out() / "checkpoint.sdprl");
  expect_refused_resume(resume(), (out() / "checkpoint.sdprl").string(), "is not a regular file; expected sdprl's checkpoint there");
  fs::remove(out() / "checkpoint.sdprl");
  write_file(out() / "checkpoint.sdprl", "SDPRL-CHECKPOINT");
  expect_refused_resume(resume(), (out() / "checkpoint.sdprl").string(), "corrupted checkpoint: truncated after 16 bytes");
}

TEST_F(ResumeBadInputTest, CorruptedCheckpoint) {
  checkpointed_run();
  const fs::path checkpoint = out() / "checkpoint.sdprl";
  std::string bytes = read_file(checkpoint);
  ASSERT_GT(bytes.size(), 1000u);
  bytes[bytes.size() / 2] ^= 0x10;  // one flipped bit
  write_file(checkpoint, bytes);
  expect_refused_resume(resume(), checkpoint.string(), "corrupted checkpoint: its checksum does not match");
  write_file(checkpoint, bytes.substr(0, bytes.size() / 3));  // truncated
  expect_refused_resume(resume(), checkpoint.string(), "corrupted checkpoint: its checksum does not match");
  write_file(checkpoint, "not a checkpoint\n");
  expect_refused_resume(resume(), checkpoint.string(), "not an sdprl checkpoint");
  EXPECT_FALSE(fs::exists(out() / "summary.json"));
}

TEST_F(ResumeBadInputTest, ModelFileChanged) {
  const fs::path file = checkpointed_run();
  write_file(file, read_file(file) + "# edited after the run started\n");
  expect_refused_resume(resume(), file.string(), "the model file changed since the checkpoint");
  // A model file or --set with --resume: the saved run is continued as it was started, or not at all.
  expect_refused_resume(resume({"--set", "regularizer.lambda=2"}), "--resume",
                        "with its own model file, --set options and output directory");
  expect_refused_resume(resume({file.string()}), "--resume", "give no MODEL.toml");
  EXPECT_FALSE(fs::exists(out() / "summary.json"));
}

}  // namespace
