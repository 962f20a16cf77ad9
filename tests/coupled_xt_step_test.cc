// The coupled Xt-step's CG (docs/method.md section 3, the exact surrogate): its preconditioner is
// rebuilt every AdmmOptions::preconditioner_refresh MM steps and CG starts from the previous MM
// step's Xt. Neither may change the answer beyond CG's tolerance, and a resumed run must still be
// the uninterrupted one bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sdprl/error.h"
#include "sdprl/solver.h"
#include "admm/admm.h"
#include "mm/surrogate.h"
#include "xt_step/xt_step.h"
#include "sdprl/constraint.h"
#include "sdprl/terms/all_entries_terms.h"
#include "sdprl/terms/composite_terms.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

SolverOptions coupled_options(int refresh) {
  SolverOptions o;
  o.rank = 4;
  o.verbose = false;
  o.init = InitKind::kGiven;
  o.max_mm_iterations = 40;
  o.relative_tolerance = 0.0;  // exactly max_mm_iterations steps
  o.admm.split = SplitMode::kCoupled;
  o.admm.coupled_step = CoupledStep::kCg;  // the CG strategies' tests; the linearised one is pinned where tested
  o.admm.preconditioner_refresh = refresh;
  o.checkpoint_interval = 1e9;  // only the interrupt's checkpoint
  o.curvature_scale = 1.0;  // the preconditioner's age counts steps; a halved tau rebuilds it
  return o;
}

struct Problem {
  Model model;
  Matrix X0;
};

Problem make_problem() {
  Problem p;
  p.model.terms = entry_terms(random_entries(120, 1500, 7));
  std::mt19937_64 rng(8);
  p.X0 = random_matrix(120, 4, 1.0, rng);
  return p;
}

// With CG solved tightly the preconditioner (fresh blocks at every step, 16-step-old blocks, or
// the row-scaled one) and CG's start change only CG's work: every MM iterate's objective agrees
// to 1e-9 with that of fresh blocks, while the stale preconditioner is really in use (checked by
// the Admm's age counter below).
TEST(CoupledXtStep, PreconditionerChangesCgWorkNotTheIterates) {
  const Problem p = make_problem();
  auto loss = load_loss("l1");
  struct Variant {
    int refresh;
    CgPreconditioner kind;
  };
  const Variant variants[] = {{1, CgPreconditioner::kBlocks}, {16, CgPreconditioner::kBlocks},
                              {16, CgPreconditioner::kRowScaled}, {1, CgPreconditioner::kRowScaled}};
  std::vector<std::vector<double>> f;
  for (const Variant& v : variants) {
    SolverOptions o = coupled_options(v.refresh);
    o.admm.preconditioner = v.kind;
    o.admm.cg_tolerance = 1e-10;
    o.admm.min_tolerance = 1e-10;
    Matrix X = p.X0;
    const Summary s = solve(p.model, *loss, {0.5, 0.0}, o, X);
    ASSERT_EQ(s.mm_iterations, 40);
    f.emplace_back();
    for (const TraceRow& row : s.trace) f.back().push_back(row.objective);
  }
  for (std::size_t v = 1; v < f.size(); ++v) {
    ASSERT_EQ(f[v].size(), f[0].size());
    for (std::size_t k = 0; k < f[0].size(); ++k)
      EXPECT_NEAR(f[v][k], f[0][k], 1e-9 * std::abs(f[0][k])) << "variant " << v << ", MM step " << k + 1;
  }
  // And the iteration made progress, so the agreement is not that of a stalled run.
  EXPECT_LT(f[0].back(), 0.9 * f[0].front());
}

