// The two mechanisms of long ADMM runs (the exact surrogate's: auto's finish, SDPA problems), each
// against the plain ADMM on the same surrogate:
//  - Anderson acceleration (admm/anderson.h, docs/method.md section 3.7): a run that passes
//    Admm::kAndersonAfter iterations extrapolates its fixed-point variable;
//  - residual balancing of rho (AdmmOptions::adaptive_rho, section 3.8): at every Admm::kRhoEvery-th
//    iteration an automatic rho becomes rho sqrt(relative primal / relative dual residual) when
//    that is more than a factor away.
// Each must end at the same minimum of the surrogate (to the gap) in fewer iterations and leave
// shorter runs bit for bit as they were; a rho set by hand is never changed.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>

#include "admm/admm.h"
#include "mm/surrogate.h"
#include "sdprl/constraint.h"
#include "sdprl/solver.h"
#include "test_models.h"
#include "xt_step/xt_step.h"

namespace sdprl {
namespace {

using namespace testing_support;

struct AdmmRun {
  int iterations = 0;
  double primal = 0.0, gap = 0.0, rho = 0.0;
  AdmmState state;
};

// One mechanism at a time: `memory` for Anderson (0 = off), `adaptive` for rho's balancing.
// `pinned`: rho set by hand (AdmmOptions::rho > 0), which the balancing leaves alone.
struct RunSettings {
  int memory = 0;
  bool adaptive = false;
  double rho = 2.0;
  bool pinned = false;
};

AdmmRun run_admm(const Surrogate& h, CoupledStep step, const RunSettings& settings, double eps, int max_iterations) {
  AdmmOptions o;
  o.split = SplitMode::kCoupled;
  o.coupled_step = step;
  o.max_iterations = max_iterations;
  o.cg_tolerance = 1e-12;
  o.cg_max_iterations = 2000;
  o.anderson_memory = settings.memory;
  o.adaptive_rho = settings.adaptive;
  if (settings.pinned) o.rho = settings.rho;
  Admm admm(h, settings.rho, o);
  admm.prepare();
  AdmmRun run;
  admm.reset_if_needed(run.state);
  run.iterations = admm.run(run.state, eps);
  run.primal = run.state.primal;
  run.gap = run.state.gap;
  run.rho = admm.rho();
  return run;
}

// The exact surrogate of an l1 completion instance (n rows, m entries, rank r) at a random point.
struct Instance {
  Model model;
  std::shared_ptr<Loss> loss = load_loss("l1");
  std::unique_ptr<Surrogate> h;
  // `nonnegative`: under X >= 0 (symmetric NMF's constraint split), at a point of |N(0, 1)| entries.
  Instance(Index n, Index m, Index r, std::uint64_t seed, bool nonnegative = false) {
    model.terms = entry_terms(random_entries(n, m, seed));
    if (nonnegative) model.constraint = std::make_shared<Nonnegative>();
    std::mt19937_64 rng(seed + 1);
    h = std::make_unique<Surrogate>(model, *loss, RegularizationWeights{0.5, 0.0}, SplitMode::kCoupled, r);
    const Matrix X = random_matrix(n, r, 1.0, rng);
    h->update(nonnegative ? Matrix(X.cwiseAbs()) : X);
  }
};

// The exact surrogate of an l1 completion instance (120 rows, 1500 entries, rank 4) at a random
// point, whose ADMM needs hundreds of iterations to a gap of 1e-8 of F: with the linearised and
// the CG Xt-step, the accelerated run reaches the gap in at most half the iterations and ends at
// the same minimum of H (both values are within the gap of it). Without the mechanism
// (anderson_memory = 0 in both runs) the iteration counts are equal and the test fails.
TEST(AndersonAcceleration, SameMinimumOfTheSurrogateInFewerIterations) {
  const Instance in(120, 1500, 4, 7);
  const Surrogate& h = *in.h;
  const double eps = 1e-8 * h.objective_magnitude();
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    const AdmmRun plain = run_admm(h, step, {}, eps, 200000);
    const AdmmRun accelerated = run_admm(h, step, {/*memory=*/10}, eps, 200000);
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
  const Instance in(60, 500, 3, 3);
  const Surrogate& h = *in.h;
  const RunSettings accelerate{/*memory=*/10};
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    const int cap = Admm::kAndersonAfter + 2;
    const AdmmRun plain = run_admm(h, step, {}, 0.0, cap);
    const AdmmRun accelerated = run_admm(h, step, accelerate, 0.0, cap);
    ASSERT_EQ(plain.iterations, cap);
    EXPECT_EQ(accelerated.iterations, plain.iterations);
    EXPECT_EQ(accelerated.state.extrapolations, 0);
    EXPECT_TRUE(accelerated.state.D == plain.state.D) << to_string(step);
    EXPECT_TRUE(accelerated.state.nu == plain.state.nu) << to_string(step);
    EXPECT_EQ(accelerated.gap, plain.gap) << to_string(step);

    const AdmmRun plain_longer = run_admm(h, step, {}, 0.0, cap + 2);
    const AdmmRun longer = run_admm(h, step, accelerate, 0.0, cap + 2);
    EXPECT_GE(longer.state.extrapolations, 1) << to_string(step);
    EXPECT_FALSE(longer.state.nu == plain_longer.state.nu) << to_string(step) << ": the extrapolation changed nothing";
  }
}

// The surrogate of `in` solved to a gap of 1e-6 of F from rho = 0.5 and 500, with the linearised
// and the CG Xt-step: the balanced run reaches the gap in at most half the iterations of the fixed
// rho and ends at the same minimum. Without the mechanism the counts are equal and this fails.
void expect_balancing_reaches_the_minimum_sooner(const Instance& in, const char* label) {
  const Surrogate& h = *in.h;
  const double eps = 1e-6 * h.objective_magnitude();
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    for (const double rho : {0.5, 500.0}) {
      const AdmmRun fixed = run_admm(h, step, {0, false, rho}, eps, 200000);
      const AdmmRun balanced = run_admm(h, step, {0, true, rho}, eps, 200000);
      const char* name = to_string(step);
      ASSERT_LE(fixed.gap, eps) << name << " rho " << rho;
      ASSERT_LE(balanced.gap, eps) << name << " rho " << rho;
      EXPECT_NEAR(balanced.primal, fixed.primal, eps) << name << " rho " << rho;
      EXPECT_LT(fixed.primal, h.center_objective() - 1.0) << name << ": a real step";
      EXPECT_LE(2 * balanced.iterations, fixed.iterations) << name << " rho " << rho;
      EXPECT_EQ(fixed.state.rho_updates, 0) << name;
      EXPECT_EQ(fixed.rho, rho) << name;
      EXPECT_GT(balanced.state.rho_updates, 0) << name << " rho " << rho;
      std::printf("[ rho     ] %s, %s from rho %g: %d ADMM iterations fixed, %d balanced (%d changes, rho %.3g at "
                  "the end), to a gap of %.3g\n",
                  label, name, rho, fixed.iterations, balanced.iterations, balanced.state.rho_updates, balanced.rho,
                  eps);
    }
  }
}

