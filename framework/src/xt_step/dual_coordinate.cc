// The kDualCoordinate strategy (xt_step/dual_coordinate.h; docs/method.md section 3.9).
#include "xt_step/dual_coordinate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "mm/surrogate.h"
#include "rows/row_blocks.h"
#include "sdprl/constraint.h"
#include "sdprl/error.h"

namespace sdprl::xt_step {

namespace {
// Distinct from every Admm generation (those count up from 1 without the top bit), so that no
// other Xt-step takes this strategy's M for its P*(nu).
std::uint64_t next_token() {
  static std::atomic<std::uint64_t> counter{0};
  return (std::uint64_t{1} << 63) | ++counter;
}

// Row blocks of the schedule: 16 once n is large enough for 16 blocks of 32 rows (a round is then
// 8 or 16 buckets, enough for the threads of one machine); fewer on small problems, where the
// rounds' barriers would cost more than they share out.
Index block_count(Index n) { return n >= 512 ? 16 : n >= 64 ? 4 : 1; }

// Multiply-adds (terms times rank) below which a sweep runs on one thread.
constexpr Index kParallelSweep = Index{1} << 18;
}  // namespace

using detail::PairFamily;

// fn(F) with the family as a compile-time constant (as detail::with_rank does for the rank).
template <class Fn>
void with_family(PairFamily family, Fn&& fn) {
  if (family == PairFamily::kDistance)
    fn(std::integral_constant<PairFamily, PairFamily::kDistance>{});
  else
    fn(std::integral_constant<PairFamily, PairFamily::kEntry>{});
}

DualCoordinate::DualCoordinate(const Surrogate& surrogate, const AdmmOptions& options,
                               const detail::CoupledPairs& lin)
    : XtStep(surrogate, options), lin_(lin) {
  const PairTerms& terms = lin.pair_terms();
  const Index n = terms.dimension(), m = terms.size(), K = block_count(n);
  const auto block = [&](Index i) { return i * K / n; };
  // Rounds: the K diagonal buckets (a, a), then the K - 1 rounds of the circle method, each K / 2
  // pairs {a, b} that share no block. Bucket ids in that order.
  std::vector<Index> bucket_of(static_cast<std::size_t>(K * K), -1);
  Index buckets = 0;
  round_ptr_.push_back(0);
  for (Index a = 0; a < K; ++a) bucket_of[static_cast<std::size_t>(a * K + a)] = buckets++;
  round_ptr_.push_back(buckets);
  for (Index t = 0; t + 1 < K; ++t) {
    for (Index k = 0; k < K / 2; ++k) {
      const Index a = k == 0 ? K - 1 : (t + k) % (K - 1);
      const Index b = k == 0 ? t : (t - k + K - 1) % (K - 1);
      bucket_of[static_cast<std::size_t>(a * K + b)] = bucket_of[static_cast<std::size_t>(b * K + a)] = buckets++;
    }
    round_ptr_.push_back(buckets);
  }
  // Counting sort of the terms by bucket, each bucket in the terms' order.
  std::vector<Index> id(static_cast<std::size_t>(m));
  bucket_ptr_.assign(static_cast<std::size_t>(buckets) + 1, 0);
  for (Index h = 0; h < m; ++h) {
    const Index b = bucket_of[static_cast<std::size_t>(block(terms.rows()[h]) * K + block(terms.cols()[h]))];
    if (b < 0) throw std::logic_error("DualCoordinate: a pair of row blocks in no round");
    id[static_cast<std::size_t>(h)] = b;
    ++bucket_ptr_[static_cast<std::size_t>(b) + 1];
  }
  for (Index b = 0; b < buckets; ++b) bucket_ptr_[b + 1] += bucket_ptr_[b];
  order_.resize(static_cast<std::size_t>(m));
  std::vector<Index> next(bucket_ptr_.begin(), bucket_ptr_.end() - 1);
  for (Index h = 0; h < m; ++h) order_[static_cast<std::size_t>(next[id[h]]++)] = static_cast<std::int32_t>(h);
  position_.resize(static_cast<std::size_t>(m));
  for (Index q = 0; q < m; ++q) position_[static_cast<std::size_t>(order_[static_cast<std::size_t>(q)])] = static_cast<std::int32_t>(q);
  terms_.resize(static_cast<std::size_t>(m));
  for (Index q = 0; q < m; ++q) {
    const Index h = order_[static_cast<std::size_t>(q)];
    terms_[static_cast<std::size_t>(q)] = Term{terms.rows()[static_cast<std::size_t>(h)], terms.cols()[static_cast<std::size_t>(h)], 0.0, 0.0, 0.0};
  }
}

void DualCoordinate::prepare(double, bool) {
  if (!s_.b_is_diagonal()) throw std::logic_error("DualCoordinate: B is not diagonal");
  // A row with B_ii = 0 (lambda = 0, no A-term, and no term with a positive weight on it) has
  // M_i = G_i = 0: its D_i is 0, as Surrogate::solve_B's pseudo-inverse gives.
  inv_b_ = s_.b_diagonal().unaryExpr([](double b) { return b > 0.0 ? 1.0 / b : 0.0; });
  const Matrix& X = lin_.point();
  const Vector norms = X.rowwise().squaredNorm();
  const bool distance = lin_.family() == PairFamily::kDistance;
  const Vector& w = lin_.term_scales();
  const Vector& b = s_.linearization().offsets();
  const Index m = static_cast<Index>(order_.size());
#pragma omp parallel for schedule(static) if (m > detail::kParallelWork)
  for (Index q = 0; q < m; ++q) {
    Term& t = terms_[static_cast<std::size_t>(q)];
    const Index h = order_[static_cast<std::size_t>(q)];
    // D(nu) along nu_h has curvature -q_h (docs/method.md section 3.9).
    double q2;
    if (distance) {  // <P_h, B^-1 P_h> = c^2 |x_i - x_j|^2 (1 / B_ii + 1 / B_jj)
      t.c = w[h];
      q2 = 0.5 * t.c * t.c * (X.row(t.i) - X.row(t.j)).squaredNorm() * (inv_b_[t.i] + inv_b_[t.j]);
    } else if (t.i == t.j) {
      t.c = w[h];
      q2 = 0.5 * t.c * t.c * norms[t.i] * inv_b_[t.i];
    } else {
      t.c = 0.5 * w[h];
      q2 = 0.5 * t.c * t.c * (norms[t.j] * inv_b_[t.i] + norms[t.i] * inv_b_[t.j]);
    }
    t.b = b[h];
    t.inv_q = q2 > 0.0 ? 1.0 / q2 : 0.0;
  }
  sweeps_ = 0;
  token_ = next_token();  // X_k, B, G and P changed: every state's M is stale
}

void DualCoordinate::restore(const std::string& saved, Surrogate&, double, Matrix&) {
  // The state's nu is all this step carries. A checkpoint of the linearised or CG step on the same
  // exact surrogate (written before this step was the automatic one) holds their warm start: it
  // is of no use here, and the run goes on from the checkpoint's nu.
  CgWarmStart warm;
  if (!saved.empty() && !decode(saved, &warm))
    throw Error("solver", "the saved Xt-step state (" + std::to_string(saved.size()) +
                              " bytes) is not one of this model's Xt-step (" + name() + ")");
}

void DualCoordinate::solve(const Matrix&, Matrix&, double, long*) {
  throw std::logic_error(name() + ": solve() of the dual coordinate step");
}

namespace {
// The coordinate step of one term: nu_h maximises D(nu) along its coordinate (docs/method.md
// section 3.9); M's rows i and j follow. R: the rank (detail::with_rank).
template <int R, PairFamily F, class Term>
inline void coordinate_step(const Term& t, const Matrix& X, const double* inv_b, Matrix& M, double& nu) {
  using Row = Eigen::Matrix<double, 1, R>;
  const Index r = X.cols();
  Eigen::Map<const Row> xi(X.row(t.i).data(), r), xj(X.row(t.j).data(), r);
  Eigen::Map<Row> mi(M.row(t.i).data(), r), mj(M.row(t.j).data(), r);
  if constexpr (F == PairFamily::kDistance) {
    // P_h = c (e_i - e_j) u^T, u = x_i - x_j (i != j).
    const Row u = xi - xj;
    const double g = t.b - 0.5 * t.c * (u.dot(mi) * inv_b[t.i] - u.dot(mj) * inv_b[t.j]);
    const double next = t.inv_q > 0.0 ? std::clamp(nu + g * t.inv_q, -2.0, 2.0)
                                      : t.b > 0.0 ? 2.0 : t.b < 0.0 ? -2.0 : nu;  // as below
    const double delta = next - nu;
    if (delta == 0.0) return;
    nu = next;
    mi += (delta * t.c) * u;
    mj -= (delta * t.c) * u;
    return;
  }
  const bool diagonal = t.i == t.j;
  // The slope of D(nu) along nu_h.
  const double g = diagonal ? t.b - 0.5 * t.c * xi.dot(mi) * inv_b[t.i]
                            : t.b - 0.5 * t.c * (xj.dot(mi) * inv_b[t.i] + xi.dot(mj) * inv_b[t.j]);
  double next;
  if (t.inv_q > 0.0)
    next = std::clamp(nu + g * t.inv_q, -2.0, 2.0);
  else  // D(nu) linear in nu_h (P_h = 0): its maximum is at the bound on b_h's side
    next = t.b > 0.0 ? 2.0 : t.b < 0.0 ? -2.0 : nu;
  const double delta = next - nu;
  if (delta == 0.0) return;
  nu = next;
  if (diagonal) {
    mi += (delta * t.c) * xi;
  } else {
    mi += (delta * t.c) * xj;
    mj += (delta * t.c) * xi;
  }
}

// <P_h, U>: entry terms c (x_j . U_i + x_i . U_j), or c x_i . U_i when i = j; distance terms
// c (x_i - x_j) . (U_i - U_j). One term's P applied to U.
template <int R, PairFamily F, class Term>
inline double term_product(const Term& t, const Matrix& X, const Matrix& U) {
  using Row = Eigen::Matrix<double, 1, R>;
  const Index r = X.cols();
  Eigen::Map<const Row> xi(X.row(t.i).data(), r), xj(X.row(t.j).data(), r);
  Eigen::Map<const Row> ui(U.row(t.i).data(), r), uj(U.row(t.j).data(), r);
  if constexpr (F == PairFamily::kDistance) return t.c * (xi - xj).dot(ui - uj);
  return t.i == t.j ? t.c * ui.dot(xi) : t.c * (ui.dot(xj) + uj.dot(xi));
}
}  // namespace

template <int R, PairFamily F>
void DualCoordinate::sweep_bucket(Index k, Matrix& M) const {
  const Matrix& X = lin_.point();
  for (Index q = bucket_ptr_[static_cast<std::size_t>(k)]; q < bucket_ptr_[static_cast<std::size_t>(k) + 1]; ++q)
    coordinate_step<R, F>(terms_[static_cast<std::size_t>(q)], X, inv_b_.data(), M, nu_[q]);
}

template <int R, PairFamily F>
void DualCoordinate::sweep_two_buckets(Index k, Index l, Matrix& M) const {
  const Matrix& X = lin_.point();
  Index p = bucket_ptr_[static_cast<std::size_t>(k)], q = bucket_ptr_[static_cast<std::size_t>(l)];
  const Index p_end = bucket_ptr_[static_cast<std::size_t>(k) + 1], q_end = bucket_ptr_[static_cast<std::size_t>(l) + 1];
  for (; p < p_end && q < q_end; ++p, ++q) {
    coordinate_step<R, F>(terms_[static_cast<std::size_t>(p)], X, inv_b_.data(), M, nu_[p]);
    coordinate_step<R, F>(terms_[static_cast<std::size_t>(q)], X, inv_b_.data(), M, nu_[q]);
  }
  for (; p < p_end; ++p) coordinate_step<R, F>(terms_[static_cast<std::size_t>(p)], X, inv_b_.data(), M, nu_[p]);
  for (; q < q_end; ++q) coordinate_step<R, F>(terms_[static_cast<std::size_t>(q)], X, inv_b_.data(), M, nu_[q]);
}

template <int R, PairFamily F>
void DualCoordinate::sums_bucket(Index k, const Matrix& D, double* terms, double* nu_b) const {
  const Matrix& X = lin_.point();
  double sum = 0.0, nb = 0.0;
  for (Index q = bucket_ptr_[static_cast<std::size_t>(k)]; q < bucket_ptr_[static_cast<std::size_t>(k) + 1]; ++q) {
    const Term& t = terms_[static_cast<std::size_t>(q)];
    sum += std::abs(term_product<R, F>(t, X, D) + t.b);
    nb += nu_[q] * t.b;
  }
  *terms = sum;
  *nu_b = nb;
}

template <int R, PairFamily F>
void DualCoordinate::free_adjoint(const Vector& v, Matrix& U, bool parallel) const {
  using Row = Eigen::Matrix<double, 1, R>;
  const Matrix& X = lin_.point();
  const Index r = X.cols();
  U.setZero(X.rows(), r);
  const Index rounds = static_cast<Index>(round_ptr_.size()) - 1;
  // Round by round, as a sweep: the buckets of a round share no row, so each row of U sums its
  // terms in one order for any thread count. Within a bucket the terms come by row (as the
  // model's terms do; matrix completion's are sorted): row i's run is summed in registers and
  // added once, as U_i += at every term chained each addition to the previous store.
#pragma omp parallel if (parallel)
  for (Index t = 0; t < rounds; ++t) {
#pragma omp for schedule(dynamic, 1)
    for (Index k = round_ptr_[static_cast<std::size_t>(t)]; k < round_ptr_[static_cast<std::size_t>(t) + 1]; ++k) {
      const Index begin = free_ptr_[static_cast<std::size_t>(k)], end = free_ptr_[static_cast<std::size_t>(k) + 1];
      if (begin == end) continue;
      const Term* terms = free_terms_.data();
      Index row = terms[begin].i;
      Row run = Row::Zero(r);
      for (Index p = begin; p < end; ++p) {
        const Term& term = terms[p];
        const double a = v[p] * term.c;
        if (term.i != row) {
          Eigen::Map<Row>(U.row(row).data(), r) += run;
          run.setZero();
          row = term.i;
        }
        if constexpr (F == PairFamily::kDistance) {
          const Row u = Eigen::Map<const Row>(X.row(term.i).data(), r) - Eigen::Map<const Row>(X.row(term.j).data(), r);
          run += a * u;
          Eigen::Map<Row>(U.row(term.j).data(), r) -= a * u;
        } else if (term.i == term.j) {
          run += a * Eigen::Map<const Row>(X.row(term.i).data(), r);
        } else {
          run += a * Eigen::Map<const Row>(X.row(term.j).data(), r);
          Eigen::Map<Row>(U.row(term.j).data(), r) += a * Eigen::Map<const Row>(X.row(term.i).data(), r);
        }
      }
      Eigen::Map<Row>(U.row(row).data(), r) += run;
    }
  }
}

template <int R, PairFamily F>
void DualCoordinate::free_forward(const Matrix& U, Vector& out, bool parallel) const {
  const Matrix& X = lin_.point();
  const Index f = static_cast<Index>(free_.size());
  out.resize(f);
#pragma omp parallel for schedule(static) if (parallel)
  for (Index p = 0; p < f; ++p)
    out[p] = term_product<R, F>(free_terms_[static_cast<std::size_t>(p)], X, U);
}

template <int R, PairFamily F>
void DualCoordinate::subspace_step(Matrix& M, bool parallel) const {
  // The free multipliers F (inside the box, with curvature), in schedule order, bucket by bucket.
  const Index buckets = static_cast<Index>(bucket_ptr_.size()) - 1;
  free_.clear();
  free_ptr_.assign(static_cast<std::size_t>(buckets) + 1, 0);
  for (Index k = 0; k < buckets; ++k) {
    for (Index q = bucket_ptr_[static_cast<std::size_t>(k)]; q < bucket_ptr_[static_cast<std::size_t>(k) + 1]; ++q)
      if (terms_[static_cast<std::size_t>(q)].inv_q > 0.0 && std::abs(nu_[q]) < 2.0)
        free_.push_back(static_cast<std::int32_t>(q));
    free_ptr_[static_cast<std::size_t>(k) + 1] = static_cast<Index>(free_.size());
  }
  const Index f = static_cast<Index>(free_.size()), n = M.rows();
  if (f == 0) return;
  parallel = parallel && f * M.cols() > detail::kParallelWork;
  // The free terms gathered once: CG's 2 x subspace_iterations products then stream them (read
  // through free_, each was a cache miss into the schedule: 3.5 ms a subspace step, 30% of the
  // quickstart's coupled run at m = 2000, for 10000 free terms of 152k).
  free_terms_.resize(static_cast<std::size_t>(f));
  for (Index p = 0; p < f; ++p) free_terms_[static_cast<std::size_t>(p)] = terms_[static_cast<std::size_t>(free_[static_cast<std::size_t>(p)])];
  const auto term = [&](Index p) -> const Term& { return free_terms_[static_cast<std::size_t>(p)]; };
  // D's slope on F, g = b_F - (1/2) P_F B^-1 M, and its Hessian there, -K with
  // K v = (1/2) P_F B^-1 P_F^* v, whose diagonal is q (docs/method.md section 3.9).
  Matrix U = inv_b_.asDiagonal() * M;
  Vector g;
  free_forward<R, F>(U, g, parallel);
  for (Index p = 0; p < f; ++p) g[p] = term(p).b - 0.5 * g[p];
  // K d = g by CG preconditioned with 1 / q, from d = 0: the Newton step of D on F.
  Vector d = Vector::Zero(f), res = g, z(f), dir(f), Kdir(f);
  for (Index p = 0; p < f; ++p) z[p] = res[p] * term(p).inv_q;
  dir = z;
  double rz = res.dot(z);
  for (int it = 0; it < options_.subspace_iterations && rz > 0.0; ++it) {
    free_adjoint<R, F>(dir, U, parallel);
    U = inv_b_.asDiagonal() * U;
    free_forward<R, F>(U, Kdir, parallel);
    Kdir *= 0.5;
    const double curvature = dir.dot(Kdir);
    if (!(curvature > 0.0)) break;  // D is flat along dir: K is only semidefinite
    const double a = rz / curvature;
    d += a * dir;
    res -= a * Kdir;
    for (Index p = 0; p < f; ++p) z[p] = res[p] * term(p).inv_q;
    const double rz_next = res.dot(z);
    dir = z + (rz_next / rz) * dir;
    rz = rz_next;
  }
  // delta: to the box's projection of nu_F + d; then the step s delta, s in [0, 1] (inside the
  // box), that maximises D along it: D(nu + s delta) - D(nu) = s <g, delta> - s^2 <W, B^-1 W> / 4
  // with W = P_F^* delta. D never falls, so the coordinate ascent's convergence is kept.
  Vector& delta = d;
  for (Index p = 0; p < f; ++p) {
    const double nu = nu_[free_[static_cast<std::size_t>(p)]];
    delta[p] = std::clamp(nu + d[p], -2.0, 2.0) - nu;
  }
  const double rise = g.dot(delta);
  if (!(rise > 0.0)) return;
  free_adjoint<R, F>(delta, U, parallel);
  double quad = 0.0;
  for (Index i = 0; i < n; ++i) quad += 0.25 * inv_b_[i] * U.row(i).squaredNorm();
  const double s = quad > 0.0 ? std::min(1.0, rise / (2.0 * quad)) : 1.0;
  M += s * U;
  for (Index p = 0; p < f; ++p) nu_[free_[static_cast<std::size_t>(p)]] += s * delta[p];
}

// One sweep over all terms in the schedule's rounds (nu in the terms' order in, nu_ in schedule
// order out). (Member templates, not lambdas: clang's OpenMP cannot capture `this` in a parallel
// region of a nested generic lambda.)
template <int R, PairFamily F>
void DualCoordinate::sweep(const Vector& nu, Matrix& M, bool parallel) const {
  const Index m = static_cast<Index>(order_.size());
  const Index rounds = static_cast<Index>(round_ptr_.size()) - 1;
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (Index q = 0; q < m; ++q) nu_[q] = nu[order_[static_cast<std::size_t>(q)]];
    for (Index t = 0; t < rounds; ++t) {
      // The buckets of a round share no row: any thread may take any of them, two at a time.
      const Index first = round_ptr_[static_cast<std::size_t>(t)], count = round_ptr_[static_cast<std::size_t>(t) + 1] - first;
#pragma omp for schedule(dynamic, 1)
      for (Index k = 0; k < count; k += 2) {
        if (k + 1 < count)
          sweep_two_buckets<R, F>(first + k, first + k + 1, M);
        else
          sweep_bucket<R, F>(first + k, M);
      }
    }
  }
}

