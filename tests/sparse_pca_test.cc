// The sparse-pca application end to end (plugins/applications/sparse-pca): the colon-cancer data,
// the first 200 genes, rank 10, through the `sdprl` program.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_run.h"

namespace {

namespace fs = std::filesystem;
using namespace sdprl::testing_support;

const fs::path kModel = fs::path(SDPRL_SOURCE_DIR) / "models" / "spca_colon.toml";

class SparsePcaRun : public ::testing::Test {
 protected:
  RunResult run(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", kModel.string(), "--quiet", "--out", out_.string(),
                                     "--set", "model.features=200", "--set", "solver.rank=10"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sdprl(args, tmp_.path());
  }
  nlohmann::json summary() const { return nlohmann::json::parse(read_text(out_ / "summary.json")); }
  TempDir tmp_;
  fs::path out_ = tmp_.path() / "out";
};

// The l1 problem is d'Aspremont's relaxation with rho = 2 / gamma: its solution lies on tr Z = 1,
// explains less variance than plain PCA (the top eigenvalue, its bound under tr Z <= 1) but a
// good part of it, and is sparse where PCA's Z is dense.
TEST_F(SparsePcaRun, L1SolutionIsSparseOnTheTraceBoundary) {
  const RunResult r = run({"--set", "loss.type=l1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values.at("status"), "converged");
  const nlohmann::json s = summary();
  const double pca = s.at("facts").at("pca_variance").get<double>();
  const double variance = number(r, "explained_variance"), sparsity = number(r, "sparsity");
  std::cout << "l1: explained variance " << variance << " of PCA's " << pca << ", sparsity " << sparsity << "\n";
  EXPECT_NEAR(number(r, "trace_z"), 1.0, 1e-9);
  EXPECT_LT(variance, pca);
  EXPECT_GT(variance, 0.6 * pca);
  EXPECT_GT(sparsity, 0.5);
  EXPECT_EQ(s.at("monotonicity_violations").get<int>(), 0);
}

// A concave loss that penalises small entries harder (theta = 2) buys more sparsity with some
// variance; the PCA start needs fewer MM steps than the random one to get there (paper Table
// "initialisation"), and both reach the same objective.
TEST_F(SparsePcaRun, PcaStartConvergesInFewerStepsThanRandom) {
  const std::vector<std::string> mcp = {"--set", "loss.type=leaky-mcp", "--set", "loss.leaky-mcp.theta=2"};
  std::vector<std::string> pca_args = mcp, random_args = mcp;
  pca_args.insert(pca_args.end(), {"--set", "solver.init=model"});
  random_args.insert(random_args.end(), {"--set", "solver.init=gaussian"});
  const RunResult pca = run(pca_args);
  ASSERT_EQ(pca.code, 0) << pca.err;
  const RunResult random = run(random_args);
  ASSERT_EQ(random.code, 0) << random.err;
  const double steps_pca = number(pca, "mm_iterations"), steps_random = number(random, "mm_iterations");
  std::cout << "MM steps: PCA start " << steps_pca << ", random start " << steps_random << "; sparsity "
            << number(pca, "sparsity") << " / " << number(random, "sparsity") << "\n";
  EXPECT_LT(steps_pca, steps_random);
  EXPECT_NEAR(number(pca, "objective"), number(random, "objective"), 1e-3 * std::abs(number(random, "objective")));
  EXPECT_GT(number(pca, "sparsity"), 0.85);
}

// The same for the model's own l1 loss at a rank above most of the solution's: the PCA start's
// equal column weights (pca_power = 0) beat both the random start and the eigenvalue-weighted
// PCA start (pca_power = 0.5) in MM steps, and end no higher.
TEST_F(SparsePcaRun, EqualWeightPcaStartBeatsRandomAndWeightedStartsInMmSteps) {
  std::vector<double> steps, objectives;
  for (const char* start : {"model.pca_power=0", "model.pca_power=0.5", "solver.init=gaussian"}) {
    const RunResult r = run({"--set", "loss.type=l1", "--set", "solver.rank=30", "--set", start});
    ASSERT_EQ(r.code, 0) << r.err;
    steps.push_back(number(r, "mm_iterations"));
    objectives.push_back(number(r, "objective"));
    std::cout << start << ": " << steps.back() << " MM steps, objective " << objectives.back() << "\n";
  }
  EXPECT_LT(steps[0], steps[1]);
  EXPECT_LT(steps[0], steps[2]);
  EXPECT_LE(objectives[0], std::min(objectives[1], objectives[2]) + 1e-5 * std::abs(objectives[0]));
}

TEST_F(SparsePcaRun, BadOptionsNameTheirKey) {
  RunResult r = run({"--set", "model.features=5000"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("features"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2000"), std::string::npos) << r.err;
  r = run({"--set", "model.pca_power=-1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("pca_power"), std::string::npos) << r.err;
  r = run({"--set", "model.trace_bound=-1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("trace_bound"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_ / "summary.json"));
}

}  // namespace
