// The fused row-split ADMM pass (framework/src/admm/row_kernel.h) against the generic three-pass
// path it replaces: the same mathematics, so the same iterates up to rounding; and the row vectors
// a_h that it reads against the linearisation's own maps P and P*. Threads must not change a bit.
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "admm/row_kernel.h"
#include "sdprl/constraint.h"
#include "sdprl/error.h"
#include "sdprl/solver.h"
#include "sdprl/terms/all_entries_terms.h"
#include "admm/admm.h"
#include "mm/solve_paths.h"
#include "mm/surrogate.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

// <D, P_h> = <d_i, a_h> and P*(y) row i = sum_h y_h a_h, with a_h from RowSplitView::row_vectors().
void expect_row_vectors_match_maps(const ConstraintSet& terms, Index r, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Index n = terms.dimension();
  const Matrix X = random_matrix(n, r, 1.0, rng), D = random_matrix(n, r, 1.0, rng);
  auto lin = terms.make_linearization(SplitMode::kRowSplit);
  Vector w = Vector::Random(terms.size()).cwiseAbs() + Vector::Constant(terms.size(), 0.1);
  Vector values;
  terms.evaluate(X, values);
  lin->update(X, w, values - terms.targets());
  const RowSplitView* view = lin->row_split();
  ASSERT_NE(view, nullptr);
  const Index* off = view->row_offsets();
  ASSERT_EQ(off[n], lin->size());
  Vector PD, y = Vector::Random(lin->size());
  Matrix adj;
  lin->apply(D, PD);
  lin->apply_adjoint(y, adj);
  Matrix gram;
  lin->gram_row_blocks(gram);
  for (Index i = 0; i < n; ++i) {
    const Index deg = off[i + 1] - off[i];
    std::vector<double> a(static_cast<std::size_t>(deg * r));
    if (deg > 0) view->row_vectors(i, a.data());
    const Eigen::Map<const Eigen::MatrixXd> A(a.data(), deg, r);  // column c of A: entry c of the a_h
    const Vector pd = A * D.row(i).transpose();
    const Eigen::RowVectorXd row = (A.transpose() * y.segment(off[i], deg)).transpose();
    for (Index q = 0; q < deg; ++q) EXPECT_NEAR(pd[q], PD[off[i] + q], 1e-12 * (1.0 + std::abs(PD[off[i] + q])));
    EXPECT_LE((row - adj.row(i)).norm(), 1e-12 * (1.0 + adj.row(i).norm())) << "row " << i;
    EXPECT_LE((A.transpose() * A - gram.middleRows(i * r, r)).norm(), 1e-12 * (1.0 + gram.middleRows(i * r, r).norm()));
  }
}

// Ranks below 4 gather term by term; 4 to 8 four terms at a time (a transposed gather on AVX2,
// rows of every degree mod 4 here), with ranks above 4 taking their last entries one by one. The
// gather reads a padded copy of X (rows of 2, 4 or 8 doubles for ranks up to 8, r above): every
// stride here, against the maps, which read X itself.
TEST(RowVectors, EntryTermsMatchTheirMaps) {
  const EntryData d = random_entries(15, 80, 71);
  for (const Index r : {1, 2, 3, 4, 5, 6, 7, 8, 10, 11}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_row_vectors_match_maps(*entry_terms(d), r, 72);
  }
}

TEST(RowVectors, DistanceTermsMatchTheirMaps) {
  const EntryData d = random_pairs(15, 60, 73);
  expect_row_vectors_match_maps(*distance_terms(d), 4, 74);
}

TEST(RowVectors, CoupledModeHasNone) {
  const EntryData d = random_entries(6, 10, 75);
  EXPECT_EQ(entry_terms(d)->make_linearization(SplitMode::kCoupled)->row_split(), nullptr);
}

// The one-pass rebuild (OnePassUpdate::update_with_loss) against the three steps it fuses:
// ConstraintSet::evaluate, Loss::evaluate on |r| and update(X, w, r). Same b_h, a_h, C and Gram
// blocks, and its two sums are sum phi(|r|) and sum w |r| over the terms (each term once, though
// each off-diagonal term has two halves). Leaky-MCP at a scale where residuals fall on both sides
// of its knee; the entries include diagonal ones and both orders of a pair.
// Beyond detail::kPrefetchSplitTerms half-terms the gather prefetches the next row's indices
// and the partner rows some terms ahead (reading partner indices past the row's end): the same a_h,
// at a fixed rank with the four-at-a-time gather (5), term by term (3) and at a dynamic rank (11).
TEST(RowVectors, EntryTermsMatchTheirMapsBeyondThePrefetchThreshold) {
  const Index m = detail::kPrefetchSplitTerms / 2 + 5000;  // two half-terms per off-diagonal entry
  const EntryData d = random_entries(4000, m, 73);
  const auto terms = entry_terms(d);
  auto lin = terms->make_linearization(SplitMode::kRowSplit);
  ASSERT_GT(lin->size(), detail::kPrefetchSplitTerms) << "the instance must cross the threshold";
  for (const Index r : {3, 5, 11}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_row_vectors_match_maps(*terms, r, 74);
  }
}