// kAuto: the blocks while their n r^2 doubles fit in kBlockPreconditionerBytes, else row-scaled
// (and the automatic coupled step is the linearised one while they fit).
// The row-scaled preconditioner reads only the traces of the Gram blocks, which
// gram_row_traces (GramSummary or generic) gives without the blocks' n r^2 doubles: each family's
// traces against the traces of its own blocks, in both split modes, for the entry terms' own pass,
// the default (distance terms) and a composite of both.
TEST(CoupledXtStep, GramRowTracesAreTheTracesOfTheGramBlocks) {
  const EntryData ed = random_entries(90, 1200, 31), dd = random_pairs(90, 900, 32);
  const auto entries = entry_terms(ed);
  const auto distances = distance_terms(dd);
  const auto both = std::make_shared<CompositeTerms>(std::vector<std::shared_ptr<const ConstraintSet>>{entries, distances});
  const std::pair<const char*, const ConstraintSet*> sets[] = {
      {"entries", entries.get()}, {"distances", distances.get()}, {"composite", both.get()}};
  std::mt19937_64 rng(33);
  for (const Index r : {1, 5, 11}) {
    const Matrix X = random_matrix(90, r, 1.0, rng);
    for (const auto& [name, set] : sets) {
      for (const SplitMode mode : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
        SCOPED_TRACE(std::string(name) + ", rank " + std::to_string(r) + ", " + to_string(mode));
        auto lin = set->make_linearization(mode);
        Vector values;
        set->evaluate(X, values);
        // Unequal weights, so that a trace that ignored them would differ.
        const Vector w = Vector::Random(set->size()).cwiseAbs() + Vector::Constant(set->size(), 0.1);
        lin->update(X, w, values - set->targets());
        Matrix blocks;
        Vector traces;
        lin->gram_row_blocks(blocks);
        gram_row_traces(*lin, traces);
        ASSERT_EQ(traces.size(), 90);
        double total = 0.0;
        for (Index i = 0; i < 90; ++i) {
          const double expected = blocks.block(i * r, 0, r, r).trace();
          EXPECT_NEAR(traces[i], expected, 1e-12 * (1.0 + std::abs(expected))) << "row " << i;
          total += expected;
        }
        EXPECT_GT(total, 0.0);
      }
    }
  }
}

TEST(CoupledXtStep, AutomaticPreconditionerFollowsTheBlocksSize) {
  auto loss = load_loss("l1");
  AdmmOptions options;
  options.split = SplitMode::kCoupled;
  for (Index rank : {4, 64}) {  // 300 r^2 doubles: 38 KB, 9.8 MB
    Model model;
    model.terms = entry_terms(random_entries(300, 4000, 5));
    std::mt19937_64 rng(6);
    const Matrix X = random_matrix(300, rank, 1.0, rng);
    {
      // Unconstrained entry terms with a diagonal B: the dual coordinate step, no CG at all.
      Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, rank);
      h.update(X);
      Admm admm(h, 2.0, options);
      admm.prepare();
      EXPECT_EQ(admm.xt_step()->kind(), xt_step::Kind::kDualCoordinate) << rank;
    }
    // Under a constraint whose projection couples rows (no coordinate step) the ADMM's Xt-step:
    // linearised while the blocks fit, CG past the budget.
    model.constraint = std::make_shared<FrobeniusBall>(1e3);
    Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, rank);
    h.update(X.cwiseAbs());
    Admm admm(h, 2.0, options);
    admm.prepare();
    const bool too_large = 8.0 * 300 * rank * rank > kBlockPreconditionerBytes;
    EXPECT_EQ(admm.row_scaled_preconditioner(), too_large) << rank;
    EXPECT_EQ(admm.xt_step()->linearized(), !too_large) << rank;
  }
}

// The Admm keeps the blocks for refresh - 1 prepare()s and rebuilds them at the refresh-th, or
// whenever asked to.
TEST(CoupledXtStep, PreconditionerAgeCountsPreparesAndRefreshes) {
  const Problem p = make_problem();
  auto loss = load_loss("leaky-mcp");
  AdmmOptions options;
  options.split = SplitMode::kCoupled;
  options.preconditioner_refresh = 3;
  options.coupled_step = CoupledStep::kCg;
  Surrogate h(p.model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 4);
  h.update(p.X0);
  Admm admm(h, 2.0, options);
  ASSERT_FALSE(admm.direct());
  std::vector<int> ages;
  for (int k = 0; k < 7; ++k) {
    h.update(p.X0 * (1.0 + 0.01 * k));
    admm.prepare(/*rebuild_preconditioner=*/k == 5);
    ages.push_back(admm.preconditioner_age());
  }
  EXPECT_EQ(ages, (std::vector<int>{0, 1, 2, 0, 1, 0, 1}));
  // The row-split (direct) step has no preconditioner to keep: its blocks are the system.
  Surrogate hr(p.model, *loss, {0.5, 0.0}, SplitMode::kRowSplit, 4);
  hr.update(p.X0);
  Admm direct(hr, 2.0, options);
  direct.prepare();
  ASSERT_TRUE(direct.direct());
  EXPECT_EQ(direct.preconditioner_age(), -1);
}

