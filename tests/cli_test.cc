// End-to-end tests of the `sdprl` program (tools/sdprl/main.cc), run as a subprocess: exit
// status, stdout, stderr and the output files (summary.json, trace.csv, X.mtx), on small synthetic
// and MatrixMarket models written into a fresh temporary directory per test; plus the two
// acceptance runs of models/quickstart.toml (leaky-MCP and --set loss.type=l1).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.h"
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using sdprl::testing_support::TempDir;
using sdprl::testing_support::shell_quote;

const fs::path kExecutable = SDPRL_EXECUTABLE;
const fs::path kSourceDir = SDPRL_SOURCE_DIR;
const fs::path kPluginBuildDir = SDPRL_PLUGIN_BUILD_DIR;

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

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Result {
  int code = -1;
  std::string out, err;
};

// Runs `program args...` with SDPRL_PLUGIN_PATH unset, stdout and stderr captured in files of
// `dir`. The exit status is WEXITSTATUS of the shell's status.
Result run_program(const fs::path& program, const std::vector<std::string>& args, const fs::path& dir) {
  static int counter = 0;
  const std::string tag = std::to_string(++counter);
  const fs::path out_file = dir / ("stdout_" + tag + ".txt");
  const fs::path err_file = dir / ("stderr_" + tag + ".txt");
  std::string command = "env -u SDPRL_PLUGIN_PATH " + shell_quote(program.string());
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " >" + shell_quote(out_file.string()) + " 2>" + shell_quote(err_file.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_file);
  r.err = read_file(err_file);
  return r;
}

Result run_sdprl(const std::vector<std::string>& args, const fs::path& dir) {
  return run_program(kExecutable, args, dir);
}

// The `key = value` lines of stdout.
std::map<std::string, std::string> stdout_values(const std::string& out) {
  std::map<std::string, std::string> values;
  for (const std::string& line : lines_of(out)) {
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    values[line.substr(0, eq)] = line.substr(eq + 3);
  }
  return values;
}

double stdout_number(const Result& r, const std::string& key) {
  const auto values = stdout_values(r.out);
  const auto it = values.find(key);
  if (it == values.end()) {
    ADD_FAILURE() << "no '" << key << " = ...' line on stdout:\n" << r.out << "\nstderr:\n" << r.err;
    return std::nan("");
  }
  return std::stod(it->second);
}