// The exact surrogate of an l1 completion instance (120 rows, 1500 entries, rank 4) at a random
// point: the balanced runs end at rho 15 to 37, in about a tenth of the fixed rho's iterations.
TEST(AdaptiveRho, SameMinimumOfTheSurrogateInFewerIterations) {
  expect_balancing_reaches_the_minimum_sooner(Instance(120, 1500, 4, 7), "unconstrained");
}

// The same under X >= 0: the constraint split keeps its own penalty rho_k, and the dual residual
// gains its multiplier mu (Admm::residual_balanced_rho). SNMF's finish on the exact surrogate
// (xt_step = "auto", snmf_synthetic at lambda = 0.1) hit the 1000-iteration cap at every MM step
// at rho = 2 and took 100 s; balanced, 400 to 900 iterations and 22 s. Without the mechanism
// (no balancing under a constraint) the counts are equal and the test fails.
TEST(AdaptiveRho, UnderANonnegativeConstraintTheSameMinimumInFewerIterations) {
  expect_balancing_reaches_the_minimum_sooner(Instance(120, 1500, 4, 7, /*nonnegative=*/true), "X >= 0");
}

// A run of at most Admm::kRhoEvery iterations is the fixed-rho ADMM bit for bit (every MM
// step of the shipped row-split models), and a rho set by hand is never changed, however long the run.
TEST(AdaptiveRho, ShortRunsAndAPinnedRhoAreUnchanged) {
  const Instance in(60, 500, 3, 3);
  const Surrogate& h = *in.h;
  const RunSettings fixed_rho{0, false, 0.05}, balanced_rho{0, true, 0.05}, pinned_rho{0, true, 0.05, true};
  for (const CoupledStep step : {CoupledStep::kLinearized, CoupledStep::kCg}) {
    const int cap = Admm::kRhoEvery;
    const AdmmRun fixed = run_admm(h, step, fixed_rho, 0.0, cap);
    const AdmmRun balanced = run_admm(h, step, balanced_rho, 0.0, cap);
    ASSERT_EQ(fixed.iterations, cap);
    EXPECT_EQ(balanced.state.rho_updates, 0) << to_string(step);
    EXPECT_TRUE(balanced.state.D == fixed.state.D) << to_string(step);
    EXPECT_TRUE(balanced.state.nu == fixed.state.nu) << to_string(step);
    EXPECT_EQ(balanced.gap, fixed.gap) << to_string(step);

    const AdmmRun longer = run_admm(h, step, balanced_rho, 0.0, 3 * cap);
    EXPECT_GE(longer.state.rho_updates, 1) << to_string(step) << ": rho 0.05 is far from balanced here";
    const AdmmRun pinned = run_admm(h, step, pinned_rho, 0.0, 3 * cap);
    EXPECT_EQ(pinned.state.rho_updates, 0) << to_string(step);
    EXPECT_EQ(pinned.rho, 0.05) << to_string(step);
  }
}

}  // namespace
}  // namespace sdprl
