// The active-set polish of an l1 result (mm/polish.h; docs/method.md section 7.6).
#include "mm/polish.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>

#include "linalg/cholesky.h"
#include "linalg/gmres.h"
#include "linalg/minres.h"
#include "mm/certificate.h"
#include "sdprl/terms/distance_terms.h"
#include "sdprl/terms/entry_terms.h"
#include "terms/term_subset.h"

namespace sdprl::mm {
namespace {

// A multiplier strictly inside its box marks a term the optimum fits (complementarity).
constexpr double kInsideBox = 1e-9;
// Newton steps per guess of E, and how many without a new best KKT residual end it.
constexpr int kNewtonSteps = 40;
constexpr int kPatience = 8;
// A KKT residual at rounding level (relative to F), where a round ends.
constexpr double kKktFloor = 1e-13;
// A KKT residual this small (relative to F) solves the guess well enough for its multipliers to say
// which side of the box they are on (PolishReport::boxed). Below it a direct step (DirectKkt) that
// does not cut the residual tenfold ends the round: there the residual is at rounding level, and
// further steps rose and fell between 1e-13 and 1e-8 (sdpa_compare's n = 100: 7 of 35 steps;
// docs/notes/solver-history.md). Not MINRES's inexact steps, which gain less per step and still
// reach rounding level (SDPLIB's hinf1).
constexpr double kKktSolved = 1e-8;
constexpr double kSolvedProgress = 0.1;
// A direct step's residual this small ends the round too: the certificate needs no more (the
// relative gaps that follow are about 1e-10), and each further step cost a factorisation for a
// residual that rose as often as it fell (sdpa_compare's n = 100, rank "auto": 3 of 13).
constexpr double kDirectEnough = 1e-11;
constexpr double kMinresTolerance = 1e-10;
// The guess's slack: a multiplier this far (relative) outside its box, a residual this far
// (relative to max(1, |t|)) on the wrong side of 0, contradict it.
constexpr double kBoxSlack = 1e-8;
constexpr double kSignSlack = 1e-12;
// The work budget, in term visits (a KKT product visits each term about four times, a term
// weighing its entries, detail::term_entries, and each of the n r unknowns once): the MM run's own
// (four a term per ADMM iteration), and at least kTermVisits, at least kMinProducts products. In
// work, not seconds, so that the result is the same on every machine. (tests/sdpa_global_test's
// instances take 120-14326 products of at most 400 visits; SDPLIB's mcp250-1 10130 of 6500 each,
// mcp500-1 22244 of 18000, about 1.5 s, which 1e8 visits cut short after 5555; gpp124-1's
// rejected polish ran 40257 products of 2484 counted visits, 33480 by entries, in 5 s.)
constexpr double kTermVisits = 5e8;
constexpr long kMinProducts = 200;
// The floor where the first guess has the direct solve (DirectKkt): its steps are exact, so the
// budget buys Newton steps rather than MINRES iterations that may never converge. From the end of
// sdpa_compare's n = 100 at the defaults (rank "auto", 3191 fitted terms, relative gap 8.7e-2) the
// polish reaches the optimum's KKT point in 4 guesses and 38 steps, 75960 products (about 11 s on
// a 2-core machine, 35 factorisations), where kTermVisits (20325 products) stopped it short; 4e9
// visits are 162600 products there, twice what it needs.
constexpr double kDirectTermVisits = 4e9;
// GMRES iterations of a direct solve (DirectKkt) against the exact products at most, its factor the
// preconditioner (linalg/gmres.h), and the relative residual at which its step is taken: an inexact
// Newton step, which cuts the KKT residual by about that much (sdpa_compare's n = 100, rank "auto":
// a factor taken one Newton step earlier, delta then 2-20 times the present one, reaches 1e-3 to
// 1e-5 in 20 iterations, 50 ms against 200 ms for a fresh single factor; the plain refinement
// x += M^{-1} (b - A x) did not converge from it, and a fresh factor came at every step: 10
// factorisations and 2.6 s in all against 4 and 1.65 s, the same 14 Newton steps). Iterations past
// 20 gained about a decade each 20 and cost more than the factor they save.
constexpr int kGmresIterations = 20;
constexpr double kDirectAccepted = 1e-2;
// The smallest delta (relative to F's scale) at which the direct solve factors in single precision
// (DirectKkt::factor). The Schur complement's small eigenvalues are of order delta against its
// largest, so the single factor's error grows as delta falls: at sdpa_compare's n = 100 every one
// at delta >= 1.2e-5 refined to the step's accuracy (11 of 11), and below 3e-6 3 of 4 did not
// (a failure costs a single factor, about half a double one).
constexpr double kSingleDelta = 1e-5;
// The relative change of the KKT residual below which an exact step made no progress.
constexpr double kStall = 1e-3;
// Guesses of E, at most.
constexpr int kRounds = 8;

// Terms new to a guess, at most, for its first steps to be solved on the earlier guess's factor
// (each costs a solve with it and a product at every step).
constexpr Index kAcrossAdded = 16;
// ... and only from a point whose KKT residual is at most this multiple of the delta where that
// factor was taken (sdpa_compare's n = 100, rank "auto": 0.33 reached kDirectAccepted in 20 GMRES
// iterations, three steps running; 86 left 0.98 of the residual).
constexpr double kAcrossResidual = 10.0;

// The KKT operator of one guess (E, s) at the iterate X: products with S(y), B and B^T.
class Kkt {
 public:
  Kkt(const Model& model, const RegularizationWeights& weights, const std::vector<Index>& fitted)
      : model_(model), terms_(*model.terms), weights_(weights), fitted_(fitted),
        fitted_terms_(detail::term_subset(terms_, fitted)) {}

