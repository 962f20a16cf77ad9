// The linearisation of EntryTerms (sdprl/terms/entry_terms.h has the algebra). Private to the
// framework; its members are defined by what they do:
//   entry_linearization.cc  the half-term CSR, update() and the core maps P, P*, C;
//   entry_row_views.cc      the capability views: the row split (gathered partner rows), the
//                           one-pass update with the loss, and the Gram summaries of P*P.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/terms/entry_terms.h"
#include "terms/coupled_pairs.h"
#include "terms/split_rebuild.h"

namespace sdprl::detail {

// The split terms in CSR order by the row they touch. For the row-split majoriser a split term is
// a half-term (row i, partner row j, coefficient 1/2 of its term's weight, or 1 for a diagonal
// term); in coupled mode it is a whole term.
// Offers a RowSplitView and the OnePassUpdate in row-split mode, and a GramSummary (the traces in one
// pass over the CSR) in both modes.
class EntryLinearization final : public TermLinearization,
                                 public RowSplitView,
                                 public OnePassUpdate,
                                 public GramSummary,
                                 public SplitRebuild,
                                 public CoupledPairs {
 public:
  EntryLinearization(const EntryTerms& terms, SplitMode mode);

  // padded_ points into padded_storage_: a copy would point into the original's.
  EntryLinearization(const EntryLinearization&) = delete;
  EntryLinearization& operator=(const EntryLinearization&) = delete;

  // Core maps (entry_linearization.cc).
  void update(const Matrix& X, const Vector& w, const Vector& r) override;
  Index size() const override { return b_.size(); }
  const Vector& offsets() const override {
    complete();
    return b_;
  }
  void apply(const Matrix& D, Vector& out) const override;
  void apply_adjoint(const Vector& y, Matrix& out) const override;
  void apply_curvature(const Matrix& D, Matrix& out) const override { out = curvature_.asDiagonal() * D; }
  bool curvature_is_diagonal() const override { return true; }
  void curvature_diagonal(Vector& d) const override { d = curvature_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }
  // A whole term (i, j) is nonzero in rows i and j.
  Index rows_per_term() const override { return mode_ == SplitMode::kRowSplit ? 1 : 2; }
  void gram_row_blocks(Matrix& blocks) const override;

  // Capabilities (entry_row_views.cc). Row-split: half-term p of row i is P_p = e_i a_p^T with
  // a_p = scale_p x_partner(p).
  const RowSplitView* row_split() const override { return mode_ == SplitMode::kRowSplit ? this : nullptr; }
  OnePassUpdate* one_pass() override { return mode_ == SplitMode::kRowSplit ? this : nullptr; }
  const GramSummary* gram_summary() const override { return this; }
  const Index* row_offsets() const override { return row_ptr_.data(); }
  void row_vectors(Index i, double* out) const override;
  void update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                        RowConsumer* consumer) override;
  void gram_row_traces(Vector& traces) const override;
  bool shared_gram_block(Matrix&) const override { return false; }
  const double* local_offsets() const override { return b_.data(); }

  // For the dual coordinate step (CoupledPairs, kEntry; terms/coupled_pairs.h has P_k): s =
  // term_scales() are the loss weights; the curvature is diagonal in both modes.
  SplitMode mode() const { return mode_; }
  const EntryTerms& terms() const { return terms_; }
  PairFamily family() const override { return PairFamily::kEntry; }
  const PairTerms& pair_terms() const override { return terms_; }
  const Vector& term_scales() const override { return scale_; }
  const Matrix& point() const override { return X_; }
  bool whole_terms_diagonal() const override { return mode_ == SplitMode::kCoupled; }
  void use_diagonal_curvature() override {}

 private:
  // The row stride of the gather's copy of X: r rounded up to 2, 4 or 8 doubles (16, 32 or 64
  // bytes), so that with a 64-byte aligned base no row of a rank up to 8 straddles two cache lines.
  // With r = 5 a packed row (40 bytes) touches 1.5 lines on average: the gather's reads of the
  // partner rows, random and from L3 once X outgrows L2 (m of about 25000), are its cost.
  static constexpr Index gather_stride(Index r) { return r <= 2 ? r : r <= 4 ? 4 : r <= 8 ? 8 : r; }

  // The fused pass's chunks (admm/row_kernel.h), so that a rebuild split over processes
  // (update_with_loss) rebuilds whole blocks and sums them in the same order.
  static constexpr Index kRowsPerBlock = 64;
  // How far ahead gather() prefetches partner rows (half-terms): 16 and 32 measured alike at
  // m = 10^5 (59 and 59-60 ms per ADMM iteration), 64 less well (60-62 ms).
  static constexpr Index kPartnerAhead = 16;

