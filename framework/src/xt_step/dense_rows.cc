// The dense fused pass of the ADMM (xt_step/dense_rows.h).
#include "xt_step/dense_rows.h"

#include <algorithm>
#include <vector>

#include "admm/soft_step.h"
#include "mm/surrogate.h"
#include "sdprl/constraint.h"
#include "terms/dense_row_split.h"

namespace sdprl::xt_step {
namespace {
// Rows per tile: a tile of one n^2-vector is kTileRows n doubles (n = 2000: 512 KB), so that the
// tiles of b, w and u and the product tile stay in cache between the products and the steps (64
// and 128 rows measured the same, docs/notes/solver-history.md).
constexpr Index kTileRows = 32;

// The pass's four products of a tile with X_k (P*(y) = Y X_k, P(D) = D X_k^T, P*(nu'), P(step))
// run in single precision while eps_k >= kSingleProducts times the surrogate's magnitude, in
// double below. A product of r terms in floats is off by at most r u_f (u_f = 6e-8: 3e-6 at
// r = 50) of sum_k |d_ik x_jk|, typically sqrt(r) u_f, so the sums that make the gap move by far
// less than the tolerance they are compared with; the MM step's acceptance reads F in double
// (the rebuild). spca_colon (rank 50, eps_k/magnitude >= 1e-3 throughout): 0.8x the time, the
// same 46 MM steps and 68 ADMM iterations, F 2.7e-7 higher (docs/method.md section 3.3).
constexpr double kSingleProducts = 1e-4;

// out = A B (B^T when transposed), from A in double, through floats when `single`.
void tile_product(const Matrix& A, const Matrix& Bd, const MatrixF& Bf, bool single, MatrixF& Af, MatrixF& Of,
                  Matrix& out, bool transposed) {
  if (!single) {
    if (transposed) out.noalias() = A * Bd.transpose();
    else out.noalias() = A * Bd;
    return;
  }
  Af = A.cast<float>();
  if (transposed) Of.noalias() = Af * Bf.transpose();
  else Of.noalias() = Af * Bf;
  out = Of.cast<double>();
}
}  // namespace

bool DenseRows::iterate_rows(AdmmState& st, double rho, double eps) {
  // The iteration of Admm::step (admm/admm.cc), tile by tile of rows, on the state packed with the
  // weights' bounds (AdmmState::u, packed_weights): every quantity below is the same as there, up
  // to the order of floating-point operations. Between MM steps the weights change under u, so the
  // next step starts from nu = clamp(u, -2 w, 2 w) with the new w: the generic path's nu and e
  // projected onto the new bounds (docs/method.md section 3.3).
  const TermLinearization& lin = s_.linearization();
  const Index n = s_.rows(), r = s_.rank();
  const Matrix& Xk = s_.center();
  // b and w a tile of rows at a time (terms/dense_row_split.h): not n^2-vectors of their own.
  const auto& layout = dynamic_cast<const DenseRowSplit&>(lin);
  const ExternalWeights* weights = lin.external_weights();
  // A packed state here is this pass's (also one restored from a checkpoint, which keeps u alone):
  // its bounds are the weights, also when pack() must unpack it at another rho first.
  if (st.packed()) st.packed_weights = weights;
  st.pack(rho);
  st.packed_weights = weights;
  // The constraint split when the Constrained wrapper holds this strategy (it sets rho_k > 0 as
  // shift_); Y starts at X_k, as in Admm::step.
  const ConvexConstraint* constraint = shift_ > 0.0 ? s_.model().constraint.get() : nullptr;
  const double rho_k = shift_;
  if (constraint) {
    if (st.Y.rows() != n || st.Y.cols() != r) st.Y = Xk;
    if (st.mu.rows() != n || st.mu.cols() != r) st.mu.setZero(n, r);
  }
  st.D.resize(n, r);
  st.Pnu.resize(n, r);
  const Index tiles = (n + kTileRows - 1) / kTileRows;
  // Always a parallel region, also for small n: inside it each tile's products run on one thread,
  // where outside Eigen would thread them itself with a blocking that depends on the thread count.
  // Per-tile sums, added in tile order below: the same bits for any thread count.
  std::vector<detail::PackedStepSums> sums(static_cast<std::size_t>(tiles));
  const bool single = eps >= kSingleProducts * s_.objective_magnitude();
  MatrixF Xf;
  if (single) Xf = Xk.cast<float>();
#pragma omp parallel
  {
    Matrix T, R, D, P, Bt(kTileRows, n), Wt(kTileRows, n);
    MatrixF Af, Of;
#pragma omp for schedule(static)
    for (Index q = 0; q < tiles; ++q) {
      const Index i0 = q * kTileRows, m = std::min(kTileRows, n - i0), at = i0 * n;
      double* u = st.u.data() + at;
      layout.row_tile(i0, m, Bt.data(), Wt.data());
      const double* b = Bt.data();
      const double* w = Wt.data();
      // Xt-step: (2B + rho P*P + rho_k I) D = -G - P*(nu + rho (b - e)) - mu - rho_k (X_k - Y).
      T.resize(m, n);
      detail::packed_multiplier_sum(b, w, u, rho, m * n, T.data());
      tile_product(T, Xk, Xf, single, Af, Of, P, false);
      R = -s_.G().middleRows(i0, m) - P;
      if (constraint) R -= st.mu.middleRows(i0, m) + rho_k * (Xk.middleRows(i0, m) - st.Y.middleRows(i0, m));
      blocks_.apply_rows(i0, R, D);
      st.D.middleRows(i0, m) = D;
      // e- and nu-steps on P(D) = D X_k^T, with H's terms at D and <nu', b> summed on the way; T
      // then holds nu', whose P* the dual needs.
      tile_product(D, Xk, Xf, single, Af, Of, T, true);
      sums[static_cast<std::size_t>(q)] = detail::packed_soft_step(T.data(), b, w, rho, m * n, u);
      tile_product(T, Xk, Xf, single, Af, Of, P, false);
      st.Pnu.middleRows(i0, m) = P;
    }
  }
  double terms = 0.0, nu_b = 0.0;
  for (const detail::PackedStepSums& s : sums) {
    terms += s.weighted_abs;
    nu_b += s.nu_b;
  }
  if (constraint) {
    // Y- and mu-steps as in Admm::step, then H's terms at the feasible step Y - X_k: a second pass.
    Matrix Z = Xk + st.D + st.mu / rho_k;
    st.Y = Z;
    constraint->project(st.Y);
    st.mu = rho_k * (Z - st.Y);
    st.step = st.Y - Xk;
    std::vector<double> partial(static_cast<std::size_t>(tiles), 0.0);
#pragma omp parallel
    {
      Matrix T, S;
      MatrixF Af, Of;
#pragma omp for schedule(static)
      for (Index q = 0; q < tiles; ++q) {
        const Index i0 = q * kTileRows, m = std::min(kTileRows, n - i0);
        S = st.step.middleRows(i0, m);
        tile_product(S, Xk, Xf, single, Af, Of, T, true);
        // b and W a block of columns at a time, in L1, not unpacked into two tiles read once:
        // spca_colon 0.96x the time (medians of 5). The first pass reads its tile twice, around
        // its products, and unpacking each block twice there took 1.04x.
        double sum = 0.0;
        layout.visit_row_blocks(i0, m, [&](Index j0, Index k, const double* b, const double* w, Index stride) {
          for (Index i = 0; i < m; ++i)
            sum += detail::weighted_abs_sum(T.data() + i * n + j0, b + i * stride, w + i * stride, k);
        });
        partial[static_cast<std::size_t>(q)] = sum;
      }
    }
    terms = 0.0;
    for (double p : partial) terms += p;
  } else {
    st.step = st.D;
  }
  st.primal = s_.value_given_terms(st.step, terms);
  st.dual = s_.dual_given_products(nu_b, st.Pnu, constraint ? &st.mu : nullptr);
  st.gap = st.primal - st.dual;
  // Pnu is P*(nu') but Pu is not kept: the generic iteration recomputes both.
  st.adjoint_generation = 0;
  return true;
}

}  // namespace sdprl::xt_step