  // out = S(y) V.
  void apply_s(const Vector& y, const Matrix& V, Matrix& out) const {
    apply_dual_operator(model_, weights_, y, V, out, a_scratch_);
  }
  // out_E = <sym(Q_tau) X, D> for tau in E, by polarisation: <X+sD, Q(X+sD)> - <X-sD, Q(X-sD)> =
  // 4 s <sym(Q) X, D>, with s = |X| / |D| so that both points are of X's size (no cancellation
  // beyond X's own rounding).
  void apply_b(const Matrix& X, const Matrix& D, Vector& out) const {
    out.setZero(static_cast<Index>(fitted_.size()));
    const double d = D.stableNorm();
    if (d == 0.0) return;
    const double s = std::max(X.stableNorm(), 1e-300) / d;
    if (fitted_terms_) {
      fitted_terms_->evaluate(X + s * D, plus_);
      fitted_terms_->evaluate(X - s * D, minus_);
      out = (plus_ - minus_) / (4.0 * s);
      return;
    }
    terms_.evaluate(X + s * D, plus_);
    terms_.evaluate(X - s * D, minus_);
    for (std::size_t k = 0; k < fitted_.size(); ++k)
      out[static_cast<Index>(k)] = (plus_[fitted_[k]] - minus_[fitted_[k]]) / (4.0 * s);
  }
  // out = sum_{tau in E} e_tau sym(Q_tau) X.
  void apply_bt(const Matrix& X, const Vector& e, Matrix& out) const {
    if (fitted_terms_) return fitted_terms_->apply_adjoint_sym(e, X, out);
    full_.setZero(terms_.size());
    for (std::size_t k = 0; k < fitted_.size(); ++k) full_[fitted_[k]] = e[static_cast<Index>(k)];
    terms_.apply_adjoint_sym(full_, X, out);
  }

 private:
  const Model& model_;
  const ConstraintSet& terms_;
  const RegularizationWeights& weights_;
  const std::vector<Index>& fitted_;
  // E's terms as a set of their own where the family allows (terms/term_subset.h): B and B^T then
  // cost a pass over |E| terms, not over all m (the staircase's refit at m = 2000: 2503 of 152k).
  const std::unique_ptr<const ConstraintSet> fitted_terms_;
  mutable Matrix a_scratch_;
  mutable Vector plus_, minus_, full_;
};

// One buffer for the Schur complement below in either precision, kept across factorisations and
// guesses: a fresh 81 MB matrix at each factorisation had the kernel zero its pages every time (7%
// of sdpa_compare's n = 100 run).
class SchurStorage {
 public:
  template <class Scalar>
  Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> matrix(Index k) {
    const std::size_t bytes = static_cast<std::size_t>(k) * static_cast<std::size_t>(k) * sizeof(Scalar);
    if (bytes > capacity_) {
      bytes_.reset();  // (the old buffer freed first: the peak is one buffer)
      bytes_.reset(new unsigned char[bytes + kAlign]);
      capacity_ = bytes;
    }
    void* start = bytes_.get();
    std::size_t space = capacity_ + kAlign;
    std::align(kAlign, bytes, start, space);
    return {static_cast<Scalar*>(start), k, k};
  }

 private:
  static constexpr std::size_t kAlign = 64;
  std::unique_ptr<unsigned char[]> bytes_;
  std::size_t capacity_ = 0;
};

// The Newton system of pair terms (entry, distance) solved directly, where n and |E| are small
// (docs/method.md section 7.6). MINRES needs 20000-37000 products a step on sdpa_compare's n = 100
// at rank 60 (|E| = 3191): near a KKT point S(y) + delta I is delta on range X, and the Schur
// complement on y_E is the fitted terms' Gram matrix in that space over delta, which MINRES does
// not resolve unpreconditioned and its diagonal does not precondition. For these families the Schur
// complement has a closed form. With W = (S(y) + delta I)^{-1} (n x n) and G = X X^T, a term
// (i, j) has sym(Q) X = (e_i x_j^T + e_j x_i^T) / 2 (entry) or a d^T with a = e_i - e_j,
// d = x_i - x_j (distance), so for terms s = (k, l) and t = (i, j)
//   entry:     <sym(Q_s) X, W sym(Q_t) X> = (W_ki G_lj + W_kj G_li + W_li G_kj + W_lj G_ki) / 4,
//   distance:  <sym(Q_s) X, W sym(Q_t) X> = (a_s^T W a_t)(a_s^T G a_t),
// |E|^2 lookups instead of |E| products. The step is then
//   (B W B^T + delta I) dy = B W f - g,   dX = W (f - B^T dy)
// for the right-hand side (f, g), refined against the exact products (Kkt) to the MINRES tolerance.
class DirectKkt {
 public:
  // Null where the family is not a pair family or the sizes exceed the limits below.
  static const PairTerms* applies(const ConstraintSet& terms, Index n, Index k) {
    const auto* pairs = dynamic_cast<const PairTerms*>(&terms);
    if (!pairs || !(dynamic_cast<const EntryTerms*>(pairs) || dynamic_cast<const DistanceTerms*>(pairs))) return nullptr;
    if (n > kDirectRows || k > kDirectFitted || k == 0) return nullptr;
    return pairs;
  }
  // The solve's work in KKT products (the budget's unit): k^3 / 3 for the Cholesky factor, about
  // 10 n^3 for S's eigendecomposition, against about 12 r flops per term visit of a product.
  static long products(Index n, Index r, Index k, double visits_per_product) {
    const double kd = static_cast<double>(k), nd = static_cast<double>(n);
    const double flops = kd * kd * kd / 3.0 + 8.0 * kd * kd + 10.0 * nd * nd * nd;
    return 1 + static_cast<long>(flops / (3.0 * static_cast<double>(r) * visits_per_product));
  }

