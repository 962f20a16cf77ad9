// The fused row-split ADMM iteration (formulas in row_kernel.h). The rank r is a template
// parameter for r <= 8 and r = 10 (detail::with_rank), so that the per-term dot products and
// updates of r doubles are unrolled and vectorised; other ranks take the same code with
// Eigen::Dynamic.
#include "admm/row_kernel.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "parallel/processes.h"

namespace sdprl::detail {
namespace {

constexpr Index kChunk = kRowChunk;

// Per-thread work space of one row: a_h component-major (r x deg) and two length-deg vectors.
// `work` is an Eigen vector for its alignment (EIGEN_MAX_ALIGN_BYTES), as in Admm::RowStep: the
// dynamic-rank kernel's whole-array expressions peel unaligned heads off as scalar code, whose
// FMA contractions may differ from the vector body's, so both callers must hand it equally
// aligned buffers to get bitwise the same iterates.
struct RowBuffers {
  std::vector<double> a;
  Eigen::VectorXd work;
  explicit RowBuffers(const RowKernel& k)
      : a(static_cast<std::size_t>(std::max<Index>(k.max_degree, 1) * k.r)),
        work(2 * std::max<Index>(k.max_degree, 1)) {}
};

// Row i of one iteration (formulas in row_kernel.h, on the packed state u). Not inlined:
// fused_iteration() and Admm::update_and_iterate() call this one function, so that their iterates
// agree bit for bit (an inlined copy could be contracted into FMAs differently).
//
// For a fixed rank the row's terms are read in two passes of eight terms at a time, each with its
// sums in registers: (1) y_h and sum_h y_h a_h; (2) v_h, the e- and nu-steps and the gap's sums.
// The row's data (a, u, b) is read twice, not once per formula as in the generic form below
// (some 4 r + 8 passes over the row): 17% less time per ADMM iteration at m = 10^4, rank 5.
// Row i of the constraint split's Y: its projection, through a 1 x r matrix per thread (the
// constraint's project() takes a Matrix; a row-independent one projects the row alone).
void project_row(const ConvexConstraint& constraint, double* y, Index r) {
  thread_local Matrix row;
  row = Eigen::Map<const Matrix>(y, 1, r);
  constraint.project(row);
  Eigen::Map<Matrix>(y, 1, r) = row;
}

// kSplit: with the constraint split of RowKernel::constraint (row_kernel.h); without it the code
// is the unconstrained pass, bit for bit.
template <int R, bool kSplit>
[[gnu::noinline]] RowSums iterate_one(const RowKernel& k, Index i, const double* a, double bii, const double* inverse,
                                      double* work, double* u_all, double* D) {
  using Vec = Eigen::Matrix<double, R, 1>;
  using Mat = Eigen::Matrix<double, R, R, Eigen::RowMajor>;
  const Index r = k.r;
  const double rho = k.rho;
  const Index p0 = k.offsets[i], deg = k.offsets[i + 1] - p0;
  const Eigen::Map<const Vec> g(k.G->data() + i * r, r);
  double* u_row = u_all + p0;
  const double* b_row = k.b + p0;
  // Locals (not views of memory), so that the compiler may keep them in registers.
  Vec acc(r), m(r), dl(r), sv(r);
  RowSums row;
  // d_i = K_i^{-1} acc, and with the constraint split the Y- and mu-steps; sv = the feasible step
  // s_i = Y_i - x_i (d_i without a constraint), at which the gap's primal value is taken.
  auto xt_step = [&]() {
    if constexpr (kSplit) {
      const Eigen::Map<const Vec> x(k.center + i * r, r);
      Eigen::Map<Vec> mu(k.mu + i * r, r), y(k.Y + i * r, r);
      acc -= mu + k.rho_k * (x - y);
      dl.noalias() = Eigen::Map<const Mat>(inverse, r, r) * acc;
      // z = x + d + mu / rho_k in sv's storage (no vector of its own: at a dynamic rank each one
      // is an allocation per row), then Y = proj(z) and mu = rho_k (z - Y), not mu + rho_k
      // (x + d - Y): exact in floating point for a cone (Admm::step).
      sv = x + dl + mu / k.rho_k;
      y = sv;
      project_row(*k.constraint, k.Y + i * r, r);
      mu = k.rho_k * (sv - y);
      sv = y - x;
      Eigen::Map<Vec>(k.step + i * r, r) = sv;
      row.mu_x = mu.dot(x);
    } else {
      dl.noalias() = Eigen::Map<const Mat>(inverse, r, r) * acc;
      sv = dl;
    }
    Eigen::Map<Vec>(D + i * r, r) = dl;
  };
  if constexpr (R != Eigen::Dynamic) {
    using Map = Eigen::Map<Lanes>;
    using ConstMap = Eigen::Map<const Lanes>;
    const Index full = deg - deg % 8;
    // Pass 1, Xt-step: y_h = rho b_h + 2 nu_h - u_h;  d_i = K_i^{-1} (-G_i - sum_h y_h a_h).
    Lanes sum_lanes[R];
    for (Lanes& l : sum_lanes) l.setZero();
    for (Index q = 0; q < full; q += 8) {
      const Lanes u = ConstMap(u_row + q);
      const Lanes y = rho * ConstMap(b_row + q) + 2.0 * clamp_nu(u) - u;
      for (int c = 0; c < R; ++c) sum_lanes[c] += y * ConstMap(a + c * deg + q);
    }
    double tail[R] = {};
    for (Index q = full; q < deg; ++q) {
      const double u = u_row[q];
      const double y = rho * b_row[q] + 2.0 * clamp_nu(u) - u;
      for (int c = 0; c < R; ++c) tail[c] += y * a[c * deg + q];
    }
    for (int c = 0; c < R; ++c) acc[c] = -g[c] - add_lanes(sum_lanes[c], tail[c]);
    xt_step();
    // Pass 2: v_h = <d_i, a_h> + b_h; the e- and nu-steps u_h <- rho v_h + nu_h, nu_h <- clamp(u_h)
    // (branch-free); the gap's |v|, <nu, b> and M_i = G_i + sum_h nu_h a_h.
    Lanes abs_lanes = Lanes::Zero(), nub_lanes = Lanes::Zero();
    for (Lanes& l : sum_lanes) l.setZero();
    for (Index q = 0; q < full; q += 8) {
      const Lanes b = ConstMap(b_row + q);
      Lanes v = b;
      for (int c = 0; c < R; ++c) v += dl[c] * ConstMap(a + c * deg + q);
      const Lanes u = rho * v + clamp_nu(ConstMap(u_row + q));
      const Lanes nu = clamp_nu(u);
      Map(u_row + q) = u;
      if constexpr (kSplit) {
        Lanes w = b;
        for (int c = 0; c < R; ++c) w += sv[c] * ConstMap(a + c * deg + q);
        abs_lanes += w.abs();
      } else {
        abs_lanes += v.abs();
      }
      nub_lanes += nu * b;
      for (int c = 0; c < R; ++c) sum_lanes[c] += nu * ConstMap(a + c * deg + q);
    }
    double abs_tail = 0.0, nub_tail = 0.0;
    for (int c = 0; c < R; ++c) tail[c] = 0.0;
    for (Index q = full; q < deg; ++q) {
      double v = b_row[q];
      for (int c = 0; c < R; ++c) v += dl[c] * a[c * deg + q];
      const double u = rho * v + clamp_nu(u_row[q]);
      const double nu = clamp_nu(u);
      u_row[q] = u;
      if constexpr (kSplit) {
        double w = b_row[q];
        for (int c = 0; c < R; ++c) w += sv[c] * a[c * deg + q];
        abs_tail += std::abs(w);
      } else {
        abs_tail += std::abs(v);
      }
      nub_tail += nu * b_row[q];
      for (int c = 0; c < R; ++c) tail[c] += nu * a[c * deg + q];
    }
    row.absolute = add_lanes(abs_lanes, abs_tail);
    row.nu_b = add_lanes(nub_lanes, nub_tail);
    for (int c = 0; c < R; ++c) m[c] = g[c] + add_lanes(sum_lanes[c], tail[c]);
    static_cast<void>(work);
  } else {
    using Arr = Eigen::Map<Eigen::ArrayXd>;
    using ConstArr = Eigen::Map<const Eigen::ArrayXd>;
    Arr u(u_row, deg), y(work, deg), v(work + deg, deg);
    const ConstArr b(b_row, deg);
    // a_h component by component: column c of the row's (deg x r) matrix is contiguous.
    // (a may be nullptr when deg = 0: the maps are then empty and their sums 0.)
    auto column = [a, deg](Index c) { return ConstArr(a + c * deg, deg); };
    // The same formulas as the fixed-rank passes, one whole-array expression at a time.
    y = rho * b + 2.0 * clamp_nu(u) - u;
    for (Index c = 0; c < r; ++c) acc[c] = -g[c] - (y * column(c)).sum();
    xt_step();
    v = b;
    for (Index c = 0; c < r; ++c) v += dl[c] * column(c);
    u = rho * v + clamp_nu(u);
    y = clamp_nu(u);  // nu, in y's storage
    if constexpr (kSplit) {  // v: the residuals at the feasible step, for the primal value
      v = b;
      for (Index c = 0; c < r; ++c) v += sv[c] * column(c);
    }
    row.absolute = v.abs().sum();
    row.nu_b = (y * b).sum();
    for (Index c = 0; c < r; ++c) m[c] = g[c] + (y * column(c)).sum();
  }
  if constexpr (kSplit) m += Eigen::Map<const Vec>(k.mu + i * r, r);
  row.quadratic = bii * sv.squaredNorm() + g.dot(sv);
  // B_ii = 0: no term and no regularizer on row i, M_i = 0 there (the pseudo-inverse of B).
  if (bii > 0.0) row.m_binv_m = m.squaredNorm() / bii;
  return row;
}

// iterate_one() with or without the constraint split, as the kernel has one.
template <int R>
RowSums iterate_any(const RowKernel& k, Index i, const double* a, double bii, const double* inverse, double* work,
                    double* u_all, double* D) {
  return k.constraint ? iterate_one<R, true>(k, i, a, bii, inverse, work, u_all, D)
                      : iterate_one<R, false>(k, i, a, bii, inverse, work, u_all, D);
}

template <int R>
void iterate_rows(const RowKernel& k, Index begin, Index end, RowBuffers& w, double* u_all, double* D,
                  RowSums& sums) {
  const Index r = k.r;
  const bool prefetch = k.offsets[k.n] > kPrefetchSplitTerms;
  for (Index i = begin; i < end; ++i) {
    // The row's u and b are read only after its a_h are gathered: asking for their cache lines
    // first lets the gather (bound by the latency of its random reads of X) hide their transfer.
    if (prefetch) {
      for (Index p = k.offsets[i]; p < k.offsets[i + 1]; p += 8) {
        __builtin_prefetch(u_all + p, 1);
        __builtin_prefetch(k.b + p);
      }
    }
    if (k.offsets[i + 1] > k.offsets[i]) k.rows->row_vectors(i, w.a.data());
    sums.add(iterate_any<R>(k, i, w.a.data(), (*k.b_diagonal)[i], k.inverse_blocks + i * r * r, w.work.data(),
                            u_all, D));
  }
}

static_assert(sizeof(RowSums) == 5 * sizeof(double), "RowSums is shared between processes as 5 doubles");

// The per-chunk partial sums `partial` of the chunks this process iterated, shared with the other
// processes, added in chunk order: the same total for any number of processes and threads.
RowSums chunk_total(std::vector<RowSums>& partial, const RowShares& shares) {
  processes::share_items(reinterpret_cast<double*>(partial.data()), shares.chunks, 5);
  RowSums total;
  for (const RowSums& s : partial) total.add(s);
  return total;
}

template <int R>
RowSums iterate_all(const RowKernel& k, Vector& u, Matrix& D) {
  // Split over the processes without a constraint split; with one every process runs every row
  // (its Y-, mu- and gap steps read mu whole: not split yet).
  const bool split = !k.constraint;
  const RowShares shares = split ? row_shares(k.offsets, k.n) : RowShares{};
  const Index chunks = (k.n + kChunk - 1) / kChunk;
  const Index first = split ? shares.chunks[static_cast<std::size_t>(processes::rank())] : 0;
  const Index last = split ? shares.chunks[static_cast<std::size_t>(processes::rank()) + 1] : chunks;
  std::vector<RowSums> partial(static_cast<std::size_t>(chunks));
#pragma omp parallel
  {
    RowBuffers buffers(k);
#pragma omp for schedule(static)
    for (Index c = first; c < last; ++c) {
      const Index begin = c * kChunk, end = std::min(k.n, begin + kChunk);
      iterate_rows<R>(k, begin, end, buffers, u.data(), D.data(), partial[static_cast<std::size_t>(c)]);
    }
  }
  if (split) return chunk_total(partial, shares);
  RowSums total;
  for (const RowSums& s : partial) total.add(s);
  return total;
}

// One block of invert_row_blocks(); not inlined, for the reason given at iterate_one().
template <int R>
[[gnu::noinline]] void invert_one(const double* gram_block, double bii, double rho, double rho_k, Index r, double* out) {
  using Mat = Eigen::Matrix<double, R, R, Eigen::RowMajor>;
  Mat K = rho * Eigen::Map<const Mat>(gram_block, r, r);
  K.diagonal().array() += 2.0 * bii + rho_k;
  Eigen::Map<Mat> inv(out, r, r);
  // No curvature on row i: d_i = 0. (all(), not max |K| = 0: GCC 12 warns inside AVX-512's max.)
  if ((K.array() == 0.0).all()) {
    inv.setZero();
    return;
  }
  Eigen::LLT<Mat> llt(K);
  if (llt.info() != Eigen::Success) {
    // Singular block (lambda = 0 and a rank-deficient Gram): as Admm::factor_blocks.
    K.diagonal().array() += kSingularRidge * K.trace() + 1e-300;
    llt.compute(K);
  }
  // K^{-1} = L^{-T} L^{-1}.
  const auto& L = llt.matrixLLT();  // L in the lower triangle, row-major
  if constexpr (R == Eigen::Dynamic) {
    // Ranks not fixed (the sdpa models, tools/bench/sdpa_compare at rank 20-90): L^{-1} row by
    // row, each row an axpy of the rows above it (row i of L^{-1} is (e_i - sum_{q<i} L_iq
    // row_q) / L_ii, and row q is zero beyond column q), then K^{-1} = L^{-T} L^{-1} as a
    // symmetric rank-r update of one triangle. Eigen's blocked triangular solve against the
    // identity and a general product took 1.35-1.55x as long for 500 blocks of rank 16-60 (6.7
    // against 5.0 ms at rank 32), and this build was 73% of SDPLIB mcp500-1's run (n = 500, rank 32).
    Mat Linv = Mat::Zero(r, r);
    for (Index i = 0; i < r; ++i) {
      auto row = Linv.row(i);
      row(i) = 1.0;
      for (Index q = 0; q < i; ++q) row.head(q + 1) -= L(i, q) * Linv.row(q).head(q + 1);
      row.head(i + 1) /= L(i, i);
    }
    inv.setZero();
    inv.template selfadjointView<Eigen::Lower>().rankUpdate(Linv.transpose());
    inv.template triangularView<Eigen::StrictlyUpper>() = inv.transpose();
  } else {
    // Fixed ranks: L^{-1} by forward substitution; for these small blocks llt.solve(I) and the
    // triangular solver cost several times the factorisation.
    Mat Linv = Mat::Zero(r, r);
    for (Index j = 0; j < r; ++j) {
      Linv(j, j) = 1.0 / L(j, j);
      for (Index i = j + 1; i < r; ++i) {
        double sum = 0.0;
        for (Index q = j; q < i; ++q) sum += L(i, q) * Linv(q, j);
        Linv(i, j) = -sum / L(i, i);
      }
    }
    inv.noalias() = Linv.transpose() * Linv;
  }
}

template <int R>
void invert_blocks(const Matrix& gram, const Vector& bd, double rho, double rho_k, Index n, Index r,
                   std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(n * r * r));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) invert_one<R>(gram.data() + i * r * r, bd[i], rho, rho_k, r, out.data() + i * r * r);
}

}  // namespace