// An interrupt in the middle of a preconditioner's life: the checkpoint carries Xt, the
// preconditioner's iterate and age, and the resumed run ends where the uninterrupted one does, bit
// for bit. Without those fields the resumed run drifts in the last bits (so they are needed), but
// stays within CG's tolerance of it.
// The linearised step (admm.coupled_step) carries the same fields: Xt is its proximal centre and
// the iterate is where its majorant's scale was estimated.
struct ResumeCase {
  const char* name;
  CoupledStep step;
  CgPreconditioner preconditioner;
};
void PrintTo(const ResumeCase& c, std::ostream* os) { *os << c.name; }
class CoupledResume : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(CoupledResume, ResumeWithAKeptPreconditionerIsBitForBit) {
  const Problem p = make_problem();
  auto loss = load_loss("leaky-mcp");
  const RegularizationWeights weights{0.5, 0.0};
  SolverOptions o = coupled_options(5);
  o.admm.coupled_step = GetParam().step;
  o.admm.preconditioner = GetParam().preconditioner;
  Matrix reference = p.X0;
  const Summary full = solve(p.model, *loss, weights, o, reference);
  ASSERT_EQ(full.mm_iterations, 40);

  // 13 = 2 * 5 + 3: the preconditioner is 2 steps old.
  const SolverState st = state_at_interrupt(p.model, *loss, weights, o, p.X0, 13);
  ASSERT_EQ(st.k, 13);
  xt_step::CgWarmStart warm;
  ASSERT_TRUE(xt_step::decode(st.xt_step_state, &warm));
  EXPECT_EQ(warm.preconditioner_age, 2);
  ASSERT_EQ(warm.D.rows(), 120);
  EXPECT_GT(warm.D.norm(), 0.0);
  ASSERT_EQ(warm.X_preconditioner.rows(), 120);
  EXPECT_GT((warm.X_preconditioner - st.X).norm(), 0.0) << "the preconditioner's iterate is an earlier one";

  Matrix resumed = st.X;
  const Summary rest = solve(p.model, *loss, weights, o, resumed, {}, &st);
  EXPECT_EQ(rest.mm_iterations, 40);
  EXPECT_EQ(rest.final_objective, full.final_objective);
  EXPECT_TRUE(resumed == reference) << "max difference " << (resumed - reference).cwiseAbs().maxCoeff();

  SolverState bare = st;  // as a version-2 checkpoint had it: no Xt, no preconditioner
  bare.xt_step_state.clear();
  Matrix from_bare = bare.X;
  const Summary other = solve(p.model, *loss, weights, o, from_bare, {}, &bare);
  EXPECT_EQ(other.mm_iterations, 40);
  EXPECT_FALSE(from_bare == reference) << "Xt and the preconditioner left no trace: the test checks nothing";
  // CG's answer does not depend on them beyond its tolerance; the linearised step's iterates do
  // (Xt is the centre of its proximal term), so a bare resume is another path to the minimum.
  if (GetParam().step == CoupledStep::kCg)
    EXPECT_NEAR(other.final_objective, full.final_objective, 1e-6 * std::abs(full.final_objective));
  else
    EXPECT_NEAR(other.final_objective, full.final_objective, 1e-3 * std::abs(full.final_objective));
}

INSTANTIATE_TEST_SUITE_P(Preconditioners, CoupledResume,
                         ::testing::Values(ResumeCase{"blocks", CoupledStep::kCg, CgPreconditioner::kBlocks},
                                           ResumeCase{"row_scaled", CoupledStep::kCg, CgPreconditioner::kRowScaled},
                                           ResumeCase{"linearized", CoupledStep::kLinearized, CgPreconditioner::kAuto}),
                         [](const auto& info) { return std::string(info.param.name); });

// A saved Xt or preconditioner iterate of the wrong shape is refused, not used.
TEST(CoupledXtStep, ResumeRefusesAMisshapenSavedXt) {
  const Problem p = make_problem();
  auto loss = load_loss("l1");
  SolverOptions o = coupled_options(5);
  o.max_mm_iterations = 3;
  const SolverState saved = state_at_interrupt(p.model, *loss, {0.5, 0.0}, o, p.X0, 1);
  ASSERT_EQ(saved.k, 1);
  xt_step::CgWarmStart warm;
  ASSERT_TRUE(xt_step::decode(saved.xt_step_state, &warm));
  for (int which = 0; which < 3; ++which) {
    SolverState bad = saved;
    xt_step::CgWarmStart w = warm;
    if (which < 2) {
      (which == 0 ? w.D : w.X_preconditioner) = Matrix::Zero(119, 4);
      bad.xt_step_state = xt_step::encode(w);
    } else {
      bad.xt_step_state.pop_back();  // bytes that are not a warm start
    }
    Matrix Y = bad.X;
    EXPECT_THROW(solve(p.model, *loss, {0.5, 0.0}, o, Y, {}, &bad), Error) << which;
  }
}