  DirectKkt(const PairTerms& pairs, const std::vector<Index>& fitted, SchurStorage& storage)
      : distance_(dynamic_cast<const DistanceTerms*>(&pairs) != nullptr), storage_(storage) {
    i_.reserve(fitted.size());
    j_.reserve(fitted.size());
    for (const Index h : fitted) {
      i_.push_back(pairs.rows()[static_cast<std::size_t>(h)]);
      j_.push_back(pairs.cols()[static_cast<std::size_t>(h)]);
    }
  }

  // Factors the system at (X, y, delta), first raising delta to -2 lambda_min(S(y)) where S(y) is
  // indefinite (the multipliers of MM's last step leave lambda_min -3e-5 at sdpa_compare's n = 100:
  // S + delta I then has a negative eigenvalue, the Schur complement no Cholesky factor, and the
  // pivoted LU took 1.4-1.6 s against 0.5 s). False where S(y) + delta I or the Schur complement is
  // singular to working precision (the caller then uses MINRES).
  //
  // single: the Schur complement factored in single precision, twice as fast (linalg/cholesky.h);
  // the refinement against the exact products makes up its error where the complement's condition
  // number is well below 1 / eps_single (false where its factor is not positive definite).
  bool factor(const Kkt& kkt, const Vector& y, const Matrix& X, double& delta, bool single) {
    factored_ = false;
    single_ = single;
    const Index n = X.rows();
    delta_ = delta;
    Matrix S;
    kkt.apply_s(y, Matrix::Identity(n, n), S);
    const Eigen::SelfAdjointEigenSolver<Matrix> eig((0.5 * (S + S.transpose())).eval());
    if (eig.info() != Eigen::Success) return false;
    delta = delta_ = std::max(delta, -2.0 * eig.eigenvalues()[0]);
    Vector inv = eig.eigenvalues().array() + delta;
    const double scale = inv.cwiseAbs().maxCoeff();
    if (!(inv.cwiseAbs().minCoeff() > 1e-14 * scale)) return false;
    inv = inv.cwiseInverse();
    W_ = eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose();
    X_ = X;
    G_ = X * X.transpose();
    // B W B^T is PSD where S(y) + delta I is (delta above makes it so); otherwise the pivoted LU.
    const Index k = static_cast<Index>(i_.size());
    use_lu_ = false;
    if (single) {
      auto factor = storage_.matrix<float>(k);
      schur(delta, factor);
      factored_ = linalg::cholesky_in_place(factor);
      return factored_;
    }
    auto factor = storage_.matrix<double>(k);
    schur(delta, factor);
    if (!linalg::cholesky_in_place(factor)) {
      use_lu_ = true;
      schur(delta, factor);
      factor.triangularView<Eigen::StrictlyUpper>() = factor.transpose();
      lu_.compute(factor);
      if (!(lu_.rcond() > 1e-15)) return false;
    }
    factored_ = true;
    return true;
  }

