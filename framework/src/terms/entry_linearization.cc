// EntryLinearization's half-term CSR, update() and core maps P, P* (see entry_linearization.h).
#include "terms/entry_linearization.h"

#include <utility>

#include "rows/row_blocks.h"

namespace sdprl::detail {

EntryLinearization::EntryLinearization(const EntryTerms& terms, SplitMode mode) : terms_(terms), mode_(mode) {
  const Index n = terms.dimension();
  const auto& rows = terms.rows();
  const auto& cols = terms.cols();
  const Vector& targets = terms.targets();
  const Index m = terms.size();
  // The half-terms by row, a diagonal term once. Coupled mode keeps the same CSR to build its
  // Gram blocks and its adjoint row by row, and term k's two half-terms' places in it (apply()
  // sums their halves). kPartnerAhead entries past the last half-term, row 0, for gather()'s
  // look-ahead.
  detail::HalfTermCsr csr = detail::half_term_csr(n, rows, cols, /*diagonal_once=*/true,
                                                  /*with_halves=*/mode_ == SplitMode::kCoupled, kPartnerAhead);
  row_ptr_ = std::move(csr.row_ptr);
  partner_ = std::move(csr.partner);
  term_ = std::move(csr.term);
  halves_ = std::move(csr.halves);
  const Index h = row_ptr_[n];
  target_.resize(h);
  for (Index p = 0; p < h; ++p) target_[p] = targets[term_[p]];
  max_degree_ = detail::max_row_degree(row_ptr_.data(), n);
  prefetch_next_row_ = h > detail::kPrefetchSplitTerms;
  const Index split = mode_ == SplitMode::kRowSplit ? h : m;
  scale_.resize(split);
  b_.resize(split);
  curvature_.resize(n);
}

void EntryLinearization::update(const Matrix& X, const Vector& w, const Vector& r) {
  others_stale_.clear();  // every row rebuilt below
  stale_loss_ = nullptr;
  set_point(X);
  grams_valid_ = false;
  curvature_.setZero();
  const auto& rows = terms_.rows();
  const auto& cols = terms_.cols();
  if (mode_ == SplitMode::kRowSplit) {
    const Index n = terms_.dimension();
    for (Index i = 0; i < n; ++i) {
      double d = 0.0;
      for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p) {
        const Index k = term_[p];
        scale_[p] = w[k] * coefficient(i, p);
        // Off-diagonal half-term: b' = w r / 4 = scale r / 2; diagonal term: b = w r / 2.
        b_[p] = scale_[p] * r[k] * 0.5;
        // |sym Q| puts w/2 on (i,i) per off-diagonal appearance and w for a diagonal term:
        // exactly the half-term's scale.
        d += scale_[p];
      }
      curvature_[i] = d;
    }
  } else {
    for (Index k = 0; k < terms_.size(); ++k) {
      scale_[k] = w[k];
      b_[k] = w[k] * r[k] * 0.5;
      if (rows[k] == cols[k]) {
        curvature_[rows[k]] += w[k];
      } else {
        curvature_[rows[k]] += 0.5 * w[k];
        curvature_[cols[k]] += 0.5 * w[k];
      }
    }
  }
}

void EntryLinearization::apply(const Matrix& D, Vector& out) const {
  complete();
  out.resize(size());
  if (mode_ == SplitMode::kRowSplit) {
    with_rank(X_.cols(), [&](auto R) { row_dots<decltype(R)::value>(D, out.data()); });
    out.array() *= scale_.array();
  } else {
    // <D, (w/2)(e_i x_j^T + e_j x_i^T)> = (w/2)(d_i . x_j + d_j . x_i); for i = j, w d_i . x_i.
    // Each half d_i . x_j by rows of the CSR (row_dots), where d_i is read once for four
    // partners, then the halves added by term.
    Vector& half = half_;
    half.resize(row_ptr_[terms_.dimension()]);
    with_rank(X_.cols(), [&](auto R) { row_dots<decltype(R)::value>(D, half.data()); });
    const Index m = size();
#pragma omp parallel for schedule(static) if (m * X_.cols() > detail::kParallelWork)
    for (Index k = 0; k < m; ++k) {
      const Index p = halves_[2 * k], q = halves_[2 * k + 1];
      out[k] = p == q ? scale_[k] * half[p] : 0.5 * scale_[k] * (half[p] + half[q]);
    }
  }
}