// The linearised coupled step (docs/method.md section 3.4) keeps the exact surrogate's fixed
// points: on one surrogate, with and without the constraint split, its ADMM ends at the minimum of
// H that CG's reaches, to the gap. A wrong proximal correction (or majorant) moves that point.
// The third case, all entries of a symmetric matrix, has the loss weights outside P and one shared
// Gram block (kLinearizedSharedBlock).
TEST(LinearizedXtStep, SameMinimumOfTheExactSurrogateAsCg) {
  const Problem p = make_problem();
  auto loss = load_loss("l1");
  std::mt19937_64 rng(41);
  const Matrix S = random_matrix(40, 40, 1.0, rng);
  const Matrix X_all = random_matrix(40, 4, 1.0, rng);
  for (const int variant : {0, 1, 2}) {
    const bool constrained = variant == 1, all_entries = variant == 2;
    Model model = p.model;
    if (constrained) model.constraint = std::make_shared<Nonnegative>();
    if (all_entries) model.terms = std::make_shared<AllEntriesTerms>(40, (S + S.transpose()) / 2);
    Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 4);
    h.update(all_entries ? X_all : Matrix(p.X0.cwiseAbs()));
    double minimum[2] = {0.0, 0.0};
    int iterations[2] = {0, 0};
    for (const CoupledStep step : {CoupledStep::kCg, CoupledStep::kLinearized}) {
      AdmmOptions o;
      o.split = SplitMode::kCoupled;
      o.coupled_step = step;
      o.max_iterations = 200000;
      o.cg_tolerance = 1e-12;
      o.cg_max_iterations = 2000;
      Admm admm(h, 2.0, o);
      admm.prepare();
      ASSERT_EQ(admm.xt_step()->linearized(), step == CoupledStep::kLinearized);
      AdmmState st;
      admm.reset_if_needed(st);
      const int k = step == CoupledStep::kLinearized;
      iterations[k] = admm.run(st, 1e-9);
      ASSERT_LE(st.gap, 1e-9) << to_string(step) << (constrained ? ", constrained" : "");
      minimum[k] = st.primal;
      if (step == CoupledStep::kLinearized) {
        EXPECT_GE(admm.xt_step()->majorant_scale(), 1.0);
        EXPECT_EQ(admm.xt_step()->kind(), all_entries ? xt_step::Kind::kLinearizedSharedBlock
                                                      : xt_step::Kind::kLinearizedBlocks);
      }
    }
    const char* name = all_entries ? "all entries" : constrained ? "constrained" : "unconstrained";
    EXPECT_NEAR(minimum[1], minimum[0], 2e-9) << name;
    EXPECT_LT(minimum[0], h.center_objective() - 1.0) << name << ": the surrogate's minimum is below F(X_k), a real step";
    std::printf("[ linear  ] %s: min H %.12g (CG, %d ADMM iterations) against %.12g (linearised, %d)\n", name,
                minimum[0], iterations[0], minimum[1], iterations[1]);
  }
}