  // M = B W B^T + delta I, its lower triangle.
  template <class M_>
  void schur(double delta, M_& M) const {
    using Scalar = typename M_::Scalar;
    const Index k = static_cast<Index>(i_.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (Index s = 0; s < k; ++s) {
      const Index a = i_[static_cast<std::size_t>(s)], b = j_[static_cast<std::size_t>(s)];
      for (Index t = 0; t <= s; ++t) {
        const Index c = i_[static_cast<std::size_t>(t)], d = j_[static_cast<std::size_t>(t)];
        const double v =
            distance_ ? (W_(a, c) - W_(a, d) - W_(b, c) + W_(b, d)) * (G_(a, c) - G_(a, d) - G_(b, c) + G_(b, d))
                      : 0.25 * (W_(a, c) * G_(b, d) + W_(a, d) * G_(b, c) + W_(b, c) * G_(a, d) + W_(b, d) * G_(a, c));
        M(s, t) = static_cast<Scalar>(t == s ? v + delta : v);
      }
    }
  }

  bool factored() const { return factored_; }
  double delta() const { return delta_; }  // where factored
  bool single() const { return single_; }
  void forget() { factored_ = false; }

  // x = K^{-1} b for b = (vec f, g), K the system where it was factored.
  void solve(const Kkt& kkt, const Vector& b, Vector& x) const {
    const Index n = X_.rows(), r = X_.cols(), size_x = n * r, k = static_cast<Index>(i_.size());
    const Matrix u = W_ * Eigen::Map<const Matrix>(b.data(), n, r);
    Vector h;
    kkt.apply_b(X_, u, h);
    h -= b.tail(k);
    Vector dy;
    if (single_) linalg::cholesky_solve(storage_.matrix<float>(k), h, dy);
    else if (use_lu_) dy = lu_.solve(h);
    else linalg::cholesky_solve(storage_.matrix<double>(k), h, dy);
    Matrix Bt;
    kkt.apply_bt(X_, dy, Bt);
    x.resize(size_x + k);
    Eigen::Map<Matrix>(x.data(), n, r) = u - W_ * Bt;
    x.tail(k) = dy;
  }

 private:
  // n at most (W and G are n x n, S's eigendecomposition about 9 n^3 flops: 1e10, a few tenths of
  // a second, at 1000) and |E| at most (the Schur complement is |E|^2 doubles, 200 MB at 5000, and
  // its factor |E|^3 / 3 flops, 4e10).
  static constexpr Index kDirectRows = 1000;
  static constexpr Index kDirectFitted = 5000;
  bool distance_;
  std::vector<Index> i_, j_;
  Matrix W_, X_, G_;  // (S(y) + delta I)^{-1}, X and X X^T where factored
  bool factored_ = false;
  bool single_ = false;
  double delta_ = 0.0;
  // The Schur complement's Cholesky factor (lower triangle), in single precision where single_.
  SchurStorage& storage_;
  Eigen::PartialPivLU<Matrix> lu_;
  bool use_lu_ = false;
};

struct Residuals {
  Matrix SX;     // S(y) X
  Vector r;      // all m residuals
  double norm = 0.0;  // sqrt(|S X|^2 + |r_E / 2|^2)
};

// The multipliers of a solved KKT point are unique only up to the null space of y_E ->
// sum_E y_tau sym(Q_tau) X: where the optimum's Z has blocks or directions at 0 (SDPLIB's truss1:
// four of its seven blocks), S(y) X = 0 says nothing of S there, and the least-squares y can leave
// S(y) indefinite where a dual optimum is PSD. Every y = y_0 + N z keeps S(y) X = 0 and so the gap;
// this raises lambda_min(S(y)), a concave function of z, by ascent on a soft minimum of S's
// eigenvalues (below) with steps that keep y_E in its box. Dense, so for small problems only.
constexpr Index kRepairRows = 300;        // n at most
constexpr Index kRepairFitted = 300;      // |E| at most
constexpr double kRepairDoubles = 2e6;    // d n^2 (the G_j) at most: 16 MB
constexpr int kRepairSteps = 300;  // eigendecompositions of S, at least this many allowed,
constexpr double kRepairWork = 3e8;  // and up to n^3 times as many as fit in this (about a second)
void raise_lambda_min(const Model& model, const RegularizationWeights& weights, const Matrix& X,
                      const std::vector<Index>& fitted, double w, Vector& y) {
  const ConstraintSet& terms = *model.terms;
  const Index n = X.rows(), r = X.cols(), k = static_cast<Index>(fitted.size()), m = terms.size();
  if (k == 0 || n > kRepairRows || k > kRepairFitted) return;
  // S(y_0), dense; nothing to do where it is PSD already.
  const Matrix I = Matrix::Identity(n, n);
  Matrix S0, scratch;
  apply_dual_operator(model, weights, y, I, S0, scratch);
  S0 = 0.5 * (S0 + Matrix(S0.transpose()));
  if (!S0.allFinite()) return;
  if (Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S0, Eigen::EigenvaluesOnly).eigenvalues()[0] >= 0.0) return;
  // L's columns vec(sym(Q_tau) X), tau in E, and their null space N (k x d).
  Eigen::MatrixXd L(n * r, k);
  Vector e = Vector::Zero(m);
  Matrix column;
  for (Index q = 0; q < k; ++q) {
    e[fitted[q]] = 1.0;
    terms.apply_adjoint_sym(e, X, column);
    e[fitted[q]] = 0.0;
    L.col(q) = Eigen::Map<const Vector>(column.data(), n * r);
  }
  const Eigen::BDCSVD<Eigen::MatrixXd> svd(L, Eigen::ComputeFullV);
  const Vector sv = svd.singularValues();
  const double top = sv.size() > 0 ? sv[0] : 0.0;
  Index rank = 0;
  while (rank < sv.size() && sv[rank] > 1e-10 * std::max(top, 1e-300)) ++rank;
  const Index d = k - rank;
  if (d == 0 || static_cast<double>(d) * static_cast<double>(n * n) > kRepairDoubles) return;
  const Eigen::MatrixXd N = svd.matrixV().rightCols(d);
  // G_j = sum_E N_qj sym(Q_q), dense.
  std::vector<Matrix> G(static_cast<std::size_t>(d));
  for (Index j = 0; j < d; ++j) {
    for (Index q = 0; q < k; ++q) e[fitted[q]] = N(q, j);
    terms.apply_adjoint_sym(e, I, G[static_cast<std::size_t>(j)]);
  }
  const auto inside = [&](const Vector& z) {
    const Vector dy = N * z;
    for (Index q = 0; q < k; ++q)
      if (std::abs(y[fitted[q]] + dy[q]) > w) return false;
    return true;
  };
  // lambda_min is not smooth where eigenvalues cross (the zero blocks' each have their own), and
  // steps along one eigenvector's supergradient stalled there (truss1 at -0.02). So the ascent is
  // on its smooth lower bound f_mu = -mu log sum_i exp(-lambda_i / mu) (within mu log n of it),
  // whose gradient is <G_j, V diag(p) V^T> with p = softmax(-lambda / mu), mu shrinking as it
  // converges; the best lambda_min met is kept.
  const auto spectrum = [&](const Vector& z, Eigen::VectorXd& values, Eigen::MatrixXd& vectors) {
    Matrix S = S0;
    for (Index j = 0; j < d; ++j) S += z[j] * G[static_cast<std::size_t>(j)];
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (S + S.transpose()));
    values = eig.eigenvalues();
    vectors = eig.eigenvectors();
  };
  const auto soft_min = [](const Eigen::VectorXd& values, double mu, Eigen::VectorXd* p) {
    const double low = values[0];
    Eigen::VectorXd e = (-(values.array() - low) / mu).exp().matrix();
    const double sum = e.sum();
    if (p) *p = e / sum;
    return low - mu * std::log(sum);
  };
  Vector z = Vector::Zero(d), best_z = z;
  Eigen::VectorXd values, p;
  Eigen::MatrixXd vectors;
  spectrum(z, values, vectors);
  const double start = values[0];
  double value = start, mu = std::max(0.1 * std::abs(start), 1e-300), step = 1.0;
  int evaluations = 1;
  const int cap = static_cast<int>(std::max<double>(kRepairSteps, kRepairWork / std::pow(static_cast<double>(n), 3)));
  while (evaluations < cap && value < 0.0 && mu > 1e-15 * std::abs(start)) {
    const double f = soft_min(values, mu, &p);
    const Eigen::MatrixXd W = vectors * p.asDiagonal() * vectors.transpose();
    Vector g(d);
    for (Index j = 0; j < d; ++j) g[j] = G[static_cast<std::size_t>(j)].cwiseProduct(W).sum();
    bool moved = false;
    for (int halving = 0; halving < 40 && evaluations < cap && g.norm() > 0.0; ++halving) {
      const Vector trial = z + (step / g.norm()) * g;
      if (inside(trial)) {
        Eigen::VectorXd tvalues;
        Eigen::MatrixXd tvectors;
        spectrum(trial, tvalues, tvectors);
        ++evaluations;
        if (soft_min(tvalues, mu, nullptr) > f) {
          z = trial;
          values = tvalues;
          vectors = tvectors;
          if (values[0] > value) {
            value = values[0];
            best_z = z;
          }
          step *= 2.0;
          moved = true;
          break;
        }
      }
      step *= 0.5;
    }
    if (!moved) mu *= 0.25;  // f_mu's maximum (within the steps' reach) found: sharpen
  }
  z = best_z;
  if (!(value > start)) return;
  const Vector dy = N * z;
  for (Index q = 0; q < k; ++q) y[fitted[q]] += dy[q];
}

}  // namespace