template <int R, PairFamily F>
void DualCoordinate::sums(const Matrix& D, double* terms, double* nu_b, bool parallel) const {
  const Index buckets = static_cast<Index>(bucket_ptr_.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
  for (Index k = 0; k < buckets; ++k) sums_bucket<R, F>(k, D, terms + k, nu_b + k);
}

void DualCoordinate::bound_step(Matrix& M, Matrix& mu, Matrix* D, bool parallel) const {
  // Given nu, D(nu, mu) is separable in the rows of mu: row i maximises
  //   <mu_i, x_i> - sigma(mu_i) - |M0_i + mu_i|^2 / (4 B_ii),   M0 = M - mu,
  // the dual of projecting z_i = x_i - M0_i / (2 B_ii) onto the row's set, so mu_i = 2 B_ii (z_i - y_i)
  // with y_i = proj(z_i) (in the polar cone for a cone: z - proj(z) is exact there), and the primal
  // point D_i = y_i - x_i is feasible (docs/method.md section 3.9). A row with B_ii = 0 has D_i = 0.
  const ConvexConstraint& K = *s_.model().constraint;
  const Matrix& X = s_.center();
  const Vector& B = s_.b_diagonal();
  const Index n = X.rows(), r = X.cols();
#pragma omp parallel if (parallel)
  {
    Matrix m0(1, r), z(1, r), y(1, r);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      if (!(inv_b_[i] > 0.0)) {
        M.row(i) -= mu.row(i);
        mu.row(i).setZero();
        if (D) D->row(i).setZero();
        continue;
      }
      m0 = M.row(i) - mu.row(i);
      z = X.row(i) - (0.5 * inv_b_[i]) * m0;
      y = z;
      K.project(y);
      mu.row(i) = (2.0 * B[i]) * (z - y);
      M.row(i) = m0 + mu.row(i);
      if (D) D->row(i) = y - X.row(i);
    }
  }
}