// The linearised step's majorant for terms on two rows (docs/method.md section 3.4):
// M~ = 2B + 2 rho K (K the row blocks of P*P) dominates M = 2B + rho P*P at every iterate, not only
// where a scale was estimated: the largest eigenvalue of M~^{-1} M, by power iteration from a
// random start, is at most 1. The blocks alone (2B + rho K) do not dominate M, so the factor 2 is
// needed: at the power iteration's vector they fall short. Distance terms bound their rows too,
// but their C is not diagonal (the step is then CG's). Dense terms (a term on any
// number of rows) report no bound and keep the estimated scale.
TEST(LinearizedXtStep, TwoRowTermsMajorantDominatesEverywhere) {
  auto loss = load_loss("l1");
  std::mt19937_64 rng(43);
  const Index n = 60, r = 3;
  const Matrix S = random_matrix(n, n, 1.0, rng);
  for (const int family : {0, 1, 2}) {
    Model model;
    if (family == 0) model.terms = entry_terms(random_entries(n, 400, 9));
    if (family == 1) model.terms = distance_terms(random_pairs(n, 400, 10));
    if (family == 2) model.terms = std::make_shared<AllEntriesTerms>(n, (S + S.transpose()) / 2);
    Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, r);
    h.update(random_matrix(n, r, 1.0, rng));
    ASSERT_EQ(h.linearization().rows_per_term(), 2) << family;
    if (!h.b_is_diagonal()) continue;  // distances: C is not diagonal, so the step is CG's
    AdmmOptions o;
    o.split = SplitMode::kCoupled;
    o.coupled_step = CoupledStep::kLinearized;
    const double rho = 2.0;
    Admm admm(h, rho, o);
    admm.prepare();
    // solve() is not const (CG strategies keep state); the linearised one's changes nothing here.
    xt_step::XtStep& step = const_cast<xt_step::XtStep&>(*admm.xt_step());
    ASSERT_TRUE(step.linearized()) << family << ": " << step.name();
    EXPECT_EQ(step.majorant_scale(), 2.0);
    // M v and M~ v = 2B v + proximal_term(v) (proximal_term is (M~ - 2B) v without a constraint).
    auto apply_m = [&](const Matrix& v) {
      Vector pv;
      Matrix out, adj;
      h.linearization().apply(v, pv);
      h.linearization().apply_adjoint(pv, adj);
      h.apply_B(v, out);
      return Matrix(2.0 * out + rho * adj);
    };
    auto apply_majorant = [&](const Matrix& v) {
      Matrix out, prox;
      h.apply_B(v, out);
      step.proximal_term(v, prox);
      return Matrix(2.0 * out + prox);
    };
    Matrix v = random_matrix(n, r, 1.0, rng), w;
    double largest = 0.0;
    for (int t = 0; t < 300; ++t) {
      v /= v.norm();
      const Matrix mv = apply_m(v);
      largest = std::max(largest, v.cwiseProduct(mv).sum() / v.cwiseProduct(apply_majorant(v)).sum());
      long cg = 0;
      step.solve(mv, w, 0.0, &cg);
      v = w;
    }
    v /= v.norm();
    EXPECT_LE(largest, 1.0 + 1e-12) << family;
    EXPECT_GT(largest, 0.9) << family << ": the power iteration found the tight direction";
    // The blocks alone at the same vector: proximal_term(v) is 2 rho K v.
    Matrix bv, prox;
    h.apply_B(v, bv);
    step.proximal_term(v, prox);
    const Matrix blocks_v = 2.0 * bv + 0.5 * prox;  // 2B v + rho K v
    EXPECT_GT(v.cwiseProduct(apply_m(v)).sum(), v.cwiseProduct(blocks_v).sum() * (1.0 + 1e-6)) << family;
  }
  Model sparse;
  sparse.terms = random_dense_terms(8, 12, 11);
  Surrogate h(sparse, *loss, {0.5, 0.0}, SplitMode::kCoupled, 2);
  h.update(random_matrix(8, 2, 1.0, rng));
  EXPECT_EQ(h.linearization().rows_per_term(), 0);
}


// Admm::run() skips the gap of the linearised step's first iteration, which cannot end the run
// (it runs at least two): the iterate, the state and the final gap are bit for bit those of
// iterate() called until the gap is met, which computes every gap. Under X >= 0, where the skipped
// gap is the costly one (the value at Y).
TEST(LinearizedXtStep, RunSkipsOnlyGapsThatCannotEndIt) {
  const Problem p = make_problem();
  auto loss = load_loss("l1");
  Model model = p.model;
  model.constraint = std::make_shared<Nonnegative>();
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kCoupled, 4);
  h.update(p.X0.cwiseAbs());
  AdmmOptions o;
  o.split = SplitMode::kCoupled;
  o.coupled_step = CoupledStep::kLinearized;
  o.adaptive_rho = false;  // iterate() alone never balances rho (run() does, after 20 iterations)
  const double eps = 1e-3;
  Admm a(h, 2.0, o), b(h, 2.0, o);
  AdmmState sa, sb;
  a.prepare();
  a.reset_if_needed(sa);
  const int ran = a.run(sa, eps);
  b.prepare();
  b.reset_if_needed(sb);
  int iterated = 0;
  do {
    b.iterate(sb, eps);
    ++iterated;
  } while (iterated < 2 || (sb.gap > eps && iterated < o.max_iterations));
  EXPECT_EQ(ran, iterated);
  EXPECT_GT(ran, 2) << "the run should go past the skipped gap";
  EXPECT_TRUE(sa.D == sb.D);
  EXPECT_TRUE(sa.step == sb.step);
  EXPECT_TRUE(sa.nu == sb.nu);
  EXPECT_EQ(sa.gap, sb.gap);
  EXPECT_LE(sa.gap, eps);
}

}  // namespace
}  // namespace sdprl
