// Anderson acceleration of the ADMM (admm/anderson.h, docs/method.md section 3.7): an ADMM run
// that passes Admm::kAndersonAfter iterations extrapolates its fixed-point variable. It must end
// at the same minimum of the surrogate (to the gap) in fewer iterations, and leave shorter runs
// bit for bit as they were.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "admm/admm.h"
#include "mm/surrogate.h"
#include "sdprl/solver.h"
#include "test_models.h"
#include "xt_step/xt_step.h"

namespace sdprl {
namespace {

using namespace testing_support;

struct AdmmRun {
  int iterations = 0;
  double primal = 0.0, gap = 0.0;
  AdmmState state;
};

AdmmRun run_admm(const Surrogate& h, CoupledStep step, int memory, double eps, int max_iterations) {
  AdmmOptions o;
  o.split = SplitMode::kCoupled;
  o.coupled_step = step;
  o.max_iterations = max_iterations;
  o.cg_tolerance = 1e-12;
  o.cg_max_iterations = 2000;
  o.anderson_memory = memory;
  o.adaptive_rho = false;  // rho's residual balancing (tests/adaptive_rho_test.cc) would shorten both runs
  Admm admm(h, 2.0, o);
  admm.prepare();
  AdmmRun run;
  admm.reset_if_needed(run.state);
  run.iterations = admm.run(run.state, eps);
  run.primal = run.state.primal;
  run.gap = run.state.gap;
  return run;
}

// The exact surrogate of an l1 completion instance (120 rows, 1500 entries, rank 4) at a random
// point, whose ADMM needs hundreds of iterations to a gap of 1e-8 of F: with the linearised and
// the CG Xt-step, the accelerated run reaches the gap in at most half the iterations and ends at
// the same minimum of H (both values are within the gap of it). Without the mechanism
// (anderson_memory = 0 in both runs) the iteration counts are equal and the test fails.
TEST(AndersonAcceleration, SameMinimumOfTheSurrogateInFewerIterations) {
  Model model;
  model.terms = entry_terms(random_entries(120, 1500, 7));
  auto loss = load_loss("l1");
  std::mt19937_64 rng(8);
  const Matrix X0 = random_matrix(120, 4, 1.0, rng);
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 4);
  h.update(X0);
  const double eps = 1e-8 * h.objective_magnitude();
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    const AdmmRun plain = run_admm(h, step, 0, eps, 200000);
    const AdmmRun accelerated = run_admm(h, step, 10, eps, 200000);
    const char* name = to_string(step);
    ASSERT_LE(plain.gap, eps) << name;
    ASSERT_LE(accelerated.gap, eps) << name;
    EXPECT_NEAR(accelerated.primal, plain.primal, eps) << name;
    EXPECT_LT(plain.primal, h.center_objective() - 1.0) << name << ": a real step";
    EXPECT_LE(2 * accelerated.iterations, plain.iterations) << name;
    EXPECT_EQ(plain.state.extrapolations, 0) << name;
    EXPECT_GT(accelerated.state.extrapolations, 0) << name;
    std::printf("[ anderson] %s: %d ADMM iterations plain, %d accelerated, to a gap of %.3g\n", name,
                plain.iterations, accelerated.iterations, eps);
  }
}

// A run that its tolerance (or its cap) ends within kAndersonAfter + 2 iterations never
// extrapolates (the acceleration watches two iterates before its first extrapolation): its state
// is the plain ADMM's, bit for bit, so every MM step of the shipped models, which run a few
// iterations at eps_k, is unchanged by the option. One iteration more extrapolates, and differs.
TEST(AndersonAcceleration, ShortRunsAreThePlainAdmmBitForBit) {
  Model model;
  model.terms = entry_terms(random_entries(60, 500, 3));
  auto loss = load_loss("l1");
  std::mt19937_64 rng(4);
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 3);
  h.update(random_matrix(60, 3, 1.0, rng));
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    const int cap = Admm::kAndersonAfter + 2;
    const AdmmRun plain = run_admm(h, step, 0, 0.0, cap);
    const AdmmRun accelerated = run_admm(h, step, 10, 0.0, cap);
    ASSERT_EQ(plain.iterations, cap);
    EXPECT_EQ(accelerated.iterations, plain.iterations);
    EXPECT_EQ(accelerated.state.extrapolations, 0);
    EXPECT_TRUE(accelerated.state.D == plain.state.D) << to_string(step);
    EXPECT_TRUE(accelerated.state.nu == plain.state.nu) << to_string(step);
    EXPECT_EQ(accelerated.gap, plain.gap) << to_string(step);

    const AdmmRun plain_longer = run_admm(h, step, 0, 0.0, cap + 2);
    const AdmmRun longer = run_admm(h, step, 10, 0.0, cap + 2);
    EXPECT_GE(longer.state.extrapolations, 1) << to_string(step);
    EXPECT_FALSE(longer.state.nu == plain_longer.state.nu) << to_string(step) << ": the extrapolation changed nothing";
  }
}

}  // namespace
}  // namespace sdprl