bool DualCoordinate::iterate_rows(AdmmState& st, double, double) {
  const TermLinearization& lin = s_.linearization();
  const Index n = s_.rows(), r = s_.rank(), m = lin.size();
  if (st.nu.size() != m) st.nu.setZero(m);
  // M = G + P*(nu), carried in st.Pnu from sweep to sweep, afresh after each prepare() or after
  // nu was changed by hand (adjoint_generation = 0).
  const Index buckets = static_cast<Index>(bucket_ptr_.size()) - 1;
  // A sweep has one barrier per round: below kParallelSweep the rounds are too short to share
  // (the quickstart, m = 31k terms, rank 5: no faster on two threads; m = 152k: 1.7x).
  const bool parallel = m * r > kParallelSweep && buckets > 1;
  // Under a constraint M = G + P*(nu) + mu, with mu the best for nu (bound_step).
  const bool constrained = s_.model().constraint != nullptr;
  if (st.adjoint_generation != token_ || st.Pnu.rows() != n || st.Pnu.cols() != r) {
    lin.apply_adjoint(st.nu, st.Pnu);
    st.Pnu += s_.G();
    st.adjoint_generation = token_;
    if (constrained) {
      st.mu.setZero(n, r);
      bound_step(st.Pnu, st.mu, nullptr, parallel);
    }
  }
  Matrix& M = st.Pnu;
  nu_.resize(m);
  const PairFamily family = lin_.family();
  detail::with_rank(r, [&](auto R) {
    with_family(family, [&](auto Fam) { sweep<decltype(R)::value, decltype(Fam)::value>(st.nu, M, parallel); });
  });
  // The subspace step after each sweep but an MM step's first: loose steps end after one sweep,
  // and there the free set is not yet the optimum's. (Under a constraint each moves nu with mu
  // held, and mu follows: block coordinate ascent, D never falls.)
  if (constrained) bound_step(M, st.mu, nullptr, parallel);
  if (options_.subspace_iterations > 0 && ++sweeps_ >= 2) {
    detail::with_rank(r, [&](auto R) {
      with_family(family, [&](auto Fam) { subspace_step<decltype(R)::value, decltype(Fam)::value>(M, parallel); });
    });
    if (constrained) bound_step(M, st.mu, nullptr, parallel);
  }
  // Back in the terms' order, each thread writing its own range of st.nu (a scatter through
  // order_ would have the threads write to the same cache lines).
#pragma omp parallel for schedule(static) if (parallel)
  for (Index h = 0; h < m; ++h) st.nu[h] = nu_[position_[static_cast<std::size_t>(h)]];
  // The primal point of nu and the gap: under a constraint the feasible point of the last mu, for
  // which mu is the best (X_k + D in K exactly: rounding is monotone).
  if (constrained) {
    st.D.resize(n, r);
    bound_step(M, st.mu, &st.D, parallel);
  } else {
    st.D = -0.5 * (inv_b_.asDiagonal() * M);
  }
  st.step = st.D;
  std::vector<double> terms(static_cast<std::size_t>(buckets)), nu_b(static_cast<std::size_t>(buckets));
  detail::with_rank(r, [&](auto R) {
    with_family(family, [&](auto Fam) {
      sums<decltype(R)::value, decltype(Fam)::value>(st.D, terms.data(), nu_b.data(), parallel);
    });
  });
  double term_sum = 0.0, nub = 0.0;
  for (Index k = 0; k < buckets; ++k) {  // in bucket order, for any thread count
    term_sum += terms[static_cast<std::size_t>(k)];
    nub += nu_b[static_cast<std::size_t>(k)];
  }
  double quad = 0.0;
  for (Index i = 0; i < n; ++i) quad += M.row(i).squaredNorm() * inv_b_[i];
  st.primal = s_.value_given_terms(st.D, term_sum);
  st.dual = s_.c() + nub - 0.25 * quad;
  if (constrained) st.dual += st.mu.cwiseProduct(s_.center()).sum() - s_.model().constraint->support(st.mu);
  st.gap = st.primal - st.dual;
  return true;
}

}  // namespace sdprl::xt_step