void EntryLinearization::apply_adjoint(const Vector& y, Matrix& out) const {
  complete();
  out.setZero(X_.rows(), X_.cols());
  with_rank(X_.cols(), [&](auto R) {
    constexpr int kR = decltype(R)::value;
    if (mode_ == SplitMode::kRowSplit) {
      row_axpys<kR>([&](Index, Index p) { return y[p] * scale_[p]; }, out);
    } else {
      // Row i of P*(y) = sum over the terms touching i of (w y / 2) x_partner, once per appearance
      // (a diagonal term appears once with w y): by rows over the CSR, so that rows are
      // independent (no scatter) and each sum has a fixed order.
      row_axpys<kR>([&](Index i, Index p) { return coefficient(i, p) * y[term_[p]] * scale_[term_[p]]; }, out);
    }
  });
}

// X_ = X, and the gather's padded, aligned copy of it.
void EntryLinearization::set_point(const Matrix& X) {
  X_ = X;
  const Index n = X.rows(), r = X.cols();
  stride_ = gather_stride(r);
  constexpr std::size_t kLine = 64;
  padded_storage_.resize(static_cast<std::size_t>(n * stride_) + kLine / sizeof(double));
  const auto address = reinterpret_cast<std::uintptr_t>(padded_storage_.data());
  padded_ = padded_storage_.data() + (kLine - address % kLine) % kLine / sizeof(double);
  for (Index i = 0; i < n; ++i) {
    double* row = padded_ + i * stride_;
    for (Index c = 0; c < r; ++c) row[c] = X(i, c);
    for (Index c = r; c < stride_; ++c) row[c] = 0.0;
  }
}

// out.row(i) += sum over the CSR's half-terms p of row i of a(i, p) x_partner(p), four partners at
// a time so that the row's running sum is read and written once per four (it was three memory
// operations per multiply-add with one at a time). `out` is zero on entry.
template <int R, class Coefficient>
void EntryLinearization::row_axpys(const Coefficient& a, Matrix& out) const {
  // A compile-time r unrolls the loops over a row's r doubles (with row_dots: the quickstart's
  // exact finish at r = 5, lambda = 1, 1.78 s against 2.56 s with a run-time r).
  const Index n = terms_.dimension(), r = R == Eigen::Dynamic ? X_.cols() : R;
#pragma omp parallel for schedule(static) if (row_ptr_[n] * r > detail::kParallelWork)
  for (Index i = 0; i < n; ++i) {
    double* __restrict oi = out.row(i).data();
    Index p = row_ptr_[i];
    const Index end = row_ptr_[i + 1];
    for (; p + 4 <= end; p += 4) {
      const double a0 = a(i, p), a1 = a(i, p + 1), a2 = a(i, p + 2), a3 = a(i, p + 3);
      const double* __restrict x0 = X_.row(partner_[p]).data();
      const double* __restrict x1 = X_.row(partner_[p + 1]).data();
      const double* __restrict x2 = X_.row(partner_[p + 2]).data();
      const double* __restrict x3 = X_.row(partner_[p + 3]).data();
#pragma omp simd
      for (Index c = 0; c < r; ++c) oi[c] += (a0 * x0[c] + a1 * x1[c]) + (a2 * x2[c] + a3 * x3[c]);
    }
    for (; p < end; ++p) {
      const double a0 = a(i, p);
      const double* __restrict x0 = X_.row(partner_[p]).data();
#pragma omp simd
      for (Index c = 0; c < r; ++c) oi[c] += a0 * x0[c];
    }
  }
}

// half[p] = d_i . x_partner(p) for every half-term p of the CSR (row i), four partners at a
// time so that d_i is read once per four products.
template <int R>
void EntryLinearization::row_dots(const Matrix& D, double* __restrict half) const {
  const Index n = terms_.dimension(), r = R == Eigen::Dynamic ? X_.cols() : R;
#pragma omp parallel for schedule(static) if (row_ptr_[n] * r > detail::kParallelWork)
  for (Index i = 0; i < n; ++i) {
    const double* __restrict ai = D.row(i).data();
    Index p = row_ptr_[i];
    const Index end = row_ptr_[i + 1];
    for (; p + 4 <= end; p += 4) {
      const double* __restrict x0 = X_.row(partner_[p]).data();
      const double* __restrict x1 = X_.row(partner_[p + 1]).data();
      const double* __restrict x2 = X_.row(partner_[p + 2]).data();
      const double* __restrict x3 = X_.row(partner_[p + 3]).data();
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
      for (Index c = 0; c < r; ++c) {
        const double d = ai[c];
        s0 += d * x0[c];
        s1 += d * x1[c];
        s2 += d * x2[c];
        s3 += d * x3[c];
      }
      half[p] = s0, half[p + 1] = s1, half[p + 2] = s2, half[p + 3] = s3;
    }
    for (; p < end; ++p) {
      const double* __restrict x0 = X_.row(partner_[p]).data();
      double s0 = 0.0;
#pragma omp simd reduction(+ : s0)
      for (Index c = 0; c < r; ++c) s0 += ai[c] * x0[c];
      half[p] = s0;
    }
  }
}

}  // namespace sdprl::detail