  // Per-thread work space of update_with_loss: the gathered partner rows (component-major, as
  // row_vectors() writes them) and the row's residuals, coefficients, |residuals|, phi and w.
  struct RebuildScratch {
    std::vector<double> rows, residual, coef;
    Vector abs_residual, phi, w;
    RebuildScratch(Index max_degree, Index r)
        : rows(static_cast<std::size_t>(std::max<Index>(max_degree, 1) * r)),
          residual(static_cast<std::size_t>(std::max<Index>(max_degree, 1))),
          coef(static_cast<std::size_t>(std::max<Index>(max_degree, 1))) {}
  };

  // A half-term's share of its term: 1/2 for each half of an off-diagonal term, 1 for a diagonal one.
  double coefficient(Index i, Index p) const { return partner_[p] == i ? 1.0 : 0.5; }

  // c_p in row i's Gram block sum_p c_p^2 x_partner x_partner^T (CSR half-term p): its scale
  // row-split (a_p = scale_p x_partner), the term's weight times coefficient(i, p) coupled.
  double gram_weight(Index i, Index p) const {
    return mode_ == SplitMode::kRowSplit ? scale_[p] : coefficient(i, p) * scale_[term_[p]];
  }

  // entry_linearization.cc
  void set_point(const Matrix& X);
  // R: the rank as a template parameter (detail::with_rank), Eigen::Dynamic for the ranks it does not fix.
  template <int R, class Coefficient>
  void row_axpys(const Coefficient& a, Matrix& out) const;
  template <int R>
  void row_dots(const Matrix& D, double* __restrict half) const;

  // entry_row_views.cc
  // The partner rows of row i's half-terms, component-major (out[c * deg + q]), times scale_h when
  // `scaled` (then they are the a_h).
  void gather_partners(Index i, double* out, bool scaled) const {
    if (prefetch_next_row_)
      gather_rank<true>(i, out, scaled);
    else
      gather_rank<false>(i, out, scaled);
  }
  template <bool Prefetch>
  void gather_rank(Index i, double* out, bool scaled) const;
  template <int R, bool Prefetch>
  void gather(Index i, double* out, bool scaled) const;
  void rebuild_row(Index i, const Loss& loss, RebuildScratch& s, double* phi_total, double* abs_total,
                   RowConsumer* consumer);
  // The row blocks [block_begin, block_end) of kRowsPerBlock rows: rebuild_row() on each, their
  // phi and weighted |r| sums per block into the parts (which may be null).
  void rebuild_blocks(Index block_begin, Index block_end, const Loss& loss, RowConsumer* consumer,
                      double* phi_part, double* abs_part);
  // After a rebuild split over processes (SplitRebuild): the rows other processes rebuilt, rebuilt
  // here too (every reader but the fused pass calls it; a no-op otherwise). Thread-safe.
  void complete() const;

  const EntryTerms& terms_;
  SplitMode mode_;
  std::vector<Index> row_ptr_;
  std::vector<std::int32_t> partner_, term_;
  std::vector<std::int32_t> halves_;  // coupled mode: term k's half-terms at 2k, 2k + 1 (equal when diagonal)
  // Coupled mode: apply()'s half-term products, kept between calls (a fresh vector per call was
  // mapped and faulted in anew: the auto finish's ADMM calls apply() once or twice an iteration).
  // So apply() is not reentrant on one object; the ADMM calls it from one thread at a time.
  mutable Vector half_;
  Index max_degree_ = 0;  // the most half-terms of one row (fixed by the terms)
  bool prefetch_next_row_ = false;  // gather() prefetches the next row's partners and scales
  // The target of each half-term's term, a copy in CSR order, so that the one-pass rebuild
  // (row-split) reads it sequentially.
  std::vector<double> target_;
  Vector scale_, b_, curvature_;
  Matrix X_;
  // X_ again for gather(), row i at padded_ + i stride_ (gather_stride), padded_ 64-byte aligned
  // inside padded_storage_.
  std::vector<double> padded_storage_;
  double* padded_ = nullptr;
  Index stride_ = 0;
  Matrix grams_;  // row-split: the Gram blocks of P*P at the last update_with_loss
  bool grams_valid_ = false;
  // Set by a rebuild split over processes: the row bounds of the processes (P + 1) and the loss
  // to rebuild the others' rows with; null when every row is current.
  std::vector<Index> others_stale_;
  const Loss* stale_loss_ = nullptr;
  mutable std::mutex complete_mutex_;
};

}  // namespace sdprl::detail
