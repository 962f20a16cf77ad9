// The fused row-split ADMM iteration: the hot loop of SDP-RL on the sparse path.
//
// With the row-split majoriser and a diagonal B (docs/method.md section 3) every split term is
// P_h = e_i a_h^T for one row i, so the whole ADMM iteration decouples by rows of Xt:
//
//   Xt-step   d_i  = K_i^{-1} ( -G_i - sum_{h in row i} (nu_h + rho (b_h - e_h)) a_h ),
//             K_i  = 2 B_ii I + rho sum_{h in row i} a_h a_h^T          (factored once per MM step)
//   e-step    v_h  = <d_i, a_h> + b_h,   e_h = soft(v_h + nu_h / rho, 2 / rho)
//   nu-step   nu_h = nu_h + rho (v_h - e_h)
//   gap       H(D) = sum_i (B_ii |d_i|^2 + <G_i, d_i>) + 2 sum_h |v_h| + c
//             D(nu) = c + sum_h nu_h b_h - (1/4) sum_i |M_i|^2 / B_ii,  M_i = G_i + sum_h nu_h a_h
//
// which is Admm::iterate() written for one row at a time (the same formulas as mm/surrogate.h).
// The state is packed (AdmmState::u): after an e- and nu-step, u_h = nu_h + rho e_h is rho times
// the e-step's argument v_h + nu_h^old / rho, and nu_h = clamp(u_h, -2, 2); so the steps read
//
//   Xt-step   y_h  = nu_h + rho (b_h - e_h) = rho b_h + 2 nu_h - u_h
//   e/nu-step u_h <- rho v_h + nu_h,   nu_h <- clamp(u_h, -2, 2)    (e_h = (u_h - nu_h) / rho)
//
// One pass over a row's split terms reads a_h, b_h and u_h once from memory and uses them twice
// from cache, and writes u_h once: the bandwidth floor of issue #8, about (r + 3) doubles per split
// term, instead of the three separate passes (P*, P, P* again for the dual) of the generic path.
//
// Rows are processed in fixed chunks whose partial sums are added in chunk order, so the result
// is bit-identical for any number of threads.
#pragma once

#include <algorithm>
#include <vector>

#include "rows/row_blocks.h"
#include "sdprl/constraint.h"
#include "sdprl/export.h"
#include "sdprl/constraint_set.h"
#include "sdprl/types.h"