Matrix refit_direction(const Model& model, const Matrix& X, const std::vector<Index>& fitted, const Vector& q,
                       long max_products) {
  Matrix D = Matrix::Zero(X.rows(), X.cols());
  const Index k = static_cast<Index>(fitted.size());
  if (k == 0) return D;
  const RegularizationWeights unused_weights{};
  const Kkt kkt(model, unused_weights, fitted);
  Vector rhs(k), z, BBtz;
  for (Index j = 0; j < k; ++j) rhs[j] = -0.5 * q[fitted[static_cast<std::size_t>(j)]];
  Matrix BtZ;
  double unused = 0.0;
  linalg::minres(
      [&](const Vector& v, Vector& o) {
        kkt.apply_bt(X, v, BtZ);
        kkt.apply_b(X, BtZ, o);
      },
      rhs, z, kMinresTolerance, std::max(max_products, 1L), &unused);
  kkt.apply_bt(X, z, D);
  return D;
}

namespace {
// fit_all: every term in E for good, its multiplier unboxed, and the result not judged on F
// (polish_constraints()).
Polished polish_impl(const Model& model, double w, const RegularizationWeights& weights, const Matrix& X0,
                     const Vector& multipliers, double objective, long admm_iterations, bool fit_all,
                     bool direct_only) {
  Polished out;
  PolishReport& report = out.report;
  report.tried = true;
  report.objective_before = objective;
  const ConstraintSet& terms = *model.terms;
  const Index m = terms.size(), n = X0.rows(), r = X0.cols(), size_x = n * r;
  if (multipliers.size() != m || !(w > 0.0)) {
    report.note = "no multipliers";
    return out;
  }
  // A term costs its entries (detail::term_entries: gpp124-1's all-ones constraint is 7750 of its
  // 7874, one term of 125).
  const double entries = detail::term_entries(terms);
  Vector values;
  terms.evaluate(X0, values);
  const Vector res = values - terms.targets();

  // The first guess: E = the terms whose multiplier is inside its box; elsewhere the sign of the
  // residual (of the multiplier where the residual is 0).
  std::vector<char> in_e(static_cast<std::size_t>(m), 0);
  Vector y(m);
  for (Index h = 0; h < m; ++h) {
    const double u = std::clamp(multipliers[h], -1.0, 1.0);
    in_e[h] = fit_all || std::abs(u) < 1.0 - kInsideBox;
    y[h] = in_e[h] ? w * u : w * (res[h] != 0.0 ? (res[h] > 0.0 ? 1.0 : -1.0) : (u >= 0.0 ? 1.0 : -1.0));
  }
  const Index first_fitted = static_cast<Index>(std::count(in_e.begin(), in_e.end(), char{1}));
  const double least = DirectKkt::applies(terms, n, first_fitted) ? kDirectTermVisits : kTermVisits;
  const double visits = std::max(least, 4.0 * entries * static_cast<double>(admm_iterations));
  const long budget = std::max<long>(kMinProducts, static_cast<long>(visits / (4.0 * entries + size_x)));

  // Newton runs on X / sigma, sigma = |X|: F(sigma X) is sigma^2 times the same problem with the
  // targets t / sigma^2 and the same multipliers, so every block of the KKT system is of order 1
  // whatever the data's scale (CMVU's distances near 1e100 made B 1e100 times S, and MINRES stalled).
  const double sigma = X0.stableNorm();
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    report.note = "X is 0 or not finite";
    return out;
  }
  const Vector targets = terms.targets() / (sigma * sigma);
  Matrix X = X0 / sigma;
  // The KKT residuals' scale, and the levels below (kKktFloor, kKktSolved, kDirectEnough) in it.
  const double scale = std::max(1.0, std::abs(objective) / (sigma * sigma));
  const double floor = kKktFloor * scale, solved = kKktSolved * scale, enough = kDirectEnough * scale,
               single_delta = kSingleDelta * scale;
  Residuals now;
  SchurStorage schur_storage;
  // The last factor of an earlier guess, with that guess's terms and B: the next guess differs
  // from it in a few terms (the contradictions corrected), so the factor preconditions the new
  // system up to a perturbation of that rank, which GMRES resolves in a few iterations more
  // (docs/method.md section 7.6). Usable until this polish factors again (the factor lives in
  // schur_storage).
  struct Earlier {
    std::optional<DirectKkt> direct;
    std::vector<Index> fitted;
    std::unique_ptr<Kkt> kkt;
    bool usable = false;
  } earlier;
  for (int round = 0; round < kRounds && report.products < budget; ++round) {
    ++report.rounds;
    std::vector<Index> fitted;
    for (Index h = 0; h < m; ++h)
      if (in_e[h]) fitted.push_back(h);
    const Index k = static_cast<Index>(fitted.size());
    report.fitted = k;
    const Kkt kkt(model, weights, fitted);
    Vector fit;
    const auto residuals = [&](const Matrix& Xc, const Vector& yc, Residuals& rs) {
      kkt.apply_s(yc, Xc, rs.SX);
      terms.evaluate(Xc, rs.r);
      rs.r -= targets;
      fit.resize(k);
      for (Index q = 0; q < k; ++q) fit[q] = 0.5 * rs.r[fitted[q]];
      // Stable norms: on data near 1e100 the residuals are near 1e200 and their squares overflow.
      rs.norm = std::hypot(rs.SX.stableNorm(), fit.stableNorm());
    };
    const auto solve = [&](const auto& apply, const Vector& rhs, Vector& x, Index size) {
      double unused = 0.0;
      const long cap = std::min<long>(budget - report.products, 4 * static_cast<long>(size) + 200);
      report.products += linalg::minres(apply, rhs, x, kMinresTolerance, std::max(cap, 1L), &unused);
    };
    // y_E from least squares at X, min |S(y) X| (B B^T y_E = -B S_N X): the run's multipliers are
    // those of a loosely solved last step.
    if (k > 0) {
      Vector y_n = y, rhs, y_e;
      for (const Index h : fitted) y_n[h] = 0.0;
      Matrix SNX, BtE;
      kkt.apply_s(y_n, X, SNX);
      kkt.apply_b(X, SNX, rhs);
      solve(
          [&](const Vector& v, Vector& o) {
            kkt.apply_bt(X, v, BtE);
            kkt.apply_b(X, BtE, o);
          },
          Vector(-rhs), y_e, k);
      for (Index q = 0; q < k; ++q) y[fitted[q]] = y_e[q];
    }
    residuals(X, y, now);

    // Full Newton steps: the KKT residual need not fall at every one (where the solution is
    // degenerate it rose and fell by turns on tests/sdpa_global_test's completion n = 25 and still
    // reached 1e-15 from MM's default stop, where halving the steps that raised it stalled at
    // 1e-5). The best iterate is kept; a round ends at rounding level or after kPatience steps
    // without a new best.
    Matrix best_X = X, D, SD, BtE;
    Vector best_y = y, b(size_x + k), d, BD;
    Residuals best = now;
    double delta = 0.0;
    // [S(y) + delta I, B^T; B, -delta I]: Levenberg-Marquardt's regularisation, delta = the KKT
    // residual, keeps the system nonsingular where the solutions are not isolated (rotations of X,
    // columns that vanish) and vanishes at a solution, so that convergence stays superlinear.
    const auto apply = [&](const Vector& v, Vector& o) {
      o.resize(size_x + k);
      D = Eigen::Map<const Matrix>(v.data(), n, r);
      kkt.apply_s(y, D, SD);
      kkt.apply_bt(X, v.tail(k), BtE);
      Eigen::Map<Matrix>(o.data(), n, r) = SD + BtE + delta * D;
      kkt.apply_b(X, D, BD);
      o.tail(k) = BD - delta * v.tail(k);
    };
    // The direct solve (DirectKkt) where it applies and fits the budget, refined against the exact
    // products by GMRES with the factor as its preconditioner. A factor serves the round's later
    // steps too (X, y and delta move, and GMRES makes up the difference at about 2 k^2 flops an
    // iteration instead of a k^3 / 3 factor); it is renewed where GMRES does not reach
    // kDirectAccepted with it. False (MINRES then) where no factor can be had or none reduces the
    // residual.
    std::optional<DirectKkt> direct;
    if (const PairTerms* pairs = DirectKkt::applies(terms, n, k)) direct.emplace(*pairs, fitted, schur_storage);
    if (!direct && direct_only) {
      report.note = "no direct solve for this guess";
      break;
    }
    // This guess's fitted terms in the earlier guess's order (-1: not fitted there), and its new
    // terms A (at most kAcrossAdded: each costs a solve at every step).
    std::vector<Index> earlier_of, added;
    if (direct && earlier.usable) {
      earlier_of.assign(static_cast<std::size_t>(k), -1);
      std::size_t p = 0;
      for (Index q = 0; q < k; ++q) {
        const Index h = fitted[static_cast<std::size_t>(q)];
        while (p < earlier.fitted.size() && earlier.fitted[p] < h) ++p;
        if (p < earlier.fitted.size() && earlier.fitted[p] == h) earlier_of[static_cast<std::size_t>(q)] = static_cast<Index>(p);
        else added.push_back(q);
      }
      earlier.usable = static_cast<Index>(added.size()) <= kAcrossAdded;
    } else {
      earlier.usable = false;
    }
    // The earlier factor as this system's preconditioner P0 for the guess without A: the
    // right-hand side of the common terms in their earlier places (0 for terms no longer fitted,
    // whose rows the earlier system still had; GMRES makes up for them), A's entries ignored and
    // returned 0.
    Vector earlier_b, earlier_x;
    const auto across_common = [&](const Vector& v, Vector& o) {
      const Index ke = static_cast<Index>(earlier.fitted.size());
      earlier_b.setZero(size_x + ke);
      earlier_b.head(size_x) = v.head(size_x);
      for (Index q = 0; q < k; ++q)
        if (const Index e = earlier_of[static_cast<std::size_t>(q)]; e >= 0) earlier_b[size_x + e] = v[size_x + q];
      earlier.direct->solve(*earlier.kkt, earlier_b, earlier_x);
      o.setZero(size_x + k);
      o.head(size_x) = earlier_x.head(size_x);
      for (Index q = 0; q < k; ++q)
        if (const Index e = earlier_of[static_cast<std::size_t>(q)]; e >= 0) o[size_x + q] = earlier_x[size_x + e];
    };
    // A's rows and columns by bordering, exactly: with E_A = [B_A^T; 0] and u = (dX, dy_C),
    //   u = P0 (f - E_A z),   (E_A^T P0 E_A + delta I) z = E_A^T P0 f - g_A,   dy_A = z,
    // E_A, V = P0 E_A and the small matrix formed at each step (across_prepare).
    Matrix EA, PEA, small;
    Eigen::LDLT<Matrix> small_factor;
    const auto across_prepare = [&]() {
      const Index a = static_cast<Index>(added.size());
      EA.resize(size_x, a);
      PEA.resize(size_x + k, a);
      Vector unit = Vector::Zero(k), column(size_x + k), out;
      Matrix Bt;
      for (Index c = 0; c < a; ++c) {
        unit.setZero();
        unit[added[static_cast<std::size_t>(c)]] = 1.0;
        kkt.apply_bt(X, unit, Bt);
        EA.col(c) = Eigen::Map<const Vector>(Bt.data(), size_x);
        column.setZero();
        column.head(size_x) = EA.col(c);
        across_common(column, out);
        PEA.col(c) = out;
      }
      small = EA.transpose() * PEA.topRows(size_x);
      small.diagonal().array() += delta;
      small_factor.compute(small);
    };
    const auto across = [&](const Vector& v, Vector& o) {
      across_common(v, o);
      if (added.empty()) return;
      Vector z = EA.transpose() * o.head(size_x);
      for (std::size_t c = 0; c < added.size(); ++c) z[static_cast<Index>(c)] -= v[size_x + added[c]];
      z = small_factor.solve(z);
      o -= PEA * z;
      for (std::size_t c = 0; c < added.size(); ++c) o[size_x + added[c]] = z[static_cast<Index>(c)];
    };
    const long direct_cost = DirectKkt::products(n, r, k, 4.0 * entries + static_cast<double>(size_x));
    Vector Kd;
    // Factors in single precision while delta (the residual) is at least kSingleDelta of F's
    // scale, and until one fails its refinement.
    bool single = true;
    bool stale = false;  // the last direct step's factor was taken at an earlier step
    // The step by GMRES on the exact products, `precondition` (a factor's solve) its right
    // preconditioner; true where the step's residual, checked against one more exact product, is
    // within kDirectAccepted.
    const auto gmres_step = [&](const auto& precondition) {
      double residual = 0.0;
      const long iterations =
          linalg::gmres(apply, precondition, b, d, kMinresTolerance, kGmresIterations, &residual);
      apply(d, Kd);
      report.products += 2 * iterations + 1;  // the solves' and the products'
      return (b - Kd).norm() <= kDirectAccepted * b.norm();
    };
    const auto direct_step = [&]() {
      if (!direct) return false;
      // (Not from a point whose residual is far above the delta where the earlier factor was
      // taken: there S(y) has moved by more than delta, on which W = (S + delta I)^{-1} hinges.)
      if (!direct->factored() && earlier.usable && delta <= kAcrossResidual * earlier.direct->delta()) {
        across_prepare();
        report.products += 2 * static_cast<long>(added.size());
        if (gmres_step(across)) {
          stale = true;
          return true;
        }
        earlier.usable = false;
      }
      for (bool fresh = false; !fresh;) {
        fresh = !direct->factored();
        if (fresh) {
          if (report.products + direct_cost > budget) return false;
          earlier.usable = false;  // (its factor is overwritten)
          const bool factored = (single && delta >= single_delta && direct->factor(kkt, y, X, delta, true)) ||
                                (single = false, direct->factor(kkt, y, X, delta, false));
          if (!factored) return false;
          report.products += direct_cost;
          ++report.factorizations;
          if (direct->single()) ++report.single_factorizations;
        }
        if (gmres_step([&](const Vector& v, Vector& o) { direct->solve(kkt, v, o); })) {
          stale = !fresh;
          return true;
        }
        if (fresh && direct->single()) {
          single = false;  // the single factor's error is beyond the refinement's reach: double from here
          fresh = false;
        } else if (fresh) {
          return false;
        }
        direct->forget();  // stale: factor again here
      }
      return false;
    };
    int stalls = 0;
    for (int step = 1, best_step = 0; step <= kNewtonSteps && best.norm > floor && step - best_step <= kPatience &&
                                      report.products < budget;
         ++step) {
      Eigen::Map<Matrix>(b.data(), n, r) = -now.SX;
      for (Index q = 0; q < k; ++q) b[size_x + q] = -0.5 * now.r[fitted[q]];
      const double before = now.norm;
      bool exact = false;
      // A step on an earlier factor that raises the residual is taken again on a fresh one: that
      // factor's GMRES solve is inexact (to kDirectAccepted), and far from the KKT point, where
      // delta is large, the inexact step raised the residual threefold where the exact one
      // lowered it (sdpa_compare's n = 100 at the defaults, whose polish then ran out of patience).
      const Matrix X_before = X;
      const Vector y_before = y;
      const Residuals at_before = now;
      for (bool again = true; again;) {
        delta = before;
        stale = false;
        exact = direct_step();
        if (!exact && direct_only) break;
        if (!exact) solve(apply, b, d, size_x + k);
        X += Eigen::Map<const Matrix>(d.data(), n, r);
        for (Index q = 0; q < k; ++q) y[fitted[q]] += d[size_x + q];
        residuals(X, y, now);
        // (Where the budget has no fresh factor left the stale step stands: MINRES's capped
        // solve in its place would be worse.)
        again = stale && !(now.norm <= before) && report.products + direct_cost <= budget;
        if (again) {
          X = X_before;
          y = y_before;
          now = at_before;
          direct->forget();
          earlier.usable = false;
        }
      }
      if (!exact && direct_only) break;
      // An exactly solved step that leaves the residual where it was: the guess has no KKT
      // point near (sdpa_compare's n = 100 at rank 60 fits two terms that the optimum cannot, at
      // 1.417e-7 for good, their multipliers twice their box); its correction is what helps.
      stalls = exact && std::abs(now.norm - before) <= kStall * before ? stalls + 1 : 0;
      ++report.newton_steps;
      if (!std::isfinite(now.norm)) break;
      // MM's early attempts (direct_only) give up at the first step that raises the residual: from
      // where the run is not yet close, Newton first climbed for 3-4 steps and 2-4 s
      // (sdpa_compare's n = 100, rank 60, MM step 512: 2.5e-4 -> 2.6e-3 -> 6e-5 in 8 steps), and
      // a later attempt, closer, costs less than those steps.
      if (direct_only && now.norm > before) break;
      if (exact && best.norm <= solved && !(now.norm <= kSolvedProgress * before)) break;  // (best is kept)
      if (stalls > 0) {
        // The stalled step's multipliers, not the best's: they move along the direction that the
        // inconsistent terms leave free (by |dy| = 1 a step at n = 100), out of their box, which
        // is what the correction below reads.
        best_X = X;
        best_y = y;
        best = now;
        break;
      }
      if (now.norm < best.norm) {
        best_X = X;
        best_y = y;
        best = now;
        best_step = step;
      }
      if (exact && best.norm <= enough) break;
    }
    if (direct && direct->factored()) {
      earlier.fitted = fitted;
      earlier.kkt = std::make_unique<Kkt>(model, weights, earlier.fitted);
      earlier.direct.emplace(std::move(*direct));
      earlier.usable = true;
    }
    X = std::move(best_X);
    y = std::move(best_y);
    now = std::move(best);
    // What this KKT point says of the l1 penalty: the terms it leaves on the box (not fitted) or
    // prices beyond it (PolishReport::boxed; read by the sdpa models' penalty path).
    report.kkt_solved = now.norm <= solved;
    report.boxed = 0;
    for (Index h = 0; h < m; ++h)
      if (!in_e[h] || std::abs(y[h]) > w * (1.0 + kBoxSlack)) ++report.boxed;

    // Correct the guess where the KKT point contradicts it. Where the guess has no KKT point (the
    // round ended unsolved) only its largest contradiction is corrected: at sdpa_compare's n = 100,
    // rank 60, two fitted terms cannot both be fitted and their multipliers leave the box on
    // opposite sides (-1.3 and 1.5 w); dropping the second alone reaches the optimum's KKT point
    // (certified, relative gap 4e-13), dropping both a point from which Newton diverged.
    //
    // How far term h's KKT point contradicts the guess, relative to its scale (positive exactly
    // where it does).
    const auto contradiction = [&](Index h) {
      if (in_e[h]) return (std::abs(y[h]) - w * (1.0 + kBoxSlack)) / w;
      const double scale = std::max(1.0, std::abs(targets[h]));
      return y[h] * now.r[h] < 0.0 ? (std::abs(now.r[h]) - kSignSlack * scale) / scale : 0.0;
    };
    Index worst = -1;
    double largest = 0.0;
    for (Index h = 0; h < m && !fit_all && !report.kkt_solved; ++h)
      if (const double c = contradiction(h); c > largest) {
        largest = c;
        worst = h;
      }
    bool changed = false;
    for (Index h = 0; h < m && !fit_all; ++h) {
      if ((worst >= 0 && h != worst) || !(contradiction(h) > 0.0)) continue;
      if (in_e[h]) {
        in_e[h] = 0;  // a multiplier outside its box: the term gains by leaving its fit, on y's side
        y[h] = y[h] > 0.0 ? w : -w;
      } else {
        in_e[h] = 1;  // a residual that changed sign: the term is fitted (y starts at its old sign)
      }
      changed = true;
    }
    if (!changed) break;
  }
  X *= sigma;
  if (report.kkt_solved) {
    std::vector<Index> fitted;
    for (Index h = 0; h < m; ++h)
      if (in_e[h]) fitted.push_back(h);
    raise_lambda_min(model, weights, X, fitted, fit_all ? std::numeric_limits<double>::infinity() : w, y);
  }
  terms.evaluate(X, values);
  const double f = w * (values - terms.targets()).cwiseAbs().sum() + regularizer_value(model, weights, X);
  if (fit_all ? !(report.kkt_solved && std::isfinite(f)) : !(f <= objective)) {
    report.note = fit_all ? "its KKT conditions were not solved" : "its point has a higher F (" + std::to_string(f) + ")";
    return out;
  }
  out.improved = true;
  out.X = std::move(X);
  out.objective = f;
  out.multipliers = y / w;
  if (!fit_all) out.multipliers = out.multipliers.cwiseMax(-1.0).cwiseMin(1.0);
  return out;
}
}  // namespace

bool polish_is_direct(const Model& model, Index n, const Vector& multipliers) {
  Index fitted = 0;
  for (Index h = 0; h < multipliers.size(); ++h)
    if (std::abs(multipliers[h]) < 1.0 - kInsideBox) ++fitted;
  return DirectKkt::applies(*model.terms, n, fitted) != nullptr;
}

Polished polish(const Model& model, double w, const RegularizationWeights& weights, const Matrix& X,
                const Vector& multipliers, double objective, long admm_iterations, bool direct_only) {
  return polish_impl(model, w, weights, X, multipliers, objective, admm_iterations, false, direct_only);
}

Polished polish_constraints(const Model& model, double w, const RegularizationWeights& weights, const Matrix& X,
                            double objective, long admm_iterations) {
  return polish_impl(model, w, weights, X, Vector::Zero(model.terms->size()), objective, admm_iterations, true, false);
}

}  // namespace sdprl::mm