TEST(OnePassRebuild, SameLinearisationAsEvaluateLossAndUpdate) {
  const EntryData d = random_entries(300, 4000, 91);
  const auto terms = entry_terms(d);
  const auto loss = load_loss("leaky-mcp");
  for (const Index r : {1, 5, 11}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    std::mt19937_64 rng(92 + static_cast<std::uint64_t>(r));
    const Matrix X = random_matrix(d.n, r, 1.5, rng);
    auto three = terms->make_linearization(SplitMode::kRowSplit), one = terms->make_linearization(SplitMode::kRowSplit);
    Vector values, phi, w;
    terms->evaluate(X, values);
    const Vector residual = values - terms->targets(), abs_residual = residual.cwiseAbs();
    loss->evaluate(abs_residual, phi, w);
    ASSERT_GT((w.array() == 0.05).count(), 100) << "residuals beyond the knee";
    ASSERT_GT((w.array() > 0.05).count(), 100) << "residuals before the knee";
    three->update(X, w, residual);
    double phi_sum = 0.0, weighted_abs = 0.0;
    ASSERT_NE(one->one_pass(), nullptr);
    one->one_pass()->update_with_loss(X, *loss, &phi_sum, &weighted_abs, nullptr);
    EXPECT_NEAR(phi_sum, phi.sum(), 1e-12 * phi.sum());
    EXPECT_NEAR(weighted_abs, w.dot(abs_residual), 1e-12 * w.dot(abs_residual));
    ASSERT_EQ(one->size(), three->size());
    EXPECT_LE((one->offsets() - three->offsets()).norm(), 1e-12 * three->offsets().norm());
    Vector c1, c3;
    one->curvature_diagonal(c1);
    three->curvature_diagonal(c3);
    EXPECT_LE((c1 - c3).norm(), 1e-12 * c3.norm());
    Matrix g1, g3;
    one->gram_row_blocks(g1);
    three->gram_row_blocks(g3);
    EXPECT_LE((g1 - g3).norm(), 1e-12 * g3.norm());
    const Index* off = one->row_split()->row_offsets();
    for (Index i = 0; i < d.n; ++i) {
      const Index deg = off[i + 1] - off[i];
      std::vector<double> a1(static_cast<std::size_t>(deg * r)), a3(a1.size());
      if (deg == 0) continue;
      one->row_split()->row_vectors(i, a1.data());
      three->row_split()->row_vectors(i, a3.data());
      for (std::size_t q = 0; q < a1.size(); ++q) ASSERT_NEAR(a1[q], a3[q], 1e-13 * (1.0 + std::abs(a3[q]))) << "row " << i;
    }
  }
  // The coupled linearisation has no one-pass form: the surrogate takes the three steps.
  EXPECT_EQ(terms->make_linearization(SplitMode::kCoupled)->one_pass(), nullptr);
}