namespace sdprl::detail {

// nu = clamp(u, -2, 2): the multipliers of the packed state (AdmmState::u), whose box |nu_h| <= 2
// is the l1 surrogate's dual (unit term weights, as on the fused path). One definition for the
// scalar tails, the vectorised passes and AdmmState::unpack(), so that all clamp alike.
constexpr double kNuBound = 2.0;
inline double clamp_nu(double u) { return std::min(std::max(u, -kNuBound), kNuBound); }
template <class A>
auto clamp_nu(const Eigen::ArrayBase<A>& u) {
  return u.max(-kNuBound).min(kNuBound);
}

// Rows per chunk: the unit of work of a thread, of the ordered partial sums and of the split over
// processes (row_shares()).
constexpr Index kRowChunk = 64;

struct RowKernel {
  const RowSplitView* rows = nullptr;  // the a_h
  const Index* offsets = nullptr;  // n + 1: the split terms of row i are offsets[i] .. offsets[i+1]-1
  Index n = 0, r = 0;
  Index max_degree = 0;            // max_i (offsets[i+1] - offsets[i])
  const double* b = nullptr;       // b_h
  const Matrix* G = nullptr;       // n x r
  const Vector* b_diagonal = nullptr;  // diag(B), length n
  const double* inverse_blocks = nullptr;  // n blocks (r x r, row-major): K_i^{-1}, zero where K_i = 0
  double rho = 1.0;
  // The constraint split X_k + D - Y = 0 (sdprl/constraint.h) of a constraint whose projection acts
  // row by row (ConvexConstraint::rows_independent); nullptr without one. Row i then reads
  //   Xt-step   d_i = K_i^{-1} ( -G_i - sum_h y_h a_h - mu_i - rho_k (x_i - Y_i) ),
  //             K_i = 2 B_ii I + rho sum_h a_h a_h^T + rho_k I
  //   Y-step    z_i = x_i + d_i + mu_i / rho_k,  Y_i = proj(z_i),  mu_i = rho_k (z_i - Y_i)
  //   gap       H at the feasible step s_i = Y_i - x_i: B_ii |s_i|^2 + <G_i, s_i> + 2 sum_h |<s_i, a_h> + b_h|,
  //             and the dual gains <mu_i, x_i> and mu_i in M_i (- sigma_K(mu), added by the caller)
  // as Admm::step() computes them for the whole matrix. mu, Y, step (n x r, row-major) are
  // updated in place; center is X_k.
  const ConvexConstraint* constraint = nullptr;
  double rho_k = 0.0;
  const double* center = nullptr;
  double* mu = nullptr;
  double* Y = nullptr;
  double* step = nullptr;
};

// The row sums of one iteration: primal H(D) = quadratic + 2 absolute + c,
// dual D(nu) = c + nu_b - m_binv_m / 4.
// With a constraint split, mu_x = <mu, X_k> joins the dual.
struct RowSums {
  double quadratic = 0.0, absolute = 0.0, nu_b = 0.0, m_binv_m = 0.0, mu_x = 0.0;
  void add(const RowSums& o) {
    quadratic += o.quadratic;
    absolute += o.absolute;
    nu_b += o.nu_b;
    m_binv_m += o.m_binv_m;
    mu_x += o.mu_x;
  }
};

// One ADMM iteration on all rows: updates the packed state u in place and writes Xt into D (n x r).
// Under several processes each iterates its own rows (row_shares()); the sums are the whole's, the
// rows of u and D of other processes are left as they were (AdmmState::share_rows(), share_packed()).
RowSums fused_iteration(const RowKernel& kernel, Vector& u, Matrix& D);

// Row i's share of fused_iteration() from its a_h already in memory (`a`, component-major as
// RowSplitView::row_vectors writes them; may be nullptr when the row has no split terms),
// with B_ii = b_ii and K_i^{-1} = inverse (r x r, row-major): updates the row's packed u, writes
// d_i into row i of D (n x r, row-major) and returns the row's parts of the sums. `work` holds
// 2 deg doubles. kernel.rows, .b_diagonal and .inverse_blocks are not read. fused_iteration() runs
// exactly this per row, so a caller that visits rows on its own (Admm::update_and_iterate) gets
// bitwise the same iterate when it adds the rows' sums with sum_row_sums().
RowSums iterate_row(const RowKernel& kernel, Index i, const double* a, double b_ii, const double* inverse,
                    double* work, double* u, double* D);

// How the row pass is split over the processes of an MPI run (parallel/processes.h): process p
// iterates the rows [rows[p], rows[p + 1]), whole chunks of fused_iteration(), whose split terms are
// [terms[p], terms[p + 1]); the blocks are balanced by split terms plus rows. One process: all.
struct RowShares {
  std::vector<Index> chunks, rows, terms;  // count() + 1 bounds each
  bool owns(Index i, int process) const {
    return rows[static_cast<std::size_t>(process)] <= i && i < rows[static_cast<std::size_t>(process) + 1];
  }
};
SDPRL_API RowShares row_shares(const Index* offsets, Index n);

// The total of per-row sums in fused_iteration()'s order (rows in chunks, chunks in order); each
// process contributes the chunks it owns in `shares` (collective).
RowSums sum_row_sums(const std::vector<RowSums>& rows, const RowShares& shares);

// The ridge a singular row block gets before it is factored again: this times its trace, plus
// 1e-300 (invert_row_blocks(), and the Woodbury rows of xt_step/blocks.cc).
constexpr double kSingularRidge = 1e-12;

// K_i^{-1} (r x r, row-major, into out) for K_i = rho gram_i + (2 b_ii + rho_k) I: one block of
// invert_row_blocks(), the same arithmetic.
void invert_row_block(const double* gram_block, double b_ii, double rho, double rho_k, Index r, double* out);

// K_i^{-1} for K_i = rho gram_i + (2 B_ii + rho_k) I (gram: the (n r) x r blocks of
// TermLinearization::gram_row_blocks). A block with K_i = 0 (a row no term and no regularizer
// touches) gets K_i^{-1} = 0, so that d_i = 0 as in the generic path; a singular K_i gets a tiny ridge.
void invert_row_blocks(const Matrix& gram, const Vector& b_diagonal, double rho, double rho_k, Index n, Index r,
                       std::vector<double>& inverse_blocks);

// out.row(i) = K_i^{-1} R.row(i) for the n blocks of invert_row_blocks (rows in parallel).
void apply_row_inverses(const double* inverse_blocks, const Matrix& R, Matrix& out);

}  // namespace sdprl::detail
