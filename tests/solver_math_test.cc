// The checks of docs/method.md section 6 on small random models: the surrogate majorises F and
// touches it at 0 (1), the ADMM keeps |nu| <= 2, its gap is a valid certificate and reaches 0, its
// minimiser is H's (2), MM never rises by more than eps_k (3), sparse and dense paths agree (5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "sdprl/constraint.h"
#include "sdprl/regularizers/low_rank_regularizer.h"
#include "sdprl/regularizers/scaled_identity_regularizer.h"
#include "sdprl/solver.h"
#include "admm/admm.h"
#include "mm/certificate.h"
#include "mm/surrogate.h"
#include "sdprl/error.h"
#include "sdprl/terms/all_entries_terms.h"
#include "sdprl/terms/composite_terms.h"
#include "sdprl/terms/rank_one_terms.h"
#include "sdprl/testing/checks.h"
#include "terms/dense_row_split.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

struct Case {
  const char* loss;
  const char* terms;  // "entry", "distance", "dense", "mvu" (distance + centering) or "rank-one"
  SplitMode split;
  bool with_a;
};

// Readable parameter names in test listings (CTest shows them).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.loss << "/" << c.terms << "/" << to_string(c.split) << (c.with_a ? "/A" : "");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = std::string(info.param.loss) + "_" + info.param.terms + "_" + to_string(info.param.split) +
                  (info.param.with_a ? "_A" : "");
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

Eigen::MatrixXd random_symmetric(Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Matrix R = random_matrix(n, n, 1.0, rng);
  return 0.5 * (R + R.transpose());
}

class SurrogateTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    loss_ = load_loss(c.loss);
    const Index n = 7;
    if (std::string(c.terms) == "entry") {
      model_.terms = entry_terms(random_entries(n, 30, 11));
    } else if (std::string(c.terms) == "distance") {
      model_.terms = distance_terms(random_pairs(n, 20, 12));
    } else if (std::string(c.terms) == "mvu") {  // CompositeTerms: built coupled in both modes
      model_.terms = std::make_shared<CompositeTerms>(std::vector<std::shared_ptr<const ConstraintSet>>{
          distance_terms(random_pairs(n, 20, 12)), std::make_shared<RankOneTerms>(RankOneTerms::centering(n))});
    } else if (std::string(c.terms) == "all-entries") {  // weights outside P (ExternalWeights)
      model_.terms = std::make_shared<AllEntriesTerms>(n, random_symmetric(n, 4));
    } else if (std::string(c.terms) == "rank-one") {
      std::mt19937_64 rng(6);
      std::vector<Vector> a;
      for (int k = 0; k < 4; ++k) a.push_back(random_matrix(n, 1, 1.0, rng).col(0));
      model_.terms = std::make_shared<RankOneTerms>(n, a, Vector::LinSpaced(4, -2.0, 5.0));
    } else {
      model_.terms = random_dense_terms(n, 6, 12);
    }
    if (c.with_a) {
      std::mt19937_64 rng(5);
      Matrix R = random_matrix(n, n, 1.0, rng);
      model_.quadratic = std::make_shared<DenseRegularizer>(Eigen::MatrixXd(R));
      weights_.gamma = 0.7;
    }
    weights_.lambda = 0.3;
  }
  std::shared_ptr<Loss> loss_;
  Model model_;
  RegularizationWeights weights_;
};