// "%.6g" as the program prints metrics on stdout.
std::string g6(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// A small synthetic model (m = 150, rank 3: about 20% observed, 5% outliers), solved in well
// under a second.
std::string small_model(const std::string& loss = "leaky-mcp", const std::string& lambda = "1.0",
                        const std::string& extra_solver = "") {
  return "[model]\n"
         "type = \"matrix-completion\"\n"
         "synthetic = { m = 150, rank = 3, s = 2.0, outlier_fraction = 0.05, outlier_magnitude = 10.0, seed = 3 }\n"
         "\n"
         "[loss]\n"
         "type = \"" + loss + "\"\n"
         "[loss.leaky-mcp]\n"
         "theta = 5.0\n"
         "eta = 0.05\n"
         "\n"
         "[regularizer]\n"
         "lambda = " + lambda + "\n"
         "\n"
         "[solver]\n"
         "rank = 3\n" + extra_solver;
}

class CliTest : public ::testing::Test {
 protected:
  const fs::path& dir() const { return tmp_.path(); }
  fs::path model(const std::string& text, const std::string& name = "model.toml") {
    const fs::path file = dir() / name;
    write_file(file, text);
    return file;
  }
  Result run(const std::vector<std::string>& args) { return run_sdprl(args, dir()); }

 private:
  TempDir tmp_;
};

// ---------------------------------------------------------------------------------------------
// A run and its output files.

TEST_F(CliTest, RunWritesSummaryTraceAndFactor) {
  const fs::path file = model(small_model());
  const fs::path out = dir() / "out";
  // Row-split, whose counts are checked below (the default is the exact surrogate on these terms).
  const Result r = run({"run", file.string(), "--quiet", "--out", out.string(), "--set", "solver.admm.xt_step=row-split"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "--quiet prints nothing on stderr";

  const auto values = stdout_values(r.out);
  EXPECT_EQ(values.at("status"), "converged");
  EXPECT_EQ(values.at("output"), out.string());
  const double test_rmse = stdout_number(r, "test_rmse");
  EXPECT_LT(test_rmse, 0.3);

  // summary.json
  ASSERT_TRUE(fs::exists(out / "summary.json"));
  const json s = json::parse(read_file(out / "summary.json"));
  EXPECT_EQ(s.at("status"), "converged");
  EXPECT_EQ(s.at("application"), "matrix-completion");
  EXPECT_EQ(s.at("loss").at("name"), "leaky-mcp");
  EXPECT_DOUBLE_EQ(s.at("loss").at("parameters").at("theta").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(s.at("loss").at("parameters").at("eta").get<double>(), 0.05);
  EXPECT_EQ(s.at("n").get<long>(), 150);
  EXPECT_EQ(s.at("rank").get<long>(), 3);
  EXPECT_DOUBLE_EQ(s.at("lambda").get<double>(), 1.0);
  EXPECT_EQ(s.at("facts").at("observed").get<double>(), s.at("terms").get<double>());
  // Row-split: an off-diagonal term becomes two half-terms, a diagonal term stays whole.
  EXPECT_GT(s.at("split_terms").get<long>(), s.at("terms").get<long>());
  EXPECT_LE(s.at("split_terms").get<long>(), 2 * s.at("terms").get<long>());
  const int mm = s.at("mm_iterations").get<int>();
  EXPECT_GE(mm, 5) << "min_mm_iterations = 5";
  EXPECT_LT(s.at("objective").at("final").get<double>(), s.at("objective").at("initial").get<double>());
  const double json_rmse = s.at("metrics").at("test_rmse").get<double>();
  EXPECT_EQ(g6(json_rmse), values.at("test_rmse"));
  EXPECT_NEAR(json_rmse, test_rmse, 1e-5 * test_rmse);
  EXPECT_EQ(std::to_string(mm), values.at("mm_iterations"));
  EXPECT_EQ(s.at("admm_iterations").get<long>(), std::stol(values.at("admm_iterations")));
  ASSERT_EQ(s.at("lambda_grid").size(), 1u);
  EXPECT_EQ(s.at("lambda_grid")[0].at("mm_iterations").get<int>(), mm);

  // trace.csv: the header, then one row per MM iteration.
  const std::vector<std::string> trace = lines_of(read_file(out / "trace.csv"));
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace[0], "lambda,mm_iteration,objective,relative_change,admm_iterations,gap,tolerance,time,curvature_scale,rho");
  ASSERT_EQ(static_cast<int>(trace.size()) - 1, mm);
  long admm_total = 0;
  for (int k = 1; k <= mm; ++k) {
    std::vector<std::string> fields;
    std::istringstream row(trace[k]);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    ASSERT_EQ(fields.size(), 10u) << trace[k];
    EXPECT_DOUBLE_EQ(std::stod(fields[0]), 1.0);
    EXPECT_EQ(std::stoi(fields[1]), k);
    admm_total += std::stol(fields[4]);
    // No step refused at the default tau = 1; a row-split run keeps the rho of its first step.
    EXPECT_DOUBLE_EQ(std::stod(fields[8]), 1.0);
    EXPECT_DOUBLE_EQ(std::stod(fields[9]), s.at("rho").get<double>());
    if (k == mm) {
      EXPECT_NEAR(std::stod(fields[2]), s.at("objective").at("final").get<double>(),
                  1e-9 * std::abs(s.at("objective").at("final").get<double>()));
    }
  }
  EXPECT_EQ(admm_total, s.at("admm_iterations").get<long>());

  // X.mtx: a MatrixMarket array of n rows and rank columns.
  const std::vector<std::string> x = lines_of(read_file(out / "X.mtx"));
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(x[0].rfind("%%MatrixMarket matrix array real general", 0), 0u) << x[0];
  std::size_t k = 1;
  while (k < x.size() && !x[k].empty() && x[k][0] == '%') ++k;
  ASSERT_LT(k, x.size());
  long rows = 0, cols = 0;
  std::istringstream(x[k]) >> rows >> cols;
  EXPECT_EQ(rows, 150);
  EXPECT_EQ(cols, 3);
  std::size_t values_count = 0;
  for (std::size_t i = k + 1; i < x.size(); ++i) {
    if (x[i].empty()) continue;
    EXPECT_TRUE(std::isfinite(std::stod(x[i]))) << x[i];
    ++values_count;
  }
  EXPECT_EQ(values_count, 150u * 3u);
}

// A word that is no option was dropped without a word by `sdprl plugins`.
TEST_F(CliTest, PluginsRefusesAStrayArgument) {
  const Result r = run_sdprl({"plugins", "extra"}, dir());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "sdprl: error: sdprl plugins: takes no arguments but --plugin-path DIR; got 'extra'\n");
}

// summary.json's peak memory is the process's own high-water mark: what the kernel reports to the
// parent that waits for it (wait4's ru_maxrss, as /usr/bin/time prints it). The quickstart at
// m = 3000 (about 340k terms) holds well over 10 MiB of state, so a figure of the program's start,
// of its current size after freeing, or in the wrong unit fails.
TEST_F(CliTest, PeakMemoryIsTheKernelsHighWaterMark) {
  const fs::path out = dir() / "out";
  const std::vector<std::string> args = {kExecutable.string(), "run", (kSourceDir / "models" / "quickstart.toml").string(),
                                         "--quiet", "--out", out.string(), "--plugin-path", kPluginBuildDir.string(),
                                         "--set", "model.synthetic.m=3000", "--set", "regularizer.lambda=1"};
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    unsetenv("SDPRL_PLUGIN_PATH");
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const double kernel = static_cast<double>(usage.ru_maxrss) / 1024.0;
  const json s = json::parse(read_file(out / "summary.json"));
  const double reported = s.at("processes").at("peak_memory_mib").get<double>();
  EXPECT_GT(kernel, 10.0);
  // The outputs' text is formed after the figure is taken: a little more at most.
  EXPECT_LE(reported, kernel);
  EXPECT_GE(reported, 0.95 * kernel) << "kernel " << kernel << " MiB";
}

TEST_F(CliTest, IterationTableGoesToStderrUnlessQuiet) {
  const fs::path file = model(small_model("l1"));
  const Result r = run({"run", file.string(), "--out", (dir() / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("n = 150, rank = 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("loss = l1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" iter    objective"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("objective   rel.change"), std::string::npos) << "the table must not reach stdout";
  EXPECT_EQ(stdout_values(r.out).at("status"), "converged");
}

// A cap is not a result (docs/bad-input.md): exit 1 with the outputs written and a message that says
// how far from the rule the run was; with relative_tolerance = 0 (a fixed number of steps) exit 0.
TEST_F(CliTest, IterationCapIsNotAResult) {
  const fs::path file = model(small_model("l1", "1.0", "max_mm_iterations = 4\n"));
  const Result r = run({"run", file.string(), "--out", (dir() / "capped").string()});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(stdout_values(r.out).at("status"), "iteration_limit");
  EXPECT_TRUE(fs::exists(dir() / "capped" / "X.mtx"));
  const std::regex why("sdprl: not converged: stopped at max_mm_iterations = 4 before the relative change fell below "
                       "relative_tolerance = 1e-05 on 3 consecutive steps; the last 3 steps' relative changes were "
                       "[0-9.e-]+, [0-9.e-]+, [0-9.e-]+; ");
  EXPECT_TRUE(std::regex_search(r.err, why)) << r.err;
  const fs::path fixed = model(small_model("l1", "1.0", "max_mm_iterations = 4\nrelative_tolerance = 0.0\n"), "fixed.toml");
  const Result f = run({"run", fixed.string(), "--out", (dir() / "fixed").string()});
  EXPECT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(f.err.find("not converged"), std::string::npos) << f.err;
}

// ... unless the certificate proves the capped result optimal: then it is the answer (status
// `optimal`, exit 0). Here MM stops at its cap 4e-3 short of certified at 300 steps, and at 1000
// the end's polish (method.md section 7.6) certifies the point; the cap used to leave it exit 1.
TEST_F(CliTest, CapWithACertifiedOptimumIsAResult) {
  const auto capped = [&](const std::string& cap, const std::string& out) {
    return run({"run", (kSourceDir / "models" / "quickstart.toml").string(), "--quiet", "--out",
                (dir() / out).string(), "--set", "model.synthetic.m=30", "--set", "loss.type=l1", "--set",
                "regularizer.lambda=1", "--set", "solver.rank=20", "--set", "solver.relative_tolerance=1e-12",
                "--set", "solver.max_mm_iterations=" + cap});
  };
  const Result short_run = capped("300", "short");
  EXPECT_EQ(short_run.code, 1) << short_run.err;
  const json s = json::parse(read_file(dir() / "short" / "summary.json"));
  EXPECT_EQ(s.at("status"), "iteration_limit");
  EXPECT_GT(s.at("certificate").at("relative_gap").get<double>(), 1e-4);
  const Result r = capped("1000", "long");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("not converged"), std::string::npos) << r.err;
  const json l = json::parse(read_file(dir() / "long" / "summary.json"));
  EXPECT_EQ(l.at("mm_iterations").get<int>(), 1000);
  EXPECT_EQ(l.at("status"), "optimal");
  EXPECT_LE(l.at("certificate").at("relative_gap").get<double>(), 1e-9);
}

TEST_F(CliTest, DefaultOutputDirectoryIsNamedAfterTheModel) {
  const fs::path file = model(small_model("l1", "1.0", "max_mm_iterations = 5\nrelative_tolerance = 0.0\n"), "tiny.toml");
  // The default directory is relative to the working directory.
  const std::string command = "cd " + shell_quote(dir().string()) + " && env -u SDPRL_PLUGIN_PATH " +
                              shell_quote(kExecutable.string()) + " run tiny.toml --quiet >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(fs::exists(dir() / "sdprl-results" / "tiny" / "summary.json"));
  const json s = json::parse(read_file(dir() / "sdprl-results" / "tiny" / "summary.json"));
  EXPECT_EQ(s.at("status"), "iteration_limit");
  EXPECT_EQ(s.at("mm_iterations").get<int>(), 5);
}

// ---------------------------------------------------------------------------------------------
// Acceptance: models/quickstart.toml (m = 500, leaky-MCP, lambda grid) and its l1 variant.

TEST_F(CliTest, QuickstartLeakyMcp) {
  const Result r = run({"run", (kSourceDir / "models" / "quickstart.toml").string(), "--quiet", "--out",
                        (dir() / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const double rmse = stdout_number(r, "test_rmse");
  EXPECT_LE(rmse, 0.15);
  const json s = json::parse(read_file(dir() / "out" / "summary.json"));
  EXPECT_EQ(s.at("loss").at("name"), "leaky-mcp");
  EXPECT_EQ(s.at("n").get<long>(), 500);
  EXPECT_EQ(s.at("lambda_grid").size(), 3u);
}

TEST_F(CliTest, QuickstartL1) {
  const Result r = run({"run", (kSourceDir / "models" / "quickstart.toml").string(), "--quiet", "--set",
                        "loss.type=l1", "--out", (dir() / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const double rmse = stdout_number(r, "test_rmse");
  // 0.127146 measured (gcc 12, -march=native, x86-64); 5% above it, so that a 10% loss of
  // accuracy fails.
  EXPECT_LE(rmse, 0.134);
  const json s = json::parse(read_file(dir() / "out" / "summary.json"));
  EXPECT_EQ(s.at("loss").at("name"), "l1");
}

// ---------------------------------------------------------------------------------------------
// The lambda grid.

TEST_F(CliTest, LambdaGridKeepsTheLowestValidationError) {
  const fs::path file = model(small_model("leaky-mcp", "[0.1, 1, 10]"));
  const fs::path out = dir() / "out";
  const Result r = run({"run", file.string(), "--out", out.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  // Not quiet: one line per lambda on stderr.
  for (const char* l : {"lambda = 0.1: validation error", "lambda = 1: validation error",
                        "lambda = 10: validation error"})
    EXPECT_NE(r.err.find(l), std::string::npos) << l << "\n" << r.err;

  const json s = json::parse(read_file(out / "summary.json"));
  const json& grid = s.at("lambda_grid");
  ASSERT_EQ(grid.size(), 3u);
  const double expected[] = {0.1, 1.0, 10.0};
  std::size_t best = 0;
  int mm_total = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(grid[i].at("lambda").get<double>(), expected[i]);
    const double v = grid[i].at("validation_error").get<double>();
    EXPECT_TRUE(std::isfinite(v));
    // The validation error is the validation RMSE of that trial.
    EXPECT_DOUBLE_EQ(v, grid[i].at("metrics").at("validation_rmse").get<double>());
    if (v < grid[best].at("validation_error").get<double>()) best = i;
    mm_total += grid[i].at("mm_iterations").get<int>();
  }
  EXPECT_DOUBLE_EQ(s.at("lambda").get<double>(), expected[best]);
  EXPECT_EQ(stdout_values(r.out).at("lambda"), g6(expected[best]));
  EXPECT_EQ(s.at("mm_iterations").get<int>(), grid[best].at("mm_iterations").get<int>());
  EXPECT_DOUBLE_EQ(s.at("metrics").at("test_rmse").get<double>(),
                   grid[best].at("metrics").at("test_rmse").get<double>());
  // trace.csv holds every trial's rows.
  EXPECT_EQ(static_cast<int>(lines_of(read_file(out / "trace.csv")).size()) - 1, mm_total);
}

// ---------------------------------------------------------------------------------------------
// Errors in the model file and on the command line: exit status 2, one located message.

TEST_F(CliTest, TomlSyntaxErrorNamesFileLineAndColumn) {
  const fs::path file = model(
      "[model]\n"
      "type = \"matrix-completion\"\n"
      "\n"
      "[solver]\n"
      "rank = = 5\n"
      "seed = 1\n",
      "bad.toml");
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  const std::regex located("sdprl: error: " + std::regex_replace(file.string(), std::regex("[.]"), "\\.") +
                           ":5:[0-9]+: ");
  EXPECT_TRUE(std::regex_search(r.err, located)) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << "one message:\n" << r.err;
  EXPECT_FALSE(fs::exists(dir() / "out" / "summary.json"));
}

TEST_F(CliTest, UnknownKeySuggestsTheNearestName) {
  std::string text = small_model();
  text.replace(text.find("rank = 3\n"), 9, "rnak = 5\n");
  const fs::path file = model(text);
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown key 'rnak' in [solver]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'rank'"), std::string::npos) << r.err;
  // Located at the key: the last line of the file.
  const int line = static_cast<int>(lines_of(text).size());
  EXPECT_NE(r.err.find(file.string() + ":" + std::to_string(line) + ":1:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() / "out" / "summary.json"));
}

TEST_F(CliTest, OutOfRangeOverrideNamesTheKey) {
  const fs::path file = model(small_model());
  const Result r = run({"run", file.string(), "--quiet", "--set", "solver.admm.rho=-1", "--out",
                        (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("solver.admm.rho"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(">= 0"), std::string::npos) << "the rule is stated: " << r.err;
  EXPECT_FALSE(fs::exists(dir() / "out" / "summary.json"));
}

TEST_F(CliTest, OverrideWithoutValueIsRejected) {
  const fs::path file = model(small_model());
  const Result r = run({"run", file.string(), "--quiet", "--set", "solver.rank"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--set solver.rank"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("KEY=VALUE"), std::string::npos) << r.err;
}

TEST_F(CliTest, RankAboveDimensionIsRejected) {
  const fs::path file = model(small_model());
  const Result r = run({"run", file.string(), "--quiet", "--set", "solver.rank=200", "--out",
                        (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("solver.rank"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("200"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("n = 150"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() / "out")) << "a refused run must not leave an output directory";
}

TEST_F(CliTest, LossParametersOutsideTheirTableAreRejected) {
  std::string text = small_model();
  text.replace(text.find("[loss.leaky-mcp]\ntheta = 5.0\n"), 28, "theta = 5.0\n[loss.leaky-mcp]\n");
  const fs::path file = model(text);
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("[loss.leaky-mcp]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("theta"), std::string::npos) << r.err;
  // Located at the misplaced key (line 7 of the file).
  EXPECT_NE(r.err.find(file.string() + ":7:"), std::string::npos) << r.err;
}

TEST_F(CliTest, MissingModelFileAndUnknownCommand) {
  Result r = run({"run", (dir() / "nope.toml").string(), "--quiet"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.toml"), std::string::npos) << r.err;
  r = run({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
  r = run({"run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing MODEL.toml"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------
// MatrixMarket observations.

// A rank-2 PSD matrix M = V V^T (n = 30) and a mask observing about 40% of its entries.
struct Rank2Data {
  static constexpr int n = 30;
  std::vector<std::vector<double>> M;
  std::vector<std::pair<int, int>> observed, held_out;
  Rank2Data() {
    std::mt19937_64 rng(12345);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<std::array<double, 2>> V(n);
    for (auto& v : V) v = {normal(rng), normal(rng)};
    M.assign(n, std::vector<double>(n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) M[i][j] = V[i][0] * V[j][0] + V[i][1] * V[j][1];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) (uniform(rng) < 0.4 ? observed : held_out).emplace_back(i, j);
  }
  std::string mtx(const std::vector<std::pair<int, int>>& entries, int size = n) const {
    std::ostringstream os;
    os << "%%MatrixMarket matrix coordinate real general\n% rank-2 PSD test matrix\n";
    os << size << ' ' << size << ' ' << entries.size() << '\n';
    os.precision(17);
    for (const auto& [i, j] : entries) os << i + 1 << ' ' << j + 1 << ' ' << M[i][j] << '\n';
    return os.str();
  }
};

std::string file_model(const std::string& lambda = "0.001") {
  return "[model]\n"
         "type = \"matrix-completion\"\n"
         "observations = \"obs.mtx\"\n"
         "test = \"test.mtx\"\n"
         "[loss]\n"
         "type = \"l1\"\n"
         "[regularizer]\n"
         "lambda = " + lambda + "\n"
         "[solver]\n"
         "rank = 2\n";
}

TEST_F(CliTest, MatrixMarketObservationsRecoverARank2Matrix) {
  const Rank2Data d;
  ASSERT_GT(d.observed.size(), 300u);
  write_file(dir() / "obs.mtx", d.mtx(d.observed));
  write_file(dir() / "test.mtx", d.mtx(d.held_out));
  const fs::path file = model(file_model());
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(stdout_number(r, "test_rmse"), 0.05) << r.out;
  const json s = json::parse(read_file(dir() / "out" / "summary.json"));
  EXPECT_EQ(s.at("n").get<long>(), 30);
  EXPECT_EQ(s.at("rank").get<long>(), 2);
  EXPECT_EQ(s.at("numerical_rank").get<long>(), 2);  // the recovered matrix has rank 2
  EXPECT_EQ(s.at("terms").get<std::size_t>(), d.observed.size());
  EXPECT_EQ(s.at("lambda_grid").size(), 1u);
  EXPECT_FALSE(s.at("metrics").contains("validation_rmse"));
}

TEST_F(CliTest, DuplicateObservationIsRejectedWithItsLine) {
  const Rank2Data d;
  std::vector<std::pair<int, int>> entries(d.observed.begin(), d.observed.begin() + 10);
  entries.push_back(entries[3]);  // the 11th entry repeats the 4th
  write_file(dir() / "obs.mtx", d.mtx(entries));
  write_file(dir() / "test.mtx", d.mtx(d.held_out));
  const fs::path file = model(file_model());
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("duplicate"), std::string::npos) << r.err;
  // Banner, comment and size line come first: entry k (1-based) is on line k + 3.
  EXPECT_NE(r.err.find((dir() / "obs.mtx").string() + ":14"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("first given on line 7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(" + std::to_string(entries[3].first + 1) + ", " +
                       std::to_string(entries[3].second + 1) + ")"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir() / "out" / "summary.json"));
}

TEST_F(CliTest, ObservationIndexOutOfRangeIsRejectedWithItsLine) {
  const Rank2Data d;
  std::string text = d.mtx(std::vector<std::pair<int, int>>(d.observed.begin(), d.observed.begin() + 10));
  text += "31 2 1.5\n";  // an 11th entry (line 14) outside the declared 30 x 30
  text.replace(text.find("30 30 10\n"), 9, "30 30 11\n");
  write_file(dir() / "obs.mtx", text);
  write_file(dir() / "test.mtx", d.mtx(d.held_out));
  const fs::path file = model(file_model());
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((dir() / "obs.mtx").string() + ":14"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("31"), std::string::npos) << r.err;
}

TEST_F(CliTest, TestEntryOutsideTheObservedMatrixIsRejectedWithItsLine) {
  const Rank2Data d;
  write_file(dir() / "obs.mtx", d.mtx(d.observed));
  // A 40 x 40 test file whose 3rd entry (line 6) lies outside the 30 x 30 matrix of observations.
  std::string test = "%%MatrixMarket matrix coordinate real general\n% too large\n40 40 3\n1 1 1.0\n2 2 1.0\n35 1 1.0\n";
  write_file(dir() / "test.mtx", test);
  const fs::path file = model(file_model());
  const Result r = run({"run", file.string(), "--quiet", "--out", (dir() / "out").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((dir() / "test.mtx").string() + ":6"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("outside the 30 x 30 matrix"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------
// Plugins.

struct PluginLine {
  std::string name, kind, file;
};

// The rows of `sdprl plugins` (after its header): name, kind and file (the first, second and
// last fields; the description in between may hold spaces).
std::vector<PluginLine> plugin_lines(const std::string& out) {
  std::vector<PluginLine> rows;
  const std::vector<std::string> lines = lines_of(out);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::vector<std::string> fields;
    for (std::string f; in >> f;) fields.push_back(f);
    if (fields.size() < 3) continue;
    rows.push_back({fields[0], fields[1], fields.back()});
  }
  return rows;
}

// What could not be loaded is listed with the reason; a --plugin-path that does not exist is an
// error, not a search of nothing.
TEST_F(CliTest, PluginsListsWhatItCouldNotLoad) {
  const fs::path bad = dir() / "bad";
  fs::create_directories(bad);
  std::ofstream(bad / "sdprl-loss-broken.so") << "not a shared object\n";
  const Result r = run({"plugins", "--plugin-path", bad.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string listed = "\nnot loaded:\n  " + (bad / "sdprl-loss-broken.so").string() + ": ";
  EXPECT_NE(r.out.find(listed), std::string::npos) << r.out;
  const fs::path file = model(small_model());
  for (const std::vector<std::string>& command : {std::vector<std::string>{"plugins"}, {"run", file.string()}}) {
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--plugin-path", (dir() / "no-such-dir").string()});
    const Result missing = run(args);
    EXPECT_EQ(missing.code, 2) << command[0];
    EXPECT_EQ(missing.err, "sdprl: error: --plugin-path: '" + (dir() / "no-such-dir").string() +
                               "' does not exist (expected a directory of plugins or a plugin file)\n")
        << command[0];
  }
}

TEST_F(CliTest, PluginsListsTheBuiltPlugins) {
  const Result r = run({"plugins"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("name", 0), 0u) << lines[0];
  std::map<std::string, PluginLine> by_name;
  for (const PluginLine& p : plugin_lines(r.out)) by_name[p.name] = p;
  const fs::path dir = kPluginBuildDir.lexically_normal();
  const std::vector<std::array<std::string, 2>> expected = {
      {"l1", "loss"}, {"leaky-mcp", "loss"}, {"matrix-completion", "application"}};
  for (const auto& [name, kind] : expected) {
    ASSERT_EQ(by_name.count(name), 1u) << name << " missing from:\n" << r.out;
    EXPECT_EQ(by_name[name].kind, kind);
    const fs::path file = dir / ("sdprl-" + kind + "-" + name + ".so");
    EXPECT_EQ(fs::weakly_canonical(by_name[name].file), fs::weakly_canonical(file)) << r.out;
  }
}

// A copy of the program in <tmp>/bin with only the two loss plugins in <tmp>/lib/sdprl/plugins.
class RelocatedCliTest : public CliTest {
 protected:
  void SetUp() override {
    fs::create_directories(dir() / "bin");
    plugin_dir_ = dir() / "lib" / "sdprl" / "plugins";
    fs::create_directories(plugin_dir_);
    program_ = dir() / "bin" / "sdprl";
    fs::copy_file(kExecutable, program_);
    for (const char* name : {"sdprl-loss-l1.so", "sdprl-loss-leaky-mcp.so"})
      fs::copy_file(kPluginBuildDir / name, plugin_dir_ / name);
  }
  fs::path program_, plugin_dir_;
};

TEST_F(RelocatedCliTest, PluginsListsOnlyTheCopiedPlugins) {
  // The copy runs at all: it finds libsdprl through the build tree's absolute RPATH.
  const Result r = run_program(program_, {"plugins"}, dir());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<PluginLine> rows = plugin_lines(r.out);
  std::set<std::string> names;
  for (const PluginLine& p : rows) {
    names.insert(p.name);
    EXPECT_EQ(p.kind, "loss");
    EXPECT_EQ(fs::path(p.file).parent_path(), plugin_dir_) << p.file;
  }
  EXPECT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(names, (std::set<std::string>{"l1", "leaky-mcp"})) << r.out;
}

TEST_F(RelocatedCliTest, MissingApplicationPluginIsReported) {
  const fs::path file = model(small_model("l1"));
  const Result r = run_program(program_, {"run", file.string(), "--quiet", "--out", (dir() / "out").string()}, dir());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no application plugin named 'matrix-completion'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sdprl-application-matrix-completion.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(plugin_dir_.string() + "/"), std::string::npos) << "the searched directory:\n" << r.err;
  EXPECT_NE(r.err.find((plugin_dir_ / "sdprl-application-matrix-completion.so").string()), std::string::npos)
      << "the searched directory and the file name:\n" << r.err;
  EXPECT_NE(r.err.find("l1 (loss, " + (plugin_dir_ / "sdprl-loss-l1.so").string() + ")"), std::string::npos)
      << "the plugins found:\n" << r.err;
  EXPECT_NE(r.err.find("leaky-mcp (loss, "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() / "out" / "summary.json"));
}

TEST_F(RelocatedCliTest, PluginPathOptionFindsTheApplication) {
  // --plugin-path makes the missing application available again.
  const fs::path file = model(small_model("l1", "1.0", "max_mm_iterations = 3\nrelative_tolerance = 0.0\n"));
  const Result r = run_program(program_,
                               {"run", file.string(), "--quiet", "--plugin-path", kPluginBuildDir.string(),
                                "--out", (dir() / "out").string()},
                               dir());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(stdout_values(r.out).at("status"), "iteration_limit");
  EXPECT_EQ(stdout_values(r.out).at("mm_iterations"), "3");
}

}  // namespace
