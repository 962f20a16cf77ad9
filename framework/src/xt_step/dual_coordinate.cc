// The kDualCoordinate strategy (xt_step/dual_coordinate.h; docs/method.md section 3.9).
#include "xt_step/dual_coordinate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "mm/surrogate.h"
#include "rows/row_blocks.h"
#include "terms/entry_linearization.h"

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
}  // namespace

const detail::EntryLinearization* DualCoordinate::entry_terms(const TermLinearization& lin) {
  const auto* entry = dynamic_cast<const detail::EntryLinearization*>(&lin);
  return entry && entry->mode() == SplitMode::kCoupled ? entry : nullptr;
}

DualCoordinate::DualCoordinate(const Surrogate& surrogate, const AdmmOptions& options,
                               const detail::EntryLinearization& lin)
    : XtStep(surrogate, options), lin_(lin) {
  const EntryTerms& terms = lin.terms();
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
}

void DualCoordinate::prepare(double, bool) {
  if (!s_.b_is_diagonal()) throw std::logic_error("DualCoordinate: B is not diagonal");
  inv_b_ = s_.b_diagonal().cwiseInverse();
  norms_ = lin_.point().rowwise().squaredNorm();
  token_ = next_token();  // X_k, B, G and P changed: every state's M is stale
}

void DualCoordinate::solve(const Matrix&, Matrix&, double, long*) {
  throw std::logic_error(name() + ": solve() of the dual coordinate step");
}

template <int R>
void DualCoordinate::sweep_buckets(Index begin, Index end, Matrix& M, Vector& nu) const {
  const auto& rows = lin_.terms().rows();
  const auto& cols = lin_.terms().cols();
  const Vector& w = lin_.term_scales();
  const Vector& b = lin_.offsets();
  const Matrix& X = lin_.point();
  const Index r = X.cols();
  using Row = Eigen::Matrix<double, 1, R>;
  for (Index q = bucket_ptr_[static_cast<std::size_t>(begin)]; q < bucket_ptr_[static_cast<std::size_t>(end)]; ++q) {
    const Index h = order_[static_cast<std::size_t>(q)];
    const Index i = rows[static_cast<std::size_t>(h)], j = cols[static_cast<std::size_t>(h)];
    const double s = w[h];
    Eigen::Map<const Row> xi(X.row(i).data(), r), xj(X.row(j).data(), r);
    Eigen::Map<Row> mi(M.row(i).data(), r), mj(M.row(j).data(), r);
    // D(nu) along nu_h: slope g at the current nu_h and curvature -q (docs/method.md section 3.9).
    double g, q2;
    if (i == j) {  // P_h = w e_i x_i^T
      g = b[h] - 0.5 * s * xi.dot(mi) * inv_b_[i];
      q2 = 0.5 * s * s * norms_[i] * inv_b_[i];
    } else {  // P_h = (w / 2)(e_i x_j^T + e_j x_i^T)
      g = b[h] - 0.25 * s * (xj.dot(mi) * inv_b_[i] + xi.dot(mj) * inv_b_[j]);
      q2 = 0.125 * s * s * (norms_[j] * inv_b_[i] + norms_[i] * inv_b_[j]);
    }
    double next;
    if (q2 > 0.0)
      next = std::clamp(nu[h] + g / q2, -2.0, 2.0);
    else  // D(nu) linear in nu_h (P_h = 0): its maximum is at the bound on b_h's side
      next = b[h] > 0.0 ? 2.0 : b[h] < 0.0 ? -2.0 : nu[h];
    const double delta = next - nu[h];
    if (delta == 0.0) continue;
    nu[h] = next;
    if (i == j) {
      mi += (delta * s) * xi;
    } else {
      mi += (0.5 * delta * s) * xj;
      mj += (0.5 * delta * s) * xi;
    }
  }
}

template <int R>
void DualCoordinate::sums_buckets(Index begin, Index end, const Matrix& D, const Vector& nu, double* terms,
                                  double* nu_b) const {
  const auto& rows = lin_.terms().rows();
  const auto& cols = lin_.terms().cols();
  const Vector& w = lin_.term_scales();
  const Vector& b = lin_.offsets();
  const Matrix& X = lin_.point();
  const Index r = X.cols();
  using Row = Eigen::Matrix<double, 1, R>;
  double t = 0.0, nb = 0.0;
  for (Index q = bucket_ptr_[static_cast<std::size_t>(begin)]; q < bucket_ptr_[static_cast<std::size_t>(end)]; ++q) {
    const Index h = order_[static_cast<std::size_t>(q)];
    const Index i = rows[static_cast<std::size_t>(h)], j = cols[static_cast<std::size_t>(h)];
    Eigen::Map<const Row> xi(X.row(i).data(), r), xj(X.row(j).data(), r);
    Eigen::Map<const Row> di(D.row(i).data(), r), dj(D.row(j).data(), r);
    const double pd = i == j ? w[h] * di.dot(xi) : 0.5 * w[h] * (di.dot(xj) + dj.dot(xi));
    t += std::abs(pd + b[h]);
    nb += nu[h] * b[h];
  }
  *terms = t;
  *nu_b = nb;
}

bool DualCoordinate::iterate_rows(AdmmState& st, double) {
  const TermLinearization& lin = s_.linearization();
  const Index n = s_.rows(), r = s_.rank(), m = lin.size();
  if (st.nu.size() != m) st.nu.setZero(m);
  // M = G + P*(nu), carried in st.Pnu from sweep to sweep, afresh after each prepare() or after
  // nu was changed by hand (adjoint_generation = 0).
  if (st.adjoint_generation != token_ || st.Pnu.rows() != n || st.Pnu.cols() != r) {
    lin.apply_adjoint(st.nu, st.Pnu);
    st.Pnu += s_.G();
    st.adjoint_generation = token_;
  }
  Matrix& M = st.Pnu;
  const Index buckets = static_cast<Index>(bucket_ptr_.size()) - 1;
  const Index rounds = static_cast<Index>(round_ptr_.size()) - 1;
  const bool parallel = m * r > detail::kParallelWork && buckets > 1;
  detail::with_rank(r, [&](auto R) {
    constexpr int kR = decltype(R)::value;
#pragma omp parallel if (parallel)
    for (Index t = 0; t < rounds; ++t) {
      // The buckets of a round share no row: any thread may take any of them.
#pragma omp for schedule(dynamic, 1)
      for (Index k = round_ptr_[static_cast<std::size_t>(t)]; k < round_ptr_[static_cast<std::size_t>(t) + 1]; ++k)
        sweep_buckets<kR>(k, k + 1, M, st.nu);
    }
  });
  // The primal point of nu and the gap.
  st.D = -0.5 * (inv_b_.asDiagonal() * M);
  st.step = st.D;
  std::vector<double> terms(static_cast<std::size_t>(buckets)), nu_b(static_cast<std::size_t>(buckets));
  detail::with_rank(r, [&](auto R) {
    constexpr int kR = decltype(R)::value;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (Index k = 0; k < buckets; ++k)
      sums_buckets<kR>(k, k + 1, st.D, st.nu, &terms[static_cast<std::size_t>(k)], &nu_b[static_cast<std::size_t>(k)]);
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
  st.gap = st.primal - st.dual;
  return true;
}

}  // namespace sdprl::xt_step