// Check 1: H(Xt) >= F(X_k + Xt) for random Xt at several scales, and H(0) = F(X_k).
TEST_P(SurrogateTest, MajorisesAndTouches) {
  const Index r = 2;
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 5; ++trial) {
    Matrix Xk = random_matrix(model_.terms->dimension(), r, 1.0, rng);
    Surrogate H(model_, *loss_, weights_, GetParam().split, r);
    H.update(Xk);
    const double f0 = objective(model_, *loss_, weights_, Xk);
    ASSERT_NEAR(H.center_objective(), f0, 1e-10 * std::abs(f0));
    ASSERT_NEAR(H.value(Matrix::Zero(Xk.rows(), r)), f0, 1e-9 * std::abs(f0));
    for (double scale : {1e-3, 1e-2, 0.1, 0.5, 1.0, 3.0}) {
      for (int s = 0; s < 100; ++s) {
        Matrix D = random_matrix(Xk.rows(), r, scale, rng);
        const double h = H.value(D);
        const double f = objective(model_, *loss_, weights_, Xk + D);
        ASSERT_GE(h, f - 1e-9 * std::abs(f)) << "scale " << scale;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3000);
}

// Check 1, targeted: steps on the two rows of one entry term, orthogonal to x_i and x_j, so that the
// linear part vanishes and only the curvature bound w |sym Q| holds H above F. An unweighted B (the
// paper's Prop. 5 as printed) fails here when phi'(0) > 1 (docs/method.md section 2).
TEST(SurrogateTargeted, CurvatureCarriesTheWeights) {
  EntryData d = random_entries(8, 40, 13);
  Model model;
  model.terms = entry_terms(d);
  auto loss = load_loss("leaky-mcp");
  const RegularizationWeights w{0.0, 0.0};
  const Index r = 3;
  std::mt19937_64 rng(17);
  int checked = 0;
  for (SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
    Matrix Xk = random_matrix(8, r, 0.3, rng);
    Surrogate H(model, *loss, w, split, r);
    H.update(Xk);
    for (Index k = 0; k < static_cast<Index>(d.rows.size()); ++k) {
      const int i = d.rows[k], j = d.cols[k];
      if (i == j) continue;
      // v orthogonal to x_i and x_j: the cross product in R^3, written out (Eigen's fixed-size
      // cross() trips a GCC 12 -Warray-bounds false positive in the AVX-512 headers).
      const auto xi = Xk.row(i), xj = Xk.row(j);
      Vector v(3);
      v << xi(1) * xj(2) - xi(2) * xj(1), xi(2) * xj(0) - xi(0) * xj(2), xi(0) * xj(1) - xi(1) * xj(0);
      v.normalize();
      for (double scale : {1e-3, 1e-2, 0.1}) {
        for (double sign : {1.0, -1.0}) {
          Matrix D = Matrix::Zero(8, r);
          D.row(i) = scale * v.transpose();
          D.row(j) = sign * scale * v.transpose();
          const double f = objective(model, *loss, w, Xk + D);
          EXPECT_GE(H.value(D), f - 1e-12 * std::abs(f)) << to_string(split) << " term " << k;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// Check 2: on a fixed surrogate, |nu| <= 2 always; the gap is >= 0 (weak duality) and reaches 0; the
// ADMM point minimises H (no random perturbation lowers H by more than the gap).
TEST_P(SurrogateTest, AdmmGapCertifiesTheMinimiser) {
  const Index r = 2;
  std::mt19937_64 rng(9);
  Matrix Xk = random_matrix(model_.terms->dimension(), r, 1.0, rng);
  Surrogate H(model_, *loss_, weights_, GetParam().split, r);
  H.update(Xk);
  AdmmOptions options;
  options.cg_tolerance = 1e-10;
  Admm admm(H, automatic_rho(*loss_, options), options);
  admm.prepare();
  AdmmState st;
  admm.reset_if_needed(st);
  // |nu_h| <= 2, or 2 w_h when the family keeps its weights outside P.
  const Vector* tw = term_weights(H.linearization());
  const Vector bound = tw ? Vector(2.0 * *tw) : Vector::Constant(H.split_terms(), 2.0);
  double first_gap = 0.0;
  for (int t = 0; t < 3000; ++t) {
    admm.iterate(st, 1e-12);
    ASSERT_LE((st.nu.cwiseAbs() - bound).maxCoeff(), 1e-12);
    ASSERT_GE(st.gap, -1e-9 * std::max(1.0, std::abs(st.primal)));
    if (t == 0) first_gap = st.gap;
    if (st.gap <= 1e-9 * std::max(1.0, std::abs(st.primal))) break;
  }
  EXPECT_LE(st.gap, 1e-8 * std::max(1.0, std::abs(st.primal)));
  EXPECT_LT(st.gap, first_gap);
  // Weak duality independently of the ADMM: D(nu) <= H(D') for any D' and any |nu| <= 2.
  for (int s = 0; s < 200; ++s) {
    Matrix D = random_matrix(Xk.rows(), r, 0.3, rng);
    EXPECT_LE(st.dual, H.value(D) + 1e-9 * std::abs(st.dual));
    EXPECT_GE(H.value(st.D + 1e-3 * D), st.primal - st.gap - 1e-9 * std::abs(st.primal));
  }
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Vector nu(st.nu.size());
  for (int s = 0; s < 50; ++s) {
    for (Index k = 0; k < nu.size(); ++k) nu[k] = u(rng) * bound[k];
    EXPECT_LE(H.dual(nu), st.primal + 1e-9 * std::abs(st.primal));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Checks, SurrogateTest,
    ::testing::Values(Case{"l1", "entry", SplitMode::kRowSplit, false}, Case{"l1", "entry", SplitMode::kCoupled, false},
                      Case{"leaky-mcp", "entry", SplitMode::kRowSplit, false},
                      Case{"leaky-mcp", "entry", SplitMode::kCoupled, false},
                      Case{"leaky-mcp", "entry", SplitMode::kRowSplit, true},
                      Case{"leaky-mcp", "entry", SplitMode::kCoupled, true},
                      Case{"l1", "distance", SplitMode::kRowSplit, false},
                      Case{"l1", "distance", SplitMode::kCoupled, false},
                      Case{"leaky-mcp", "distance", SplitMode::kRowSplit, true},
                      Case{"leaky-mcp", "distance", SplitMode::kCoupled, true},
                      Case{"l1", "dense", SplitMode::kCoupled, false},
                      Case{"leaky-mcp", "dense", SplitMode::kCoupled, true},
                      Case{"l1", "mvu", SplitMode::kRowSplit, false},
                      Case{"leaky-mcp", "mvu", SplitMode::kCoupled, true},
                      Case{"l1", "rank-one", SplitMode::kCoupled, false},
                      Case{"leaky-mcp", "rank-one", SplitMode::kRowSplit, true},
                      Case{"l1", "all-entries", SplitMode::kRowSplit, false},
                      Case{"leaky-mcp", "all-entries", SplitMode::kRowSplit, false},
                      Case{"leaky-mcp", "all-entries", SplitMode::kCoupled, true}),
    case_name);

// Check 2 (brute force): on a tiny surrogate (n = 2, r = 1) the ADMM minimiser matches a grid search.
TEST(AdmmBruteForce, MatchesGridMinimum) {
  EntryData d;
  d.n = 2;
  d.rows = {0, 0, 1, 1};
  d.cols = {0, 1, 0, 1};
  d.targets = Vector(4);
  d.targets << 2.0, -1.0, 0.5, 3.0;
  Model model;
  model.terms = entry_terms(d);
  auto loss = load_loss("leaky-mcp");
  RegularizationWeights w{0.2, 0.0};
  for (SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
    Surrogate H(model, *loss, w, split, 1);
    Matrix Xk(2, 1);
    Xk << 0.7, -0.4;
    H.update(Xk);
    AdmmOptions options;
    options.cg_tolerance = 1e-12;
    Admm admm(H, 2.0, options);
    admm.prepare();
    AdmmState st;
    admm.reset_if_needed(st);
    for (int t = 0; t < 20000; ++t) {
      admm.iterate(st, 1e-13);
      if (st.gap <= 1e-11) break;
    }
    ASSERT_LE(st.gap, 1e-9);
    // Grid search, then refine around the best grid point.
    double best = 1e300, bx = 0, by = 0;
    Matrix D(2, 1);
    for (double step : {0.01, 0.0005, 0.00002}) {
      const double cx = bx, cy = by, span = step * 200;
      for (double x = cx - span; x <= cx + span; x += step)
        for (double y = cy - span; y <= cy + span; y += step) {
          D << x, y;
          const double h = H.value(D);
          if (h < best) best = h, bx = x, by = y;
        }
    }
    EXPECT_NEAR(st.primal, best, 1e-6 * std::abs(best)) << to_string(split);
    EXPECT_NEAR(st.D(0, 0), bx, 1e-3) << to_string(split);
    EXPECT_NEAR(st.D(1, 0), by, 1e-3) << to_string(split);
  }
}

// The constrained ADMM (X >= 0, sdprl/constraint.h): on random instances the gap measured at the
// feasible Y is never negative, reaches 0, Y stays nonnegative and mu <= 0; on a tiny instance the
// result matches a grid search over the feasible set.
TEST(ConstrainedAdmm, GapIsValidAndIteratesStayFeasible) {
  auto loss = load_loss("leaky-mcp");
  for (unsigned seed = 1; seed <= 6; ++seed) {
    EntryData d = random_entries(9, 45, 100 + seed);
    d.targets = d.targets.cwiseAbs();
    Model model;
    model.terms = entry_terms(d);
    model.constraint = std::make_shared<Nonnegative>();
    for (SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
      std::mt19937_64 rng(seed);
      Matrix Xk = random_matrix(9, 3, 1.0, rng).cwiseAbs();
      Surrogate H(model, *loss, {0.3, 0.0}, split, 3);
      H.update(Xk);
      AdmmOptions options;
      options.cg_tolerance = 1e-10;
      Admm admm(H, automatic_rho(*loss, options), options);
      admm.prepare();
      AdmmState st;
      admm.reset_if_needed(st);
      for (int t = 0; t < 5000; ++t) {
        admm.iterate(st, 1e-12);
        ASSERT_GE((Xk + st.step).minCoeff(), 0.0);
        ASSERT_LE(st.mu.maxCoeff(), 0.0);
        ASSERT_GE(st.gap, -1e-9 * std::max(1.0, std::abs(st.primal))) << "seed " << seed << " t " << t;
        if (st.gap <= 1e-9 * std::max(1.0, std::abs(st.primal))) break;
      }
      EXPECT_LE(st.gap, 1e-8 * std::max(1.0, std::abs(st.primal))) << "seed " << seed;
      // No feasible perturbation improves on the ADMM point by more than the gap.
      for (int s = 0; s < 100; ++s) {
        Matrix Y = (Xk + st.step + 0.01 * random_matrix(9, 3, 1.0, rng)).cwiseMax(0.0);
        EXPECT_GE(H.value(Y - Xk), st.primal - st.gap - 1e-9 * std::abs(st.primal));
      }
    }
  }
}

TEST(ConstrainedAdmm, MatchesGridMinimumOverTheFeasibleSet) {
  EntryData d;
  d.n = 2;
  d.rows = {0, 0, 1, 1};
  d.cols = {0, 1, 0, 1};
  d.targets = Vector(4);
  d.targets << 0.5, 2.0, 2.0, 0.1;  // wants x_0 x_1 large but both small: the bound x >= 0 is active
  Model model;
  model.terms = entry_terms(d);
  model.constraint = std::make_shared<Nonnegative>();
  auto loss = load_loss("l1");
  Surrogate H(model, *loss, {0.2, 0.0}, SplitMode::kRowSplit, 1);
  Matrix Xk(2, 1);
  Xk << 0.3, -0.0;
  H.update(Xk);
  AdmmOptions options;
  Admm admm(H, 5.0, options);
  admm.prepare();
  AdmmState st;
  admm.reset_if_needed(st);
  for (int t = 0; t < 50000; ++t) {
    admm.iterate(st, 1e-13);
    if (st.gap <= 1e-10) break;
  }
  ASSERT_LE(st.gap, 1e-8);
  double best = 1e300, bx = 0, by = 0;
  Matrix D(2, 1);
  for (double step : {0.01, 0.0005, 0.00002}) {
    const double cx = bx, cy = by, span = step * 200;
    for (double x = cx - span; x <= cx + span; x += step)
      for (double y = cy - span; y <= cy + span; y += step) {
        if (Xk(0, 0) + x < 0 || Xk(1, 0) + y < 0) continue;
        D << x, y;
        const double h = H.value(D);
        if (h < best) best = h, bx = x, by = y;
      }
  }
  EXPECT_NEAR(st.primal, best, 1e-6 * std::abs(best));
  EXPECT_NEAR(st.step(0, 0), bx, 1e-3);
  EXPECT_NEAR(st.step(1, 0), by, 1e-3);
}

// A nonnegative low-rank target M = V V^T (V_ij ~ Exp(1), n x r) observed on about half of its
// entries, as in symmetric NMF.
struct NonnegativeInstance {
  Eigen::MatrixXd V;
  EntryData data;
};
NonnegativeInstance nonnegative_instance(Index n, Index r, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> ex(1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  NonnegativeInstance inst;
  inst.V.resize(n, r);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < r; ++j) inst.V(i, j) = ex(rng);
  EntryData& d = inst.data;
  d.n = n;
  std::vector<double> t;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (u(rng) < 0.5) d.rows.push_back(i), d.cols.push_back(j), t.push_back(inst.V.row(i).dot(inst.V.row(j)));
  d.targets = Eigen::Map<Vector>(t.data(), static_cast<Index>(t.size()));
  return inst;
}

// Symmetric NMF: every MM iterate is nonnegative (asserted through the iteration callback), the
// objective never rises beyond eps_k, and the l1 fit recovers a nonnegative low-rank matrix.
TEST(Nonnegativity, EveryIterateIsNonnegative) {
  const NonnegativeInstance inst = nonnegative_instance(40, 2, 8);
  const Eigen::MatrixXd& V = inst.V;
  const EntryData& d = inst.data;
  Model model;
  model.terms = entry_terms(d);
  model.constraint = std::make_shared<Nonnegative>();
  for (const char* name : {"l1", "leaky-mcp"}) {
    auto loss = load_loss(name);
    SolverOptions o;
    o.rank = 2;
    o.verbose = false;
    o.init = InitKind::kGaussian;  // a start with negative entries: projected before the first step
    int checked = 0;
    Matrix X;
    Summary s = solve(model, *loss, {0.01, 0.0}, o, X, [&](const TraceRow&, const Matrix& Xk) {
      EXPECT_GE(Xk.minCoeff(), 0.0);
      ++checked;
      return true;
    });
    EXPECT_EQ(checked, s.mm_iterations);
    EXPECT_GT(checked, 5);
    EXPECT_GE(X.minCoeff(), 0.0);
    EXPECT_EQ(s.monotonicity_violations, 0) << name;
    const Eigen::MatrixXd Z = X * X.transpose(), M = V * V.transpose();
    EXPECT_LT((Z - M).norm() / M.norm(), 0.05) << name;
  }
}

// The spectral start under X >= 0: Z = X X^T does not see an eigenvector's sign, but the projection
// onto K does, so each column must carry the sign whose projection keeps more of it. On
// nonnegative low-rank data the projected start then holds most of the start's mass; with the
// eigensolver's arbitrary signs a column can lose nearly all of it (SNMF m = 1000: 3 of 5 seeds
// ended at test RMSE 0.86-0.92 instead of 0.12).
// A row that only a diagonal term touches, left at exactly 0 by the spectral start, would never
// move (its gradient is a multiple of x_i). Here S = diag-block: the top two eigenvalues (8, 4)
// live on rows 1-3, so row 0's eigenvector entries are 0; its term (0, 0) with target 1 is then
// met only if the start gives row 0 something to grow from.
TEST(SpectralStart, ZeroRowsThatTermsUseStartFromNoise) {
  EntryData d;
  d.n = 4;
  d.rows = {1, 2, 1, 3, 0};
  d.cols = {1, 2, 2, 3, 0};
  d.targets = Vector(5);
  d.targets << 5.0, 5.0, 3.0, 4.0, 1.0;
  Model model;
  model.terms = entry_terms(d);
  SolverOptions o;
  o.verbose = false;
  o.rank = 2;
  Matrix X;
  initialize(model, o, 2, X);
  EXPECT_GT(X.row(0).squaredNorm(), 0.0);
  o.init = InitKind::kGiven;
  auto loss = load_loss("l1");
  const Summary s = solve(model, *loss, RegularizationWeights{1e-3, 0.0}, o, X);
  ASSERT_TRUE(s.usable());
  // Stuck at x_0 = 0 the (0, 0) term alone costs |0 - 1| = 1.
  EXPECT_LT(std::abs(X.row(0).squaredNorm() - 1.0), 0.05) << X;
  // And a given start with that row at 0 is refused, as is X = 0.
  Matrix Z = X;
  Z.row(0).setZero();
  EXPECT_THROW(initialize(model, o, 2, Z), Error);
  Matrix zero = Matrix::Zero(4, 2);
  try {
    initialize(model, o, 2, zero);
    ADD_FAILURE() << "X = 0 accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("column 1 of the starting factor is zero (the whole factor is zero)"), std::string::npos)
        << e.message();
  }
}

TEST(Nonnegativity, SpectralStartKeepsTheSignThatSurvivesTheProjection) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const Index n = 60, r = 3;
    const EntryData d = nonnegative_instance(n, r, seed).data;
    Model model;
    model.terms = entry_terms(d);
    model.constraint = std::make_shared<Nonnegative>();
    SolverOptions o;
    Matrix X;
    initialize(model, o, r, X);
    for (Index j = 0; j < r; ++j) {
      Matrix plus = X.col(j), minus = -X.col(j);
      model.constraint->project(plus);
      model.constraint->project(minus);
      EXPECT_GE(plus.squaredNorm(), minus.squaredNorm()) << "seed " << seed << " column " << j;
    }
    // The Perron vector of the nonnegative target is of one sign: all of it survives.
    Matrix first = X.col(0);
    model.constraint->project(first);
    EXPECT_GT(first.squaredNorm(), 0.99 * X.col(0).squaredNorm()) << "seed " << seed;
  }
}

// Check 3: F(X_{k+1}) <= F(X_k) + eps_k at every MM step, for both Xt-steps and both losses.
TEST(MajorisationMinimisation, NeverRisesBeyondTolerance) {
  EntryData d = random_entries(60, 900, 21);
  Model model;
  model.terms = entry_terms(d);
  for (const char* name : {"l1", "leaky-mcp"}) {
    auto loss = load_loss(name);
    for (SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
      SolverOptions o;
      o.rank = 3;
      o.verbose = false;
      o.max_mm_iterations = 300;
      o.admm.split = split;
      Matrix X;
      const RegularizationWeights w{0.5, 0.0};
      Summary s = solve(model, *loss, w, o, X);
      ASSERT_GE(s.trace.size(), 5u);
      double previous = s.initial_objective;
      for (const TraceRow& row : s.trace) {
        EXPECT_LE(row.objective, previous + row.tolerance) << name << " " << to_string(split) << " step " << row.mm_iteration;
        previous = row.objective;
      }
      EXPECT_EQ(s.monotonicity_violations, 0);
      EXPECT_LT(s.final_objective, s.initial_objective);
      EXPECT_NEAR(s.final_objective, objective(model, *loss, w, X), 1e-9 * s.final_objective);
    }
  }
}

// Check 5: the sparse path (entry terms, coupled Xt-step) and the dense path (the same entries as
// dense Q) give the same iterates.
TEST(SparseVersusDense, SameIterates) {
  EntryData d = random_entries(12, 60, 31);
  Model sparse, dense;
  sparse.terms = entry_terms(d);
  dense.terms = dense_terms(d);
  expect_same_iterates(sparse, dense, "leaky-mcp", 15, 3);
}

// Check 5 for the distance family: coupled distance terms and the same Q as dense terms agree.
TEST(SparseVersusDense, DistanceTermsSameIterates) {
  EntryData d = random_pairs(10, 40, 32);
  Model sparse, dense;
  sparse.terms = distance_terms(d);
  dense.terms = std::make_shared<DenseTerms>(d.n, distance_matrices(d), d.targets);
  expect_same_iterates(sparse, dense, "l1", 10, 6);
}

// Check 5 for the MVU mixture (sdprl/terms/composite_terms.h): distance terms plus the rank-one
// centering term with A = -I, against the same Q as dense terms and A as a dense matrix.
TEST(SparseVersusDense, MvuCompositeSameIterates) {
  EntryData d = random_pairs(10, 30, 33);
  Model sparse, dense;
  sparse.terms = std::make_shared<CompositeTerms>(std::vector<std::shared_ptr<const ConstraintSet>>{
      distance_terms(d), std::make_shared<RankOneTerms>(RankOneTerms::centering(d.n))});
  sparse.quadratic = std::make_shared<ScaledIdentityRegularizer>(d.n, -1.0);
  std::vector<Eigen::MatrixXd> Q = distance_matrices(d);
  Q.push_back(Eigen::MatrixXd::Ones(d.n, d.n));
  Vector t(d.targets.size() + 1);
  t << d.targets, 0.0;
  dense.terms = std::make_shared<DenseTerms>(d.n, Q, t);
  dense.quadratic = std::make_shared<DenseRegularizer>(-Eigen::MatrixXd::Identity(d.n, d.n));
  expect_same_iterates(sparse, dense, "l1", 10, 7, SplitMode::kCoupled, {0.4, 0.05});
}

// Check 5 for general rank-one terms with a low-rank PSD A (exact A_+: no diagonal majorant in the
// coupled mode) against dense terms and a dense A.
TEST(SparseVersusDense, RankOneLowRankSameIterates) {
  std::mt19937_64 rng(34);
  const Index n = 8;
  const Matrix U = random_matrix(n, 2, 1.0, rng), V = random_matrix(n, 2, 1.0, rng);
  std::vector<Vector> a;
  std::vector<Eigen::MatrixXd> Q;
  Vector t(4);
  for (Index k = 0; k < 4; ++k) {
    a.push_back(random_matrix(n, 1, 1.0, rng).col(0));
    Q.push_back(a.back() * a.back().transpose());
    t[k] = (a.back().transpose() * V).squaredNorm() + (k == 1 ? 6.0 : 0.0);
  }
  Model sparse, dense;
  sparse.terms = std::make_shared<RankOneTerms>(n, a, t);
  sparse.quadratic = std::make_shared<LowRankRegularizer>(Eigen::MatrixXd(U), 1.0);
  dense.terms = std::make_shared<DenseTerms>(n, Q, t);
  dense.quadratic = std::make_shared<DenseRegularizer>(Eigen::MatrixXd(U) * Eigen::MatrixXd(U).transpose());
  expect_same_iterates(sparse, dense, "leaky-mcp", 10, 8, SplitMode::kCoupled, {0.4, 0.3});
}

// The scale of the ADMM tolerance schedule (c0 = the size of F's parts, mm/surrogate.h): F
// itself when A is PSD, never below |F|, and not cancelling to 0 when A is indefinite.
TEST(Surrogate, ObjectiveMagnitudeIsTheSizeOfFsParts) {
  EntryData d = random_entries(12, 60, 35);
  auto loss = load_loss("leaky-mcp");
  std::mt19937_64 rng(35);
  const Matrix U = random_matrix(12, 2, 1.0, rng);
  for (double sign : {1.0, -1.0}) {
    Model model;
    model.terms = entry_terms(d);
    model.quadratic = std::make_shared<LowRankRegularizer>(Eigen::MatrixXd(U), sign);
    const RegularizationWeights w{0.3, 0.7};
    Surrogate H(model, *loss, w, SplitMode::kRowSplit, 3);
    for (int trial = 0; trial < 5; ++trial) {
      const Matrix X = random_matrix(12, 3, 1.0 + trial, rng);
      H.update(X);
      Vector values, phi, dphi;
      model.terms->evaluate(X, values);
      loss->evaluate((values - model.terms->targets()).cwiseAbs(), phi, dphi);
      const double quadratic = 0.5 * w.gamma * sign * (U.transpose() * X).squaredNorm();
      const double ridge = 0.5 * w.lambda * X.squaredNorm();
      EXPECT_NEAR(H.center_objective(), phi.sum() + quadratic + ridge, 1e-10 * H.objective_magnitude());
      EXPECT_NEAR(H.objective_magnitude(), phi.sum() + std::abs(quadratic) + ridge, 1e-10 * H.objective_magnitude());
      EXPECT_GE(H.objective_magnitude(), std::abs(H.center_objective()));
      if (sign > 0) {
        EXPECT_NEAR(H.objective_magnitude(), H.center_objective(), 1e-12 * H.objective_magnitude());
      }
    }
  }
}

// The entry family's maps against the dense reference: evaluate, the adjoint identity
// <P(D), y> = <D, P*(y)>, the curvature and the Gram blocks, for both split modes.
TEST(EntryTerms, MapsMatchDenseReference) {
  EntryData d = random_entries(9, 40, 41);
  auto sparse = entry_terms(d);
  auto dense = dense_terms(d);
  std::mt19937_64 rng(4);
  Matrix X = random_matrix(9, 3, 1.0, rng), D = random_matrix(9, 3, 1.0, rng);
  Vector vs, vd;
  sparse->evaluate(X, vs);
  dense->evaluate(X, vd);
  EXPECT_LE((vs - vd).norm(), 1e-12 * vd.norm());
  Vector y = Vector::Random(d.targets.size());
  Matrix as, ad;
  sparse->apply_adjoint_sym(y, X, as);
  dense->apply_adjoint_sym(y, X, ad);
  EXPECT_LE((as - ad).norm(), 1e-12 * ad.norm());

  Vector w = Vector::Random(d.targets.size()).cwiseAbs().array() + 0.1;
  Vector r = vs - d.targets;
  for (SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
    auto ls = sparse->make_linearization(split);
    ls->update(X, w, r);
    Vector pd;
    ls->apply(D, pd);
    Vector yy = Vector::Random(ls->size());
    Matrix adj;
    ls->apply_adjoint(yy, adj);
    EXPECT_NEAR(pd.dot(yy), adj.cwiseProduct(D).sum(), 1e-10 * std::abs(pd.dot(yy)) + 1e-12);
    // Both split modes have C = sum w |sym Q| and sum_h 2|b_h| = sum w |r|.
    auto ld = dense->make_linearization(split);
    ld->update(X, w, r);
    Matrix cs, cd;
    ls->apply_curvature(D, cs);
    ld->apply_curvature(D, cd);
    EXPECT_LE((cs - cd).norm(), 1e-12 * cd.norm());
    EXPECT_NEAR(2.0 * ls->offsets().cwiseAbs().sum(), w.dot(r.cwiseAbs()), 1e-10 * w.dot(r.cwiseAbs()));
    if (split == SplitMode::kCoupled) {
      Vector pdd;
      ld->apply(D, pdd);
      EXPECT_LE((pd - pdd).norm(), 1e-12 * pdd.norm());
      Matrix gs, gd;
      ls->gram_row_blocks(gs);
      ld->gram_row_blocks(gd);
      EXPECT_LE((gs - gd).norm(), 1e-12 * gd.norm());
    }
  }
}


// ---------------------------------------------------------------------------------------------
// All entry terms (sparse PCA's family), held implicitly, against the same n^2 terms listed one by
// one as entry terms (and as dense Q for the generic checks).

EntryData all_pairs(Index n, const Eigen::MatrixXd& T) {
  EntryData d;
  d.n = n;
  d.targets.resize(n * n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      d.rows.push_back(static_cast<std::int32_t>(i));
      d.cols.push_back(static_cast<std::int32_t>(j));
      d.targets[i * n + j] = T(i, j);
    }
  return d;
}

// Sparse PCA's terms (T = 0): the one-pass rebuild reads no targets and leaves b, the weights, C
// and P as update() does (check_constraint_set compares them).
TEST(AllEntriesTerms, ZeroTargetsMapsMatchTheListedTerms) {
  const Index n = 7;
  const AllEntriesTerms implicit(n);
  EXPECT_EQ(sdprl::testing::check_constraint_set(implicit, entry_matrices(all_pairs(n, Eigen::MatrixXd::Zero(n, n)))), "");
}

// Z = X X^T is formed in 64 x 64 tiles on every thread, each off-diagonal tile mirrored: with n
// = 150 (three tiles, the last partial) every entry must be the product's, and both triangles the
// same bits (the row-split merge of (i, j) and (j, i) relies on it), for one thread and for two.
TEST(AllEntriesTerms, EvaluateIsTheExactlySymmetricProductAcrossTiles) {
  const Index n = 150, r = 7;
  std::mt19937_64 rng(11);
  const Matrix X = random_matrix(n, r, 1.0, rng);
  const AllEntriesTerms terms(n);
  const Matrix Z = X * X.transpose();
  Vector first;
  for (int threads : {1, 2}) {
    set_threads(threads);
    Vector values;
    terms.evaluate(X, values);
    ASSERT_EQ(values.size(), n * n);
    const Eigen::Map<const Matrix> V(values.data(), n, n);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) {
        ASSERT_EQ(V(i, j), V(j, i)) << i << " " << j;
        ASSERT_NEAR(V(i, j), Z(i, j), 1e-12 * (1.0 + std::abs(Z(i, j)))) << i << " " << j << " threads " << threads;
      }
    if (threads == 1) first = values;
    else EXPECT_TRUE(values == first) << "the thread count changed the bits";
  }
  set_threads(1);
}

// The row-split linearisation keeps b and W in one n^2 array (terms/dense_row_split.h): every
// row tile the dense pass reads, and offsets() and term_weights() formed from it, must be
// b = (X X^T - T) / 2 and W = phi'(|X X^T - T|) whole, with the curvature W's row sums, after
// the one-pass rebuild and after update(), at n = 150 (rebuild tiles of 64 and blocks of 32, the
// last partial; row tiles of 32 and of 7).
TEST(AllEntriesTerms, PackedRowTilesAreTheWholeOffsetsAndWeights) {
  const Index n = 150, r = 5;
  std::mt19937_64 rng(12);
  const Matrix X = random_matrix(n, r, 1.0, rng);
  const Eigen::MatrixXd T = random_symmetric(n, 13);
  const AllEntriesTerms terms(n, T);
  auto loss = load_loss("leaky-mcp");
  const Matrix R = X * X.transpose() - Matrix(T);
  Matrix W(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) W(i, j) = loss->derivative(std::abs(R(i, j)));
  const auto expect_whole = [&](const TermLinearization& lin, const char* how) {
    SCOPED_TRACE(how);
    const auto* layout = dynamic_cast<const DenseRowSplit*>(&lin);
    ASSERT_NE(layout, nullptr);
    for (const Index rows : {Index{32}, Index{7}})
      for (Index i0 = 0; i0 < n; i0 += rows) {
        const Index m = std::min(rows, n - i0);
        Matrix b(m, n), w(m, n);
        layout->row_tile(i0, m, b.data(), w.data());
        ASSERT_LE((b - 0.5 * R.middleRows(i0, m)).cwiseAbs().maxCoeff(), 1e-12) << "rows from " << i0;
        ASSERT_LE((w - W.middleRows(i0, m)).cwiseAbs().maxCoeff(), 1e-12) << "rows from " << i0;
      }
    const Eigen::Map<const Matrix> B(lin.offsets().data(), n, n), Wl(lin.external_weights()->term_weights().data(), n, n);
    EXPECT_LE((B - 0.5 * R).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((Wl - W).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_TRUE(Matrix(B) == Matrix(B.transpose()) && Matrix(Wl) == Matrix(Wl.transpose())) << "exactly symmetric";
    // The curvature C_ii: the row sums of W (the rebuild adds them tile by tile on the way).
    Vector c;
    lin.curvature_diagonal(c);
    EXPECT_LE((c - W.rowwise().sum()).cwiseAbs().maxCoeff(), 1e-12 * n);
  };
  auto one_pass = terms.make_linearization(SplitMode::kRowSplit);
  double phi = 0.0, weighted = 0.0;
  ASSERT_NE(one_pass->one_pass(), nullptr);
  one_pass->one_pass()->update_with_loss(X, *loss, &phi, &weighted, nullptr);
  expect_whole(*one_pass, "one-pass rebuild");
  // loss_sum() (the over-relaxation's trials): sum phi(|R_ij|) over all n^2 entries, the rebuild's
  // sum to the bit (so that a trial and the rebuild at the same X agree), and with targets zero.
  double direct = 0.0;
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) direct += loss->value(std::abs(R(i, j)));
  EXPECT_EQ(terms.loss_sum(X, *loss), phi);
  EXPECT_NEAR(phi, direct, 1e-12 * direct);
  const Matrix Z = X * X.transpose();
  double zero_direct = 0.0;
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) zero_direct += loss->value(std::abs(Z(i, j)));
  EXPECT_NEAR(AllEntriesTerms(n).loss_sum(X, *loss), zero_direct, 1e-12 * zero_direct);
  auto plain = terms.make_linearization(SplitMode::kRowSplit);
  Vector w(n * n), res(n * n);
  Eigen::Map<Matrix>(w.data(), n, n) = W;
  Eigen::Map<Matrix>(res.data(), n, n) = R;
  plain->update(X, w, res);
  expect_whole(*plain, "update()");
}

TEST(AllEntriesTerms, MapsMatchTheListedTerms) {
  const Index n = 6;
  const Eigen::MatrixXd T = random_symmetric(n, 3);
  const AllEntriesTerms implicit(n, T);
  const EntryData d = all_pairs(n, T);
  EXPECT_EQ(sdprl::testing::check_constraint_set(implicit, entry_matrices(d)), "");
  auto listed = entry_terms(d);
  std::mt19937_64 rng(5);
  const Matrix X = random_matrix(n, 3, 1.0, rng), D = random_matrix(n, 3, 1.0, rng);
  Vector vi, vl;
  implicit.evaluate(X, vi);
  listed->evaluate(X, vl);
  EXPECT_LE((vi - vl).norm(), 1e-13 * vl.norm());
  EXPECT_EQ((implicit.targets() - listed->targets()).norm(), 0.0);
  // The coupled linearisation is term for term that of the listed entries, with the weights kept
  // outside P: listed P(D) = w o P(D), listed b = w o b, listed P*(y) = P*(w o y).
  Vector w = Vector::Random(n * n).cwiseAbs(), r;
  listed->evaluate(X, r);
  r -= listed->targets();
  Eigen::Map<Matrix>(w.data(), n, n) = 0.5 * (Eigen::Map<Matrix>(w.data(), n, n) +
                                              Eigen::Map<Matrix>(w.data(), n, n).transpose().eval());
  auto li = implicit.make_linearization(SplitMode::kCoupled), ll = listed->make_linearization(SplitMode::kCoupled);
  li->update(X, w, r);
  ll->update(X, w, r);
  Vector pi, pl;
  li->apply(D, pi);
  ll->apply(D, pl);
  ASSERT_NE(term_weights(*li), nullptr);
  EXPECT_EQ((*term_weights(*li) - w).norm(), 0.0);
  EXPECT_LE((pi.cwiseProduct(w) - pl).norm(), 1e-12 * pl.norm());
  EXPECT_LE((li->offsets().cwiseProduct(w) - ll->offsets()).norm(), 1e-14 * ll->offsets().norm());
  const Vector y = Vector::Random(n * n);
  Matrix ai, al;
  li->apply_adjoint(y.cwiseProduct(w), ai);
  ll->apply_adjoint(y, al);
  EXPECT_LE((ai - al).norm(), 1e-12 * al.norm());
  Vector ci, cl;
  li->curvature_diagonal(ci);
  ll->curvature_diagonal(cl);
  EXPECT_LE((ci - cl).norm(), 1e-13 * cl.norm());
}

// The row-split linearisation merges the two identical half-terms that (i, j) and (j, i) put on
// row i (sdprl/terms/all_entries_terms.h): its surrogate must equal the listed terms' row-split
// surrogate everywhere, majorise F and touch it at 0 (check 1).
TEST(AllEntriesTerms, RowSplitSurrogateIsTheListedOneAndMajorises) {
  const Index n = 7, r = 2;
  const Eigen::MatrixXd T = random_symmetric(n, 8);
  Model implicit, listed;
  implicit.terms = std::make_shared<AllEntriesTerms>(n, T);
  listed.terms = entry_terms(all_pairs(n, T));
  auto loss = load_loss("leaky-mcp");
  const RegularizationWeights w{0.2, 0.0};
  std::mt19937_64 rng(9);
  int checked = 0;
  for (int trial = 0; trial < 3; ++trial) {
    const Matrix Xk = random_matrix(n, r, 1.0, rng);
    Surrogate Hi(implicit, *loss, w, SplitMode::kRowSplit, r), Hl(listed, *loss, w, SplitMode::kRowSplit, r);
    Hi.update(Xk);
    Hl.update(Xk);
    const double f0 = objective(implicit, *loss, w, Xk);
    ASSERT_NEAR(Hi.value(Matrix::Zero(n, r)), f0, 1e-10 * std::abs(f0));
    for (double scale : {1e-2, 0.1, 1.0}) {
      for (int s = 0; s < 50; ++s) {
        const Matrix D = random_matrix(n, r, scale, rng);
        const double hi = Hi.value(D), hl = Hl.value(D);
        ASSERT_NEAR(hi, hl, 1e-10 * std::abs(hl));
        const double f = objective(implicit, *loss, w, Xk + D);
        ASSERT_GE(hi, f - 1e-9 * std::abs(f));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 450);
}

// The ADMM with the weights outside P (threshold 2 w / rho, one shared Gram block, P*(nu) carried
// across iterations) and the listed terms' ADMM (weights in P, n factored row blocks) minimise the
// same H, which is strictly convex here (lambda > 0): both certify gap -> 0 and reach the same
// minimiser. Along the way the carried P*(nu) must stay the adjoint recomputed from scratch.
TEST(AllEntriesTerms, WeightsOutsidePReachTheSameMinimiser) {
  const Index n = 7, r = 2;
  const Eigen::MatrixXd T = random_symmetric(n, 8);
  Model implicit, listed;
  implicit.terms = std::make_shared<AllEntriesTerms>(n, T);
  listed.terms = entry_terms(all_pairs(n, T));
  auto loss = load_loss("leaky-mcp");
  const RegularizationWeights w{0.2, 0.0};
  std::mt19937_64 rng(19);
  const Matrix Xk = random_matrix(n, r, 1.0, rng);
  Surrogate Hi(implicit, *loss, w, SplitMode::kRowSplit, r), Hl(listed, *loss, w, SplitMode::kRowSplit, r);
  Hi.update(Xk);
  Hl.update(Xk);
  ASSERT_NE(term_weights(Hi.linearization()), nullptr);
  ASSERT_EQ(term_weights(Hl.linearization()), nullptr);
  AdmmOptions options;
  const xt_step::Paths generic{false, false};  // the listed terms' generic path: weights in P, per-row LLT blocks
  auto solve = [&](const Surrogate& H, AdmmState& st) {
    Admm admm(H, automatic_rho(*loss, options), options, generic);
    admm.prepare();
    EXPECT_TRUE(admm.direct());
    admm.reset_if_needed(st);
    Matrix fresh;
    double worst = 0.0;
    for (int t = 0; t < 20000; ++t) {
      admm.iterate(st, 1e-13);
      if (t % 25 == 0) {
        H.linearization().apply_adjoint(st.nu, fresh);
        worst = std::max(worst, (fresh - st.Pnu).norm() / (1.0 + fresh.norm()));
      }
      if (st.gap <= 1e-12 * std::abs(st.primal)) break;
    }
    EXPECT_LE(worst, 1e-10) << "carried P*(nu) drifted from the adjoint";
    EXPECT_LE(st.gap, 1e-10 * std::abs(st.primal));
  };
  AdmmState si, sl;
  solve(Hi, si);
  solve(Hl, sl);
  EXPECT_NEAR(Hi.value(si.D), Hl.value(sl.D), 1e-9 * std::abs(Hl.value(sl.D)));
  EXPECT_LE((si.D - sl.D).norm(), 1e-4 * (1.0 + sl.D.norm()));
  EXPECT_GT(sl.D.norm(), 1e-3);  // a nontrivial step, not two zeros
}

// Check 5 for the implicit family: the same MM iterates as the listed entries (coupled Xt-step).
TEST(AllEntriesTerms, SameIteratesAsTheListedTerms) {
  const Index n = 8;
  const Eigen::MatrixXd T = random_symmetric(n, 12);
  Model implicit, listed;
  implicit.terms = std::make_shared<AllEntriesTerms>(n, T);
  listed.terms = entry_terms(all_pairs(n, T));
  expect_same_iterates(implicit, listed, "l1", 10, 4);
}

// Row-split Gram blocks: with the weights outside P every block is sum_j x_j x_j^T = X^T X, for
// varying and for equal weights, and GramSummary::shared_gram_block() returns that one block.
TEST(AllEntriesTerms, RowSplitGramBlocksAreTheDefinition) {
  const Index n = 6, r = 3;
  const AllEntriesTerms terms(n);
  std::mt19937_64 rng(3);
  const Matrix X = random_matrix(n, r, 1.0, rng);
  Eigen::MatrixXd Wv = Eigen::MatrixXd::Random(n, n).cwiseAbs();
  Wv = 0.5 * (Wv + Wv.transpose()).eval();
  for (const Eigen::MatrixXd& W : {Wv, Eigen::MatrixXd(Eigen::MatrixXd::Constant(n, n, 0.7))}) {
    Vector w(n * n), res = Vector::Zero(n * n);
    Eigen::Map<Matrix>(w.data(), n, n) = W;
    auto lin = terms.make_linearization(SplitMode::kRowSplit);
    lin->update(X, w, res);
    Matrix blocks, shared;
    lin->gram_row_blocks(blocks);
    ASSERT_TRUE(shared_gram_block(*lin, shared));
    for (Index i = 0; i < n; ++i) {
      // P*P e_(i,c) through apply and apply_adjoint, against the block.
      Eigen::MatrixXd ref = Eigen::MatrixXd::Zero(r, r);
      for (Index j = 0; j < n; ++j) ref += X.row(j).transpose() * X.row(j);
      EXPECT_LE((Eigen::MatrixXd(blocks.middleRows(i * r, r)) - ref).norm(), 1e-12 * ref.norm()) << "row " << i;
      EXPECT_LE((shared - ref).norm(), 1e-12 * ref.norm());
    }
  }
}

TEST(AllEntriesTerms, RejectsAnAsymmetricOrNonFiniteTarget) {
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(3, 3);
  T(0, 1) = 1.0;
  EXPECT_THROW(AllEntriesTerms(3, T), Error);
  T(1, 0) = 1.0;
  EXPECT_NO_THROW(AllEntriesTerms(3, T));
  T(2, 2) = std::nan("");
  EXPECT_THROW(AllEntriesTerms(3, T), Error);
  EXPECT_THROW(AllEntriesTerms(0), Error);
}

// The trace ball ||X||_F <= R: projection and support function by their definitions, then the
// constrained ADMM keeps a valid gap and feasible iterates (sdprl/constraint.h), and MM keeps every
// iterate in the ball, on sparse PCA's form (targets 0, A = -Sigma negative semidefinite).
TEST(FrobeniusBall, ProjectionAndSupport) {
  const FrobeniusBall ball(2.0);
  std::mt19937_64 rng(2);
  for (int s = 0; s < 20; ++s) {
    Matrix Y = random_matrix(5, 3, 2.0, rng), P = Y;
    ball.project(P);
    EXPECT_LE(P.norm(), 2.0 + 1e-12);
    if (Y.norm() <= 2.0) {
      EXPECT_EQ((P - Y).norm(), 0.0);
    }
    // Projection property: <Y - P, Q - P> <= 0 for every Q in the ball.
    for (int t = 0; t < 20; ++t) {
      Matrix Q = random_matrix(5, 3, 1.0, rng);
      ball.project(Q);
      EXPECT_LE((Y - P).cwiseProduct(Q - P).sum(), 1e-10);
    }
    // sigma(mu) = sup <mu, Y> over the ball, attained at 2 mu / ||mu||.
    const Matrix mu = random_matrix(5, 3, 1.0, rng);
    EXPECT_NEAR(ball.support(mu), mu.cwiseProduct(2.0 * mu / mu.norm()).sum(), 1e-12);
    Matrix Q = random_matrix(5, 3, 3.0, rng);
    ball.project(Q);
    EXPECT_GE(ball.support(mu), mu.cwiseProduct(Q).sum() - 1e-12);
  }
  EXPECT_THROW(FrobeniusBall(0.0), Error);
}

Model sparse_pca_model(Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Samples with a planted sparse direction on the first 3 coordinates.
  Matrix S = 0.3 * random_matrix(12, n, 1.0, rng);
  for (Index s = 0; s < S.rows(); ++s) {
    const double a = random_matrix(1, 1, 1.0, rng)(0, 0);
    for (Index i = 0; i < 3; ++i) S(s, i) += 2.0 * a;
  }
  Eigen::MatrixXd Sigma = S.transpose() * S / static_cast<double>(S.rows());
  Model model;
  model.terms = std::make_shared<AllEntriesTerms>(n);
  model.quadratic = std::make_shared<DenseRegularizer>(Eigen::MatrixXd(-Sigma));
  model.constraint = std::make_shared<FrobeniusBall>(1.0);
  return model;
}

TEST(FrobeniusBall, ConstrainedAdmmGapIsValidAndFeasible) {
  auto loss = load_loss("l1");
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const Model model = sparse_pca_model(8, seed);
    for (SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
      std::mt19937_64 rng(seed);
      Matrix Xk = random_matrix(8, 2, 1.0, rng);
      Xk /= Xk.norm();
      Surrogate H(model, *loss, {0.0, 10.0}, split, 2);
      H.update(Xk);
      AdmmOptions options;
      options.cg_tolerance = 1e-10;
      Admm admm(H, 50.0, options);
      admm.prepare();
      AdmmState st;
      admm.reset_if_needed(st);
      for (int t = 0; t < 20000; ++t) {
        admm.iterate(st, 1e-12);
        ASSERT_LE((Xk + st.step).norm(), 1.0 + 1e-12);
        ASSERT_GE(st.gap, -1e-9 * std::max(1.0, std::abs(st.primal))) << "seed " << seed << " t " << t;
        if (st.gap <= 1e-9 * std::max(1.0, std::abs(st.primal))) break;
      }
      EXPECT_LE(st.gap, 1e-7 * std::max(1.0, std::abs(st.primal))) << "seed " << seed << " " << to_string(split);
      for (int s = 0; s < 100; ++s) {
        Matrix Y = Xk + st.step + 0.01 * random_matrix(8, 2, 1.0, rng);
        if (Y.norm() > 1.0) Y /= Y.norm();
        EXPECT_GE(H.value(Y - Xk), st.primal - st.gap - 1e-9 * std::abs(st.primal));
      }
    }
  }
}

TEST(FrobeniusBall, EveryMmIterateStaysInTheBallAndFindsThePlantedDirection) {
  const Model model = sparse_pca_model(10, 21);
  for (const char* name : {"l1", "leaky-mcp"}) {
    auto loss = load_loss(name);
    SolverOptions o;
    o.rank = 2;
    o.verbose = false;
    o.init = InitKind::kGaussian;  // outside the ball: projected before the first step
    int checked = 0;
    Matrix X;
    Summary s = solve(model, *loss, {0.0, 10.0}, o, X, [&](const TraceRow&, const Matrix& Xk) {
      EXPECT_LE(Xk.norm(), 1.0 + 1e-12);
      ++checked;
      return true;
    });
    EXPECT_EQ(checked, s.mm_iterations);
    EXPECT_EQ(s.monotonicity_violations, 0) << name;
    EXPECT_LT(s.final_objective, 0.0) << name;
    // Z concentrates on the planted 3 x 3 block, on the boundary tr Z = 1.
    const Eigen::MatrixXd Z = X * X.transpose();
    EXPECT_NEAR(Z.trace(), 1.0, 1e-6) << name;
    EXPECT_GT(Z.topLeftCorner(3, 3).cwiseAbs().sum() / Z.cwiseAbs().sum(), 0.9) << name;
  }
}

}  // namespace
}  // namespace sdprl

namespace sdprl {
namespace {

// The spectral start's scale (docs/method.md section 2) is the l1 fit alpha = argmin sum |alpha v - t|,
// the weighted median of t / v with weights |v| (found by quickselect). After the start is scaled
// by sqrt(alpha) the fit of the scaled start is 1: checked here against a plain sorted scan, with
// outliers in the targets so that the median and the mean differ.
TEST(SpectralStart, ScaleIsTheL1FitOfTheTargets) {
  using namespace testing_support;
  EntryData d = random_entries(400, 6000, 131);
  std::mt19937_64 rng(132);
  const Matrix V = random_matrix(400, 3, 1.0, rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t k = 0; k < d.rows.size(); ++k) {
    const Index k_ = static_cast<Index>(k);
    d.targets[k_] = 3.0 * V.row(d.rows[k]).dot(V.row(d.cols[k])) + (u(rng) < 0.1 ? 50.0 : 0.0);
  }
  Model model;
  model.terms = entry_terms(d);
  SolverOptions o;
  o.init = InitKind::kSpectral;
  Matrix X;
  initialize(model, o, 3, X);
  Vector v;
  model.terms->evaluate(X, v);
  std::vector<std::pair<double, double>> ratio;
  double total = 0.0;
  for (Index k = 0; k < v.size(); ++k) {
    ratio.emplace_back(d.targets[k] / v[k], std::abs(v[k]));
    total += std::abs(v[k]);
  }
  std::sort(ratio.begin(), ratio.end());
  double acc = 0.0, median = 0.0;
  for (const auto& [q, w] : ratio) {
    acc += w;
    if (acc >= 0.5 * total) {
      median = q;
      break;
    }
  }
  EXPECT_NEAR(median, 1.0, 1e-9);
  // And the fit is a minimum of the l1 misfit: alpha = 1 beats 1 +- 1%.
  auto misfit = [&](double a) { return (a * v - d.targets).cwiseAbs().sum(); };
  EXPECT_LT(misfit(1.0), misfit(0.99));
  EXPECT_LT(misfit(1.0), misfit(1.01));
}

}  // namespace
// The rank staircase's step (mm/certificate.h, best_column_step): the exact minimiser of the
// convex piecewise-linear g(s) = sum w |r + s q| + s c over s >= 0, checked against its values at
// every breakpoint and on a fine grid, on random data with some zero residuals.
TEST(RankStaircase, ColumnStepMinimisesThePiecewiseLinearSurrogate) {
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.1, 1.0);
  int falling = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Index m = 40;
    Vector r(m), q(m), w(m);
    for (Index h = 0; h < m; ++h) {
      r[h] = h % 5 == 0 ? 0.0 : normal(gen);  // some zero residuals, as at an l1 optimum
      q[h] = normal(gen);
      w[h] = unit(gen);
    }
    const double c = 0.3 * normal(gen);
    auto g = [&](double s) { return w.cwiseProduct((r + s * q).cwiseAbs()).sum() + s * c; };
    double fall = -1.0;
    const double s = mm::best_column_step(r, w, q, c, &fall);
    ASSERT_GE(s, 0.0);
    // g is minimal over s >= 0 at one of 0 and the breakpoints (or falls without bound: s = 0).
    double best = g(0.0), best_at = 0.0, largest = 0.0;
    for (Index h = 0; h < m; ++h) {
      const double b = q[h] != 0.0 ? -r[h] / q[h] : -1.0;
      if (b > 0.0) {
        largest = std::max(largest, b);
        if (g(b) < best) best = g(b), best_at = b;
      }
    }
    const bool unbounded = g(2.0 * largest + 1.0) < g(largest) - 1e-12;
    if (unbounded) {
      EXPECT_EQ(s, 0.0);
      EXPECT_EQ(fall, 0.0);
      continue;
    }
    EXPECT_NEAR(g(s), best, 1e-12 * std::max(1.0, std::abs(best))) << "trial " << trial << " s " << s << " best at " << best_at;
    EXPECT_NEAR(fall, g(0.0) - g(s), 1e-10 * std::max(1.0, g(0.0)));
    for (int i = 0; i <= 200; ++i) EXPECT_GE(g(i * 2.0 * largest / 200.0), g(s) - 1e-12);
    if (s > 0.0) ++falling;
  }
  EXPECT_GT(falling, 5);  // the data exercise the walk, not only s = 0
}

}  // namespace sdprl