// A loss that throws inside the parallel rebuild: the exception reaches the caller (it must not
// escape the OpenMP region, which would terminate the program).
class ThrowingLoss final : public Loss {
 public:
  std::string name() const override { return "throws"; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
  void evaluate(const Vector&, Vector&, Vector&) const override { throw Error("loss", "evaluate failed"); }
};

TEST(OnePassRebuild, ALossThatThrowsReachesTheCaller) {
  const EntryData d = random_entries(500, 5000, 93);
  const auto terms = entry_terms(d);  // the linearisation refers to it
  auto lin = terms->make_linearization(SplitMode::kRowSplit);
  double phi_sum = 0.0, weighted_abs = 0.0;
  set_threads(2);
  EXPECT_THROW(lin->one_pass()->update_with_loss(Matrix::Ones(d.n, 3), ThrowingLoss(), &phi_sum, &weighted_abs, nullptr),
               Error);
  set_threads(1);
}

struct RunResult {
  Summary summary;
  Matrix X;
};

RunResult run(const Model& model, const char* loss_name, Index rank, bool fused, int threads, std::uint64_t seed,
              double lambda = 0.3, bool fused_rebuild = true) {
  auto loss = load_loss(loss_name);
  std::mt19937_64 rng(seed);
  RunResult out;
  out.X = random_matrix(model.terms->dimension(), rank, 1.0, rng);
  SolverOptions o;
  o.rank = rank;
  o.verbose = false;
  o.init = InitKind::kGiven;
  o.max_mm_iterations = 25;
  o.relative_tolerance = 0.0;
  o.admm.split = SplitMode::kRowSplit;
  o.threads = threads;
  out.summary = detail::solve(model, *loss, {lambda, 0.0}, o, out.X, xt_step::Paths{fused, fused_rebuild});
  return out;
}

// Same ADMM counts, objectives and factor from the fused and the generic path. Ranks up to 8 take
// the fixed-size kernels (eight terms at a time, then the row's last deg mod 8 one by one), rank 11
// the dynamic one; n = 300 gives several row chunks.
void expect_fused_equals_generic(const Model& model, const char* loss, Index rank, std::uint64_t seed,
                                 double lambda = 0.3) {
  const RunResult f = run(model, loss, rank, true, 1, seed, lambda), g = run(model, loss, rank, false, 1, seed, lambda);
  ASSERT_EQ(f.summary.trace.size(), g.summary.trace.size());
  ASSERT_GT(f.summary.trace.size(), 5u);
  for (std::size_t k = 0; k < f.summary.trace.size(); ++k) {
    EXPECT_EQ(f.summary.trace[k].admm_iterations, g.summary.trace[k].admm_iterations) << "MM step " << k + 1;
    EXPECT_NEAR(f.summary.trace[k].objective, g.summary.trace[k].objective, 1e-10 * std::abs(g.summary.trace[k].objective));
    EXPECT_NEAR(f.summary.trace[k].gap, g.summary.trace[k].gap, 1e-8 * (1.0 + std::abs(g.summary.trace[k].objective)));
  }
  EXPECT_LE((f.X - g.X).norm(), 1e-9 * g.X.norm());
  EXPECT_LT(f.summary.final_objective, f.summary.initial_objective);
}

TEST(FusedRowPass, EntryTermsSameIteratesAsGenericPath) {
  Model m;
  m.terms = entry_terms(random_entries(300, 3000, 81));
  for (const Index r : {1, 4, 5, 8, 11}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_fused_equals_generic(m, "leaky-mcp", r, 82);
    expect_fused_equals_generic(m, "l1", r, 83);
  }
}

// X >= 0 (symmetric NMF): the constraint split's Y- and mu-steps run inside the fused pass, row by
// row, and give the generic split's iterates (Admm::step on the whole matrix): objective, gap, ADMM
// counts and factor, at fixed ranks (one of them 10) and a dynamic one. Without the Y-step in the
// pass the iterates leave X >= 0; without its terms in the Xt-step or the gap they differ.
TEST(FusedRowPass, NonnegativeConstraintSameIteratesAsGenericSplit) {
  Model m;
  m.terms = entry_terms(random_entries(300, 3000, 97));
  m.constraint = std::make_shared<Nonnegative>();
  for (const Index r : {3, 10, 11}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_fused_equals_generic(m, "leaky-mcp", r, 98);
    expect_fused_equals_generic(m, "l1", r, 99, 0.05);
  }
  const RunResult f = run(m, "l1", 4, true, 1, 100);
  EXPECT_GE(f.X.minCoeff(), 0.0);
  EXPECT_GT((f.X.array() == 0.0).count(), 0) << "the constraint is active somewhere";
  // The rows' Y- and mu-steps and mu_x join the fixed chunks' sums: bitwise the same for any
  // thread count.
  const RunResult two = run(m, "l1", 4, true, 2, 100);
  set_threads(1);
  EXPECT_EQ(two.summary.final_objective, f.summary.final_objective);
  EXPECT_TRUE(two.X == f.X) << "max difference " << (two.X - f.X).cwiseAbs().maxCoeff();
}

// The direct Xt-step solves (2B + rho P*P) D = -G - P*(nu + rho (b - e)) exactly, row by row, with
// the inverse blocks K_i^{-1} (detail::invert_row_blocks) of the Gram blocks sum_h a_h a_h^T
// (detail::row_block_gram): checked against the normal equations written with P, P* and B, for
// the fixed-rank kernels (rank 5; rank 10, whose Gram blocks are summed in three column tiles)
// and the dynamic ones (ranks 11 and 24: SYRK and blocked triangular solve), on the fused and on
// the generic path.
TEST(DirectXtStep, SolvesItsNormalEquationsAtFixedAndDynamicRanks) {
  Model model;
  model.terms = entry_terms(random_entries(120, 3000, 95));
  const auto loss = load_loss("leaky-mcp");
  for (const Index r : {5, 10, 11, 24}) {
    for (const bool fused : {true, false}) {
      SCOPED_TRACE("rank " + std::to_string(r) + (fused ? ", fused" : ", generic"));
      std::mt19937_64 rng(96 + static_cast<std::uint64_t>(r));
      Surrogate H(model, *loss, {0.3, 0.0}, SplitMode::kRowSplit, r);
      H.update(random_matrix(model.terms->dimension(), r, 1.0, rng));
      AdmmOptions options;
      Admm admm(H, 2.0, options, xt_step::Paths{fused, true});
      admm.prepare();
      ASSERT_TRUE(admm.direct());
      ASSERT_EQ(admm.fused(), fused);
      AdmmState st;
      admm.reset_if_needed(st);
      // A warm state, so that every part of the right side counts; one the ADMM can make (nu_h =
      // 2 sign(e_h) where e_h != 0), as the fused pass keeps it packed (AdmmState::u).
      const Vector u0 = 3.0 * Vector::Random(H.split_terms());
      st.nu = u0.cwiseMax(-2.0).cwiseMin(2.0);
      st.e = (u0 - st.nu) / admm.rho();
      st.adjoint_generation = 0;
      const Vector nu0 = st.nu, e0 = st.e;
      ASSERT_GT((e0.array() != 0.0).count(), H.split_terms() / 4);
      admm.iterate(st, 1e-9);
      const TermLinearization& lin = H.linearization();
      const double rho = admm.rho();
      Vector PD;
      Matrix lhs, PtPD, rhs;
      lin.apply(st.D, PD);
      lin.apply_adjoint(PD, PtPD);
      H.apply_B(st.D, lhs);
      lhs = 2.0 * lhs + rho * PtPD;
      const Vector y = nu0 + rho * (lin.offsets() - e0);
      lin.apply_adjoint(y, rhs);
      rhs = -H.G() - rhs;
      ASSERT_GT(rhs.norm(), 1.0);
      EXPECT_LE((lhs - rhs).norm(), 1e-10 * rhs.norm());
    }
  }
}

TEST(FusedRowPass, DistanceTermsSameIteratesAsGenericPath) {
  Model m;
  m.terms = distance_terms(random_pairs(200, 1500, 84));
  expect_fused_equals_generic(m, "l1", 3, 85);
}

// All n^2 entry terms (sparse PCA's family) take the dense pass over tiles of rows
// (xt_step/dense_rows.h), on a state packed with the weights' bounds. On one surrogate its
// iterates are those of the generic iteration on the shared block (D, the step, nu, e and the gap
// at every iteration), without and under a Frobenius ball (the constraint split after the pass,
// and the value at the feasible step in a second one); n = 70: two full tiles of 32 rows and a
// short one. Fails when a tile's right-hand side, its e- and nu-steps, the dual's P*(nu), the
// second pass or the weighted unpacking is dropped or altered.
Matrix symmetric_targets(Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Matrix A = random_matrix(n, n, 1.0, rng);
  return 0.5 * (A + Matrix(A.transpose()));
}

void expect_dense_pass_equals_generic(const Model& model, const char* loss_name, Index r, std::uint64_t seed,
                                      bool keep_packed = false) {
  const Index n = model.terms->dimension();
  auto loss = load_loss(loss_name);
  Surrogate h(model, *loss, {0.3, 0.0}, SplitMode::kRowSplit, r);
  std::mt19937_64 rng(seed);
  h.update(random_matrix(n, r, 1.0, rng));
  AdmmOptions options;
  Admm dense(h, 3.0, options, xt_step::Paths{true, true}), generic(h, 3.0, options, xt_step::Paths{false, true});
  dense.prepare();
  generic.prepare();
  ASSERT_EQ(dense.xt_step()->kind(), xt_step::Kind::kDenseRows);
  ASSERT_EQ(generic.xt_step()->kind(), xt_step::Kind::kSharedBlock);
  AdmmState packed, g;
  packed.keep_packed = keep_packed;
  dense.reset_if_needed(packed);
  generic.reset_if_needed(g);
  auto near = [](const auto& x, const auto& y) { return (x - y).norm() <= 1e-9 * (1.0 + y.norm()); };
  double first_gap = 0.0;
  for (int t = 0; t < 30; ++t) {
    if (t == 15) {  // a new rho: a packed state is unpacked with its weights and packed again,
      packed.packed_weights = nullptr;  // also when it comes without them, as from a checkpoint
      dense.set_rho(7.0);
      generic.set_rho(7.0);
    }
    dense.iterate(packed, 1e-9);  // without keep_packed: packs, runs the pass, unpacks with the weights
    generic.iterate(g, 1e-9);
    ASSERT_EQ(packed.packed(), keep_packed);
    AdmmState a = packed;
    a.unpack();
    EXPECT_TRUE(near(a.D, g.D)) << "iteration " << t;
    EXPECT_TRUE(near(a.step, g.step)) << "iteration " << t;
    EXPECT_TRUE(near(a.nu, g.nu)) << "iteration " << t;
    EXPECT_TRUE(near(a.e, g.e)) << "iteration " << t;
    EXPECT_NEAR(a.gap, g.gap, 1e-9 * (1.0 + std::abs(g.primal))) << "iteration " << t;
    EXPECT_NEAR(a.dual, g.dual, 1e-9 * (1.0 + std::abs(g.primal))) << "iteration " << t;
    if (t == 0) first_gap = g.gap;
  }
  EXPECT_LT(g.gap, 0.5 * first_gap) << "the run went somewhere";
}

TEST(DensePass, SameIteratesAsGenericOnOneSurrogate) {
  const Index n = 70;
  Model m;
  m.terms = std::make_shared<AllEntriesTerms>(n, symmetric_targets(n, 120));
  for (const Index r : {3, 6}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_dense_pass_equals_generic(m, "leaky-mcp", r, 121);
    expect_dense_pass_equals_generic(m, "l1", r, 122);
  }
  expect_dense_pass_equals_generic(m, "leaky-mcp", 4, 121, /*keep_packed=*/true);
  m.constraint = std::make_shared<FrobeniusBall>(1.0);
  expect_dense_pass_equals_generic(m, "leaky-mcp", 4, 123);
  expect_dense_pass_equals_generic(m, "l1", 4, 124, /*keep_packed=*/true);
  m.constraint = std::make_shared<Nonnegative>();  // a cone: sigma_K(mu) = 0 in the dual
  expect_dense_pass_equals_generic(m, "leaky-mcp", 4, 129);
}

// While eps_k is loose (>= 1e-4 of the surrogate's magnitude) the dense pass's four products run in
// single precision (xt_step/dense_rows.cc, kSingleProducts); below it, in double (the test above,
// at eps 1e-9). Ten iterations from one state at each: the iterates differ, so the floats were
// used, by far less than the loose tolerance allows (relative 1e-5 on D, the step and the
// multipliers, and on the gap's and the dual's values).
TEST(DensePass, SingleProductsWhileTheToleranceIsLoose) {
  const Index n = 70, r = 6;
  for (const bool ball : {false, true}) {
    SCOPED_TRACE(ball ? "Frobenius ball" : "unconstrained");
    Model m;
    m.terms = std::make_shared<AllEntriesTerms>(n, symmetric_targets(n, 130));
    if (ball) m.constraint = std::make_shared<FrobeniusBall>(1.0);
    auto loss = load_loss("leaky-mcp");
    Surrogate h(m, *loss, {0.3, 0.0}, SplitMode::kRowSplit, r);
    std::mt19937_64 rng(131);
    h.update(random_matrix(n, r, 1.0, rng));
    AdmmOptions options;
    Admm loose(h, 3.0, options, xt_step::Paths{true, true}), tight(h, 3.0, options, xt_step::Paths{true, true});
    loose.prepare();
    tight.prepare();
    ASSERT_EQ(loose.xt_step()->kind(), xt_step::Kind::kDenseRows);
    AdmmState a, b;
    loose.reset_if_needed(a);
    tight.reset_if_needed(b);
    const double eps_loose = 1e-3 * h.objective_magnitude();
    for (int t = 0; t < 10; ++t) {
      loose.iterate(a, eps_loose);
      tight.iterate(b, 1e-9);
    }
    const auto rel = [](const auto& x, const auto& y) { return (x - y).norm() / (1e-300 + y.norm()); };
    EXPECT_GT(rel(a.D, b.D), 0.0) << "the loose pass ran in double";
    EXPECT_LT(rel(a.D, b.D), 1e-5);
    EXPECT_LT(rel(a.step, b.step), 1e-5);
    EXPECT_LT(rel(a.nu, b.nu), 1e-5);
    EXPECT_NEAR(a.gap, b.gap, 1e-5 * (1.0 + std::abs(b.primal)));
    EXPECT_NEAR(a.dual, b.dual, 1e-5 * (1.0 + std::abs(b.primal)));
    EXPECT_LT(std::abs(a.gap - b.gap), 1e-2 * eps_loose);
  }
}

// Across MM steps the packed state meets new weights: the next step starts from the generic
// path's multipliers projected onto the new bounds (docs/method.md section 3.3), so the two runs
// differ in their warm starts only. Both converge, to the same objective; under the ball the
// constraint is active.
TEST(DensePass, SolvesAsTheGenericPath) {
  const Index n = 70;
  Model m;
  m.terms = std::make_shared<AllEntriesTerms>(n, symmetric_targets(n, 125));
  m.constraint = std::make_shared<FrobeniusBall>(1.0);
  for (const char* loss : {"leaky-mcp", "l1"}) {
    SCOPED_TRACE(loss);
    auto solve_with = [&](bool dense) {
      auto l = load_loss(loss);
      std::mt19937_64 rng(126);
      RunResult out;
      out.X = random_matrix(n, 4, 0.1, rng);
      SolverOptions o;
      o.rank = 4;
      o.verbose = false;
      o.init = InitKind::kGiven;
      o.admm.split = SplitMode::kRowSplit;
      o.relative_tolerance = 1e-9;
      out.summary = detail::solve(m, *l, {0.05, 0.0}, o, out.X, xt_step::Paths{dense, true});
      return out;
    };
    const RunResult d = solve_with(true), g = solve_with(false);
    EXPECT_EQ(d.summary.status, SolverStatus::kConverged);
    EXPECT_EQ(g.summary.status, SolverStatus::kConverged);
    EXPECT_NEAR(d.summary.final_objective, g.summary.final_objective, 1e-6 * std::abs(g.summary.final_objective));
    EXPECT_NEAR(d.X.norm(), 1.0, 1e-6) << "the ball is active";
  }
}

// A run of 30 MM steps from X0, and the same run interrupted after step `stop_after`: the full
// summary and factor, the interrupted run's summary and the checkpoints it took.
struct Interrupted {
  Summary full, part;
  Matrix reference;
  std::vector<SolverState> saved;
};
Interrupted interrupt_after(const Model& model, const Loss& loss, RegularizationWeights weights, const Matrix& X0,
                            SolverOptions& o, int stop_after) {
  o.rank = X0.cols();
  o.verbose = false;
  o.init = InitKind::kGiven;
  o.max_mm_iterations = 30;
  o.relative_tolerance = 0.0;
  o.checkpoint_interval = 1e9;  // only the interrupt's checkpoint
  Interrupted out;
  out.reference = X0;
  out.full = solve(model, loss, weights, o, out.reference);
  std::atomic<bool> stop{false};
  o.interrupt = &stop;
  Matrix X = X0;
  out.part = solve(
      model, loss, weights, o, X,
      [&](const TraceRow& row, const Matrix&) {
        if (row.mm_iteration == stop_after) stop = true;
        return true;
      },
      nullptr, [&](const SolverState& st) { out.saved.push_back(st); });
  o.interrupt = nullptr;
  return out;
}

// The dense pass's packed state is checkpointed packed (u, no nu or e: its bounds are the weights,
// which the checkpoint does not hold) and resumes to the uninterrupted run bit for bit: the pass
// takes u as it is and sets its weights again.
TEST(DensePass, InterruptedRunResumesBitForBit) {
  const Index n = 70;
  Model model;
  model.terms = std::make_shared<AllEntriesTerms>(n, symmetric_targets(n, 127));
  model.constraint = std::make_shared<FrobeniusBall>(1.0);
  auto loss = load_loss("leaky-mcp");
  std::mt19937_64 rng(128);
  SolverOptions o;
  const Interrupted run = interrupt_after(model, *loss, {0.05, 0.0}, random_matrix(n, 3, 0.1, rng), o, 10);
  ASSERT_EQ(run.full.mm_iterations, 30);
  EXPECT_EQ(run.part.status, SolverStatus::kInterrupted);
  ASSERT_EQ(run.saved.size(), 1u);
  EXPECT_EQ(run.saved[0].u.size(), n * n);
  EXPECT_EQ(run.saved[0].nu.size(), 0);
  Matrix resumed = run.saved[0].X;
  const Summary rest = solve(model, *loss, {0.05, 0.0}, o, resumed, {}, &run.saved[0]);
  EXPECT_EQ(rest.mm_iterations, 30);
  EXPECT_EQ(rest.final_objective, run.full.final_objective);
  EXPECT_TRUE(resumed == run.reference) << "max difference " << (resumed - run.reference).cwiseAbs().maxCoeff();
}

// Tiles' sums are added in tile order: bitwise the same for any thread count (n = 300: n^2 terms
// over the parallel threshold, ten tiles).
TEST(DensePass, BitIdenticalForOneAndTwoThreads) {
  Model m;
  m.terms = std::make_shared<AllEntriesTerms>(300);
  m.constraint = std::make_shared<FrobeniusBall>(1.0);
  const RunResult one = run(m, "leaky-mcp", 4, true, 1, 125, 0.0), two = run(m, "leaky-mcp", 4, true, 2, 125, 0.0);
  set_threads(1);
  ASSERT_GT(one.summary.trace.size(), 5u);
  EXPECT_EQ(one.summary.final_objective, two.summary.final_objective);
  EXPECT_TRUE(one.X == two.X) << "max difference " << (one.X - two.X).cwiseAbs().maxCoeff();
}

// Rows that no term touches with lambda = 0: K_i = 0 and B_ii = 0 there (d_i = 0, M_i = 0).
TEST(FusedRowPass, RowsWithoutTermsAndNoRegularizer) {
  EntryData d = random_entries(40, 200, 86);
  for (std::size_t k = 0; k < d.rows.size(); ++k) {  // rows 0..4 untouched
    if (d.rows[k] < 5) d.rows[k] += 5;
    if (d.cols[k] < 5) d.cols[k] += 5;
  }
  Model m;
  m.terms = entry_terms(d);
  expect_fused_equals_generic(m, "l1", 2, 87, 0.0);
}

// Determinism across thread counts: fixed row chunks, partial sums added in chunk order.
TEST(FusedRowPass, BitIdenticalForOneAndTwoThreads) {
  Model m;
  m.terms = entry_terms(random_entries(1000, 20000, 88));
  const RunResult one = run(m, "leaky-mcp", 5, true, 1, 89), two = run(m, "leaky-mcp", 5, true, 2, 89);
  EXPECT_EQ(one.summary.final_objective, two.summary.final_objective);
  EXPECT_TRUE(one.X == two.X) << "max difference " << (one.X - two.X).cwiseAbs().maxCoeff();
  set_threads(1);
}

// The MM rebuild fused with the next ADMM's first iteration (Admm::update_and_iterate) against the
// separate steps: the same functions on the same numbers, so the same iterates bit for bit, for
// every MM step (objective, gap, ADMM count) and the final factor.
void expect_fused_rebuild_bit_identical(const Model& model, const char* loss, Index rank, int threads,
                                        std::uint64_t seed, double lambda = 0.3) {
  const RunResult a = run(model, loss, rank, true, threads, seed, lambda, true);
  const RunResult b = run(model, loss, rank, true, threads, seed, lambda, false);
  set_threads(1);
  ASSERT_EQ(a.summary.trace.size(), b.summary.trace.size());
  ASSERT_GT(a.summary.trace.size(), 5u);
  for (std::size_t k = 0; k < a.summary.trace.size(); ++k) {
    EXPECT_EQ(a.summary.trace[k].admm_iterations, b.summary.trace[k].admm_iterations) << "MM step " << k + 1;
    EXPECT_EQ(a.summary.trace[k].objective, b.summary.trace[k].objective) << "MM step " << k + 1;
    EXPECT_EQ(a.summary.trace[k].gap, b.summary.trace[k].gap) << "MM step " << k + 1;
  }
  EXPECT_TRUE(a.X == b.X) << "max difference " << (a.X - b.X).cwiseAbs().maxCoeff();
  EXPECT_LT(a.summary.final_objective, a.summary.initial_objective);
}

TEST(FusedRebuild, BitIdenticalToSeparateRebuildAndFirstIteration) {
  Model m;
  m.terms = entry_terms(random_entries(300, 3000, 91));
  for (const Index r : {1, 5, 11}) {  // fixed-size kernels and the dynamic one
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_fused_rebuild_bit_identical(m, "leaky-mcp", r, 1, 92);
    expect_fused_rebuild_bit_identical(m, "l1", r, 2, 93);
  }
}

// Rows that no term touches, lambda = 0: the rebuild hands them over with no a_h (K_i = 0, B_ii = 0).
TEST(FusedRebuild, RowsWithoutTermsAndNoRegularizer) {
  EntryData d = random_entries(40, 200, 94);
  for (std::size_t k = 0; k < d.rows.size(); ++k) {  // rows 0..4 untouched
    if (d.rows[k] < 5) d.rows[k] += 5;
    if (d.cols[k] < 5) d.cols[k] += 5;
  }
  Model m;
  m.terms = entry_terms(d);
  expect_fused_rebuild_bit_identical(m, "l1", 2, 1, 95, 0.0);
}

// Admm::update_and_iterate on one surrogate: the iteration it runs inside the rebuild equals
// prepare(), a zero Xt and iterate() on the same warm state, and run() counts it as the first.
TEST(FusedRebuild, UpdateAndIterateEqualsPrepareThenIterate) {
  Model model;
  model.terms = entry_terms(random_entries(120, 1500, 96));
  auto loss = load_loss("leaky-mcp");
  std::mt19937_64 rng(97);
  const Matrix X0 = random_matrix(120, 4, 1.0, rng), X1 = random_matrix(120, 4, 1.0, rng);
  AdmmOptions options;
  Surrogate s1(model, *loss, {0.3, 0.0}, SplitMode::kRowSplit, 4), s2(model, *loss, {0.3, 0.0}, SplitMode::kRowSplit, 4);
  s1.update(X0);
  s2.update(X0);
  const double f0 = s2.center_objective();
  Admm a1(s1, 2.0, options), a2(s2, 2.0, options);
  a1.prepare();
  a2.prepare();
  AdmmState st1, st2;
  st1.keep_packed = st2.keep_packed = true;  // as the MM solver keeps them (AdmmState::u)
  a1.run(st1, 1e-3);  // a warm state: nonzero nu and e
  a2.run(st2, 1e-3);
  ASSERT_TRUE(st1.packed() && st2.packed());
  ASSERT_TRUE(st1.u == st2.u);
  ASSERT_GT((st1.u.array().abs() > 2.0).count(), 0) << "no term with e != 0: a weak test";
  ASSERT_TRUE(a1.update_and_iterate(s1, X1, st1));
  EXPECT_TRUE(a1.primed());
  s2.update(X1);
  a2.prepare();
  a2.reset_if_needed(st2);
  st2.D.setZero();
  a2.iterate(st2, 1e-3);
  ASSERT_TRUE(st1.packed() && st2.packed());
  EXPECT_TRUE(st1.u == st2.u);
  EXPECT_TRUE(st1.D == st2.D);
  EXPECT_EQ(st1.primal, st2.primal);
  EXPECT_EQ(st1.dual, st2.dual);
  EXPECT_EQ(s1.center_objective(), s2.center_objective());
  // A tolerance the first iteration meets: run() stops at once and counts one iteration.
  EXPECT_EQ(a1.run(st1, std::abs(st1.gap) + 1.0), 1);
  EXPECT_FALSE(a1.primed());
  // The separate path is used where the fused one does not apply.
  Admm a3(s2, 2.0, AdmmOptions{}, xt_step::Paths{true, false});
  a3.prepare();
  EXPECT_FALSE(a3.update_and_iterate(s2, X0, st2));
  EXPECT_FALSE(a3.primed());
  EXPECT_EQ(s2.center_objective(), f0) << "the surrogate is updated all the same";
  // Distance terms have the fused row pass but no one-pass rebuild: the separate path.
  Model pairs;
  pairs.terms = distance_terms(random_pairs(60, 400, 100));
  Surrogate sd(pairs, *loss, {0.3, 0.0}, SplitMode::kRowSplit, 4);
  const Matrix Y0 = random_matrix(60, 4, 1.0, rng);
  sd.update(Y0);
  Admm ad(sd, 2.0, options);
  ad.prepare();
  ASSERT_TRUE(ad.fused());
  AdmmState sdst;
  EXPECT_FALSE(ad.update_and_iterate(sd, random_matrix(60, 4, 1.0, rng), sdst));
  EXPECT_FALSE(ad.primed());
}

// An interrupt that arrives while the next step's first iteration is already done (during a fused
// rebuild): the run finishes that step, checkpoints between two steps, and the checkpoint resumes
// to the uninterrupted result bit for bit.
TEST(FusedRebuild, InterruptAfterAFusedRebuildCheckpointsAResumableState) {
  Model model;
  model.terms = entry_terms(random_entries(200, 2500, 98));
  auto loss = load_loss("leaky-mcp");
  std::mt19937_64 rng(99);
  SolverOptions o;
  o.admm.split = SplitMode::kRowSplit;  // the fused rebuild is the row-split pass's
  // Stopped after step 10's (fused) rebuild.
  const Interrupted run = interrupt_after(model, *loss, {0.3, 0.0}, random_matrix(200, 3, 1.0, rng), o, 10);
  const Summary& full = run.full;
  const Matrix& reference = run.reference;
  const std::vector<SolverState>& saved = run.saved;
  ASSERT_EQ(full.mm_iterations, 30);
  EXPECT_EQ(run.part.status, SolverStatus::kInterrupted);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].k, 11) << "the step whose first iteration was done is finished first";
  // Saved as the fused pass keeps it: packed (AdmmState::u), so that nothing is rounded on the way.
  EXPECT_EQ(saved[0].u.size(), Surrogate(model, *loss, {0.3, 0.0}, SplitMode::kRowSplit, 3).split_terms());
  EXPECT_EQ(saved[0].nu.size(), 0);
  Matrix resumed = saved[0].X;
  const Summary rest = solve(model, *loss, {0.3, 0.0}, o, resumed, {}, &saved[0]);
  EXPECT_EQ(rest.mm_iterations, 30);
  EXPECT_EQ(rest.final_objective, full.final_objective);
  EXPECT_TRUE(resumed == reference) << "max difference " << (resumed - reference).cwiseAbs().maxCoeff();
  // The same state given as nu and e (as a caller of solve() would build it) resumes to the same
  // run up to rounding: the solver packs it at the saved rho.
  SolverState plain = saved[0];
  AdmmState unpacked;
  unpacked.u = plain.u;
  unpacked.packed_rho = plain.rho;
  unpacked.unpack();
  plain.u.resize(0);
  plain.nu = unpacked.nu;
  plain.e = unpacked.e;
  Matrix from_plain = plain.X;
  const Summary again = solve(model, *loss, {0.3, 0.0}, o, from_plain, {}, &plain);
  EXPECT_EQ(again.mm_iterations, 30);
  EXPECT_NEAR(again.final_objective, full.final_objective, 1e-9 * std::abs(full.final_objective));
  EXPECT_LE((from_plain - reference).norm(), 1e-7 * reference.norm());
}

