// Residual balancing of the ADMM's rho (AdmmOptions::adaptive_rho, docs/method.md section 3.8): at
// every Admm::kRhoEvery-th iteration of a run an automatic rho becomes rho sqrt(relative primal
// residual / relative dual residual) when that is more than a factor away. It must reach the same
// minimum of the surrogate in fewer iterations from a rho that is off either way, change nothing
// in runs that end sooner, and leave a rho set by hand alone.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "admm/admm.h"
#include "mm/surrogate.h"
#include "sdprl/solver.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

struct AdmmRun {
  int iterations = 0;
  double primal = 0.0, gap = 0.0, rho = 0.0;
  AdmmState state;
};

// `pinned`: rho set by hand (AdmmOptions::rho > 0), which the balancing leaves alone.
AdmmRun run_admm(const Surrogate& h, CoupledStep step, double rho, bool adaptive, double eps, int max_iterations,
                 bool pinned = false) {
  AdmmOptions o;
  o.split = SplitMode::kCoupled;
  o.coupled_step = step;
  o.max_iterations = max_iterations;
  o.cg_tolerance = 1e-12;
  o.cg_max_iterations = 2000;
  o.anderson_memory = 0;  // the balancing alone (tests/anderson_test.cc has the acceleration)
  o.adaptive_rho = adaptive;
  if (pinned) o.rho = rho;
  Admm admm(h, rho, o);
  admm.prepare();
  AdmmRun run;
  admm.reset_if_needed(run.state);
  run.iterations = admm.run(run.state, eps);
  run.primal = run.state.primal;
  run.gap = run.state.gap;
  run.rho = admm.rho();
  return run;
}

// The exact surrogate of an l1 completion instance (120 rows, 1500 entries, rank 4) at a random
// point, solved to a gap of 1e-6 of F from rho = 0.5 and 500 (the balanced runs end between 13 and
// 37): with the linearised and the CG Xt-step the balanced run reaches the gap in at most half the
// iterations of the fixed rho (about a tenth, measured) and ends at the same minimum. Without the
// mechanism (adaptive = false in both runs) the counts are equal and the test fails.
TEST(AdaptiveRho, SameMinimumOfTheSurrogateInFewerIterations) {
  Model model;
  model.terms = entry_terms(random_entries(120, 1500, 7));
  auto loss = load_loss("l1");
  std::mt19937_64 rng(8);
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 4);
  h.update(random_matrix(120, 4, 1.0, rng));
  const double eps = 1e-6 * h.objective_magnitude();
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    for (const double rho : {0.5, 500.0}) {
      const AdmmRun fixed = run_admm(h, step, rho, false, eps, 200000);
      const AdmmRun balanced = run_admm(h, step, rho, true, eps, 200000);
      const char* name = to_string(step);
      ASSERT_LE(fixed.gap, eps) << name << " rho " << rho;
      ASSERT_LE(balanced.gap, eps) << name << " rho " << rho;
      EXPECT_NEAR(balanced.primal, fixed.primal, eps) << name << " rho " << rho;
      EXPECT_LE(2 * balanced.iterations, fixed.iterations) << name << " rho " << rho;
      EXPECT_EQ(fixed.state.rho_updates, 0) << name;
      EXPECT_EQ(fixed.rho, rho) << name;
      EXPECT_GT(balanced.state.rho_updates, 0) << name << " rho " << rho;
      std::printf("[ rho     ] %s from rho %g: %d ADMM iterations fixed, %d balanced (%d changes, rho %.3g at the "
                  "end), to a gap of %.3g\n",
                  name, rho, fixed.iterations, balanced.iterations, balanced.state.rho_updates, balanced.rho, eps);
    }
  }
}

// A run that ends before Admm::kRhoEvery iterations is the fixed-rho ADMM bit for bit (every MM
// step of the shipped row-split models), and a rho set by hand is never changed, however long the run.
TEST(AdaptiveRho, ShortRunsAndAPinnedRhoAreUnchanged) {
  Model model;
  model.terms = entry_terms(random_entries(60, 500, 3));
  auto loss = load_loss("l1");
  std::mt19937_64 rng(4);
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 3);
  h.update(random_matrix(60, 3, 1.0, rng));
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    const int cap = Admm::kRhoEvery;
    const AdmmRun fixed = run_admm(h, step, 0.05, false, 0.0, cap);
    const AdmmRun balanced = run_admm(h, step, 0.05, true, 0.0, cap);
    ASSERT_EQ(fixed.iterations, cap);
    EXPECT_EQ(balanced.state.rho_updates, 0) << to_string(step);
    EXPECT_TRUE(balanced.state.D == fixed.state.D) << to_string(step);
    EXPECT_TRUE(balanced.state.nu == fixed.state.nu) << to_string(step);
    EXPECT_EQ(balanced.gap, fixed.gap) << to_string(step);

    const AdmmRun longer = run_admm(h, step, 0.05, true, 0.0, 3 * cap);
    EXPECT_GE(longer.state.rho_updates, 1) << to_string(step) << ": rho 0.05 is far from balanced here";
    const AdmmRun pinned = run_admm(h, step, 0.05, true, 0.0, 3 * cap, /*pinned=*/true);
    EXPECT_EQ(pinned.state.rho_updates, 0) << to_string(step);
    EXPECT_EQ(pinned.rho, 0.05) << to_string(step);
  }
}

}  // namespace
}  // namespace sdprl