void apply_row_inverses(const double* inverse_blocks, const Matrix& R, Matrix& out) {
  const Index n = R.rows(), r = R.cols();
  out.resize(n, r);
  using Block = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
#pragma omp parallel for schedule(static) if (n * r * r > kParallelWork)
  for (Index i = 0; i < n; ++i)
    out.row(i).noalias() = R.row(i) * Block(inverse_blocks + i * r * r, r, r).transpose();
}

RowSums fused_iteration(const RowKernel& k, Vector& u, Matrix& D) {
  D.resize(k.n, k.r);
  return with_rank(k.r, [&](auto R) { return iterate_all<decltype(R)::value>(k, u, D); });
}

void invert_row_blocks(const Matrix& gram, const Vector& bd, double rho, double rho_k, Index n, Index r,
                       std::vector<double>& out) {
  with_rank(r, [&](auto R) { invert_blocks<decltype(R)::value>(gram, bd, rho, rho_k, n, r, out); });
}

RowSums iterate_row(const RowKernel& k, Index i, const double* a, double b_ii, const double* inverse, double* work,
                    double* u, double* D) {
  return with_rank(k.r, [&](auto R) { return iterate_any<decltype(R)::value>(k, i, a, b_ii, inverse, work, u, D); });
}

RowSums sum_row_sums(const std::vector<RowSums>& rows, const RowShares& shares) {
  const std::size_t n = rows.size(), chunk = static_cast<std::size_t>(kChunk);
  std::vector<RowSums> partial(static_cast<std::size_t>(shares.chunks.back()));
  for (std::size_t c = 0; c < partial.size(); ++c)
    for (std::size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) partial[c].add(rows[i]);
  return chunk_total(partial, shares);
}

RowShares row_shares(const Index* offsets, Index n) {
  RowShares s;
  const Index chunks = (n + kChunk - 1) / kChunk;
  // Weighted by split terms plus rows: the work of a chunk is about its terms' and its blocks'.
  s.chunks = processes::split(chunks, [&](Index c) {
    const Index i = std::min(n, c * kChunk);
    return offsets[i] + i;
  });
  s.rows.resize(s.chunks.size());
  s.terms.resize(s.chunks.size());
  for (std::size_t p = 0; p < s.chunks.size(); ++p) {
    s.rows[p] = std::min(n, s.chunks[p] * kChunk);
    s.terms[p] = offsets[s.rows[p]];
  }
  return s;
}

void invert_row_block(const double* gram_block, double b_ii, double rho, double rho_k, Index r, double* out) {
  with_rank(r, [&](auto R) { invert_one<decltype(R)::value>(gram_block, b_ii, rho, rho_k, r, out); });
}

}  // namespace sdprl::detail