// AdmmState::pack / unpack (admm/admm.h): u = nu + rho e <-> nu = clamp(u, -2, 2),
// e = (u - nu) / rho. Unpacked states are those the ADMM makes (|nu| <= 2, nu = 2 sign(e) where
// e != 0), the round trip is exact up to rounding, and the representation does not depend on rho
// (packing at another rho gives the same nu and e back).
TEST(PackedState, PackAndUnpackAreInverseOnAdmmStates) {
  const double rho = 1.7;
  Vector u = 3.0 * Vector::Random(2000);
  u.head(4) << 2.0, -2.0, 0.0, 2.0 + 1e-15;  // the edges of the clamp
  AdmmState st;
  st.u = u;
  st.packed_rho = rho;
  ASSERT_TRUE(st.packed());
  st.unpack();
  ASSERT_FALSE(st.packed());
  ASSERT_EQ(st.u.size(), 0);
  ASSERT_EQ(st.nu.size(), u.size());
  Index moved = 0;
  for (Index h = 0; h < u.size(); ++h) {
    ASSERT_LE(std::abs(st.nu[h]), 2.0);
    if (st.e[h] != 0.0) {
      ++moved;
      ASSERT_EQ(st.nu[h], st.e[h] > 0.0 ? 2.0 : -2.0) << h;
    }
    ASSERT_NEAR(st.nu[h] + rho * st.e[h], u[h], 1e-15 * (1.0 + std::abs(u[h]))) << h;
  }
  EXPECT_GT(moved, u.size() / 4);
  const Vector nu = st.nu, e = st.e;
  st.pack(rho);
  EXPECT_LE((st.u - u).cwiseAbs().maxCoeff(), 1e-15 * 4.0);
  st.pack(0.3);  // repacked at another rho: the same (nu, e)
  EXPECT_EQ(st.packed_rho, 0.3);
  st.unpack();
  EXPECT_TRUE(st.nu == nu);
  EXPECT_LE((st.e - e).cwiseAbs().maxCoeff(), 1e-14);
  // A pair the ADMM cannot make (|nu| < 2 with e != 0) is projected onto one it can.
  st.nu = Vector::Constant(1, 1.0);
  st.e = Vector::Constant(1, 1.0);
  st.pack(2.0);  // u = 1 + 2 * 1 = 3
  st.unpack();
  EXPECT_EQ(st.nu[0], 2.0);
  EXPECT_EQ(st.e[0], 0.5);  // (u - 2) / rho
}

}  // namespace
}  // namespace sdprl
