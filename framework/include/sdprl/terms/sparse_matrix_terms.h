// Sparse matrix terms: any sparse Q_tau, given by its nonzero entries (general SDPs, e.g. the
// constraint matrices F_i of an SDPA file). Only S = sym(Q) = (Q + Q^T)/2 matters for <X, Q X>
// (docs/method.md section 1); the set stores each S_tau by its upper-triangle nonzeros and the list
// of rows it touches (its support, size s_tau). Nothing n x n is formed: one ADMM iteration costs
// O(sum_tau s_tau r) and one MM step O(nnz r + sum_tau s_tau^2 r) at most.
//
// The surrogate needs a curvature bound C_tau with -C_tau <= S_tau <= C_tau (Loewner order): then
// |<D, S D>| <= <D, C D> for every step D, which is what keeps H above F (docs/method.md section 2).
// Two bounds are used:
//  * |S| = V |Lambda| V^T (the matrix absolute value), from an eigen-split of S's principal block
//    on its support (S is zero outside it, so so is |S|). -|S| <= S <= |S| since |S| -+ S =
//    2 S_-+ are PSD. The tightest choice; it is what the paper's Prop. 2 uses.
//  * G = diag(g), g_i = sum_j |S_ij| (Gershgorin). G - S and G + S are symmetric with a
//    non-negative diagonal that dominates each row's off-diagonal |entries| (G_ii -+ S_ii >=
//    sum_{j != i} |S_ij|), so both are diagonally dominant, hence PSD: -G <= S <= G. G is diagonal,
//    but it need not dominate |S| (for the path S = e_1 e_2^T + e_2 e_3^T + sym., G - |S| is
//    indefinite); it is a valid bound of S, which is all the majoriser needs.
// For entry terms (S = (e_i e_j^T + e_j e_i^T)/2) both equal (e_i e_i^T + e_j e_j^T)/2; for
// distance terms G = 2 (e_i e_i^T + e_j e_j^T), the bound DistanceTerms' row split uses.
//
//  kCoupled:  one split term per term, P = w S X_k, b = w r / 2, C = sum w |S| (Prop. 2 exactly).
//             The linearisation eigen-splits each S once and keeps |S| as a dense s x s block for
//             supports up to kMaxExactSupport rows (at most 128^2 doubles per term, and only in
//             this mode); a diagonal S needs no block (|S| = diag |S_ii| = G), and a larger support
//             uses G (still a valid majoriser, no longer the exact Prop. 2 surrogate).
//  kRowSplit: the linear part <D, P> = sum_{i in support} <d_i, p_i> splits by the triangle
//             inequality, 2 |sum_i <d_i, p_i> + b| <= sum_i 2 |<d_i, p_i> + b / s|, into one
//             half-term per support row, each touching one row of D, with offsets b / s of b's sign
//             (so the bound is tight at D = 0: sum_i 2 |b / s| = 2 |b|). With C = sum w G, B is
//             diagonal and the Xt-step splits into n independent r x r systems. For entry and
//             distance terms this is exactly EntryTerms' and DistanceTerms' row split.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/terms/term_data.h"

namespace sdprl {

class SDPRL_API SparseMatrixTerms final : public TargetedTerms {
 public:
  // One nonzero of Q (0-based). Q need not be symmetric; entries at the same (row, col) add.
  struct Entry {
    std::int32_t row = 0;
    std::int32_t col = 0;
    double value = 0.0;
  };

  // Supports of more rows than this keep the Gershgorin bound in coupled mode too (an s x s dense
  // block per term would cost s^2 memory and s^3 time).
  static constexpr Index kMaxExactSupport = 128;

  // terms[k] lists the nonzeros of Q_k; targets[k] = t_k. Throws Error on an index outside
  // [0, n), a non-finite value or target, or a term whose sym(Q) is zero.
  SparseMatrixTerms(Index n, const std::vector<std::vector<Entry>>& terms, Vector targets);
  ~SparseMatrixTerms() override;

  std::string family() const override { return "sparse-matrix"; }
  void evaluate(const Matrix& X, Vector& values) const override;
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;

  // S_k = sym(Q_k) by its upper triangle: entries [entry_begin(k), entry_begin(k + 1)) of
  // upper_rows() <= upper_cols() with values upper_values() (the value of S_ij = S_ji).
  Index entry_begin(Index k) const { return entry_ptr_[k]; }
  const std::vector<std::int32_t>& upper_rows() const { return upper_rows_; }
  const std::vector<std::int32_t>& upper_cols() const { return upper_cols_; }
  const std::vector<double>& upper_values() const { return upper_values_; }
  // The same entries' positions within their term's support (0 .. s_k - 1).
  const std::vector<std::int32_t>& upper_local_rows() const { return upper_local_rows_; }
  const std::vector<std::int32_t>& upper_local_cols() const { return upper_local_cols_; }
  // The support of S_k (sorted rows): [support_begin(k), support_begin(k + 1)) of support_rows().
  Index support_begin(Index k) const { return support_ptr_[k]; }
  const std::vector<std::int32_t>& support_rows() const { return support_rows_; }
  // Gershgorin bound g_i = sum_j |S_k,ij| per support row, aligned with support_rows().
  const std::vector<double>& gershgorin() const { return gershgorin_; }


 private:
  std::vector<Index> entry_ptr_, support_ptr_;
  std::vector<std::int32_t> upper_rows_, upper_cols_, upper_local_rows_, upper_local_cols_, support_rows_;
  std::vector<double> upper_values_, gershgorin_;
};

}  // namespace sdprl
