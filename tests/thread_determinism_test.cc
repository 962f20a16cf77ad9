// The solver's results do not depend on the thread count: a full `sdprl run` (spectral start, MM
// steps, ADMM) of a quickstart-like model at threads = 1 and threads = 2 writes bitwise the same
// X.mtx. The instance has more than 2 x 10^5 observed entries, so that the spectral start's
// adjoint (EntryTerms::apply_adjoint_sym) takes its chunked path, and more than 64 rows per thread
// for the row loops of the ADMM.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_files.h"
#include "test_run.h"

namespace {

namespace fs = std::filesystem;
using sdprl::testing_support::read_text;
using sdprl::testing_support::run_sdprl;

// X.mtx of a short run at threads = 1 and threads = 2, with `extra` settings.
void expect_same_x_for_one_and_two_threads(const std::vector<std::string>& extra) {
  sdprl::testing_support::TempDir tmp;
  const fs::path model = fs::path(SDPRL_SOURCE_DIR) / "models" / "quickstart.toml";
  std::string X[2];
  double F[2] = {0.0, 0.0};
  for (int threads : {1, 2}) {
    const fs::path out = tmp.path() / ("threads" + std::to_string(threads));
    std::vector<std::string> args = {"run", model.string(), "--quiet", "--out", out.string(),
                                     "--set", "model.synthetic.m=1500", "--set", "model.synthetic.s=4.0",
                                     "--set", "regularizer.lambda=1.0", "--set", "solver.max_mm_iterations=4",
                                     "--set", "solver.relative_tolerance=0",
                                     "--set", "solver.threads=" + std::to_string(threads)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_sdprl(args, tmp.path());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto summary = nlohmann::json::parse(read_text(out / "summary.json"));
    ASSERT_GE(summary.at("facts").at("observed").get<double>(), 2e5) << "the instance is too small for the chunked path";
    X[threads - 1] = read_text(out / "X.mtx");
    F[threads - 1] = summary.at("objective").at("final").get<double>();
    ASSERT_FALSE(X[threads - 1].empty());
  }
  EXPECT_TRUE(X[0] == X[1]) << "X.mtx differs between threads = 1 and threads = 2";
  // F too, to the last bit: the iterates do not read F's sums, the stopping rule does.
  EXPECT_EQ(F[0], F[1]);
}

TEST(ThreadDeterminism, OneAndTwoThreadsGiveBitIdenticalX) { expect_same_x_for_one_and_two_threads({}); }

// The coupled surrogate has no one-pass rebuild: Surrogate::update evaluates the loss chunk by
// chunk on every thread (more than 2 x 10^5 terms), and its sums must not depend on how the chunks
// were shared out (an OpenMP reduction of them fails this test).
TEST(ThreadDeterminism, CoupledSurrogateGivesBitIdenticalX) {
  expect_same_x_for_one_and_two_threads({"--set", "solver.admm.xt_step=coupled"});
}

}  // namespace
