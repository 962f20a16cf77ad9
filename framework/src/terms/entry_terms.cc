// Entry terms Q = e_i e_j^T on the sparse path (see sdprl/terms/entry_terms.h for the algebra).
#include "sdprl/terms/entry_terms.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "rows/row_blocks.h"
#include "sdprl/error.h"
#include "sdprl/loss.h"

#ifdef _OPENMP
#endif
#if defined(__AVX2__)
#include <immintrin.h>  // the transposed gather of gather_partners()
#endif

namespace sdprl {
namespace {

// The split terms in CSR order by the row they touch. For the row-split majoriser a split term is
// a half-term (row i, partner row j, coefficient 1/2 of its term's weight, or 1 for a diagonal
// term); in coupled mode it is a whole term.
// Offers a RowSplitView and the OnePassUpdate in row-split mode, and a GramSummary (the traces in one
// pass over the CSR) in both modes.
class EntryLinearization final : public TermLinearization,
                                 public RowSplitView,
                                 public OnePassUpdate,
                                 public GramSummary {
 public:
  EntryLinearization(const EntryTerms& terms, SplitMode mode) : terms_(terms), mode_(mode) {
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

  // padded_ points into padded_storage_: a copy would point into the original's.
  EntryLinearization(const EntryLinearization&) = delete;
  EntryLinearization& operator=(const EntryLinearization&) = delete;

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
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

  // One pass per row over its half-terms (row-split only): gather the partner rows x_j, the
  // residuals r = <x_i, x_j> - t (both halves of a term compute the same products in the same
  // order, so they see bitwise the same r), phi and w = phi'(|r|) in one Loss::evaluate call per
  // row, then scale, b and C as update() sets them, and the row's Gram block of P*P from the same
  // gathered rows (gram_row_blocks() hands it to the ADMM instead of gathering again). Rows in
  // parallel; the sums are added per block of rows in a fixed order, so that they do not depend
  // on the thread count.
  void update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                        RowConsumer* consumer) override {
    set_point(X);
    const Index n = terms_.dimension(), r = X_.cols();
    grams_.resize(n * r, r);
    const Index blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
    std::vector<double> phi_part(static_cast<std::size_t>(blocks)), abs_part(static_cast<std::size_t>(blocks));
    // An exception must not leave an OpenMP region (that terminates the program): the first one
    // (a user's loss that throws, an allocation) is kept and rethrown after it.
    std::exception_ptr failure;
#pragma omp parallel
    {
      std::optional<RebuildScratch> scratch;
#pragma omp for schedule(static)
      for (Index block = 0; block < blocks; ++block) {
        try {
          if (!scratch) scratch.emplace(max_degree_, r);
          const Index i0 = block * kRowsPerBlock, i1 = std::min(n, i0 + kRowsPerBlock);
          double phi_total = 0.0, abs_total = 0.0;
          for (Index i = i0; i < i1; ++i) rebuild_row(i, loss, *scratch, &phi_total, &abs_total, consumer);
          phi_part[static_cast<std::size_t>(block)] = phi_total;
          abs_part[static_cast<std::size_t>(block)] = abs_total;
        } catch (...) {
#pragma omp critical(sdprl_entry_rebuild_failure)
          if (!failure) failure = std::current_exception();
        }
      }
    }
    if (failure) std::rethrow_exception(failure);
    *phi_sum = 0.0;
    *weighted_abs_sum = 0.0;
    for (Index block = 0; block < blocks; ++block) {
      *phi_sum += phi_part[static_cast<std::size_t>(block)];
      *weighted_abs_sum += abs_part[static_cast<std::size_t>(block)];
    }
    grams_valid_ = true;
  }

  Index size() const override { return b_.size(); }
  const Vector& offsets() const override { return b_; }

  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    if (mode_ == SplitMode::kRowSplit) {
      row_dots(D, out.data());
      out.array() *= scale_.array();
    } else {
      // <D, (w/2)(e_i x_j^T + e_j x_i^T)> = (w/2)(d_i . x_j + d_j . x_i); for i = j, w d_i . x_i.
      // Each half d_i . x_j by rows of the CSR (row_dots), where d_i is read once for four
      // partners, then the halves added by term.
      Vector half(row_ptr_[terms_.dimension()]);
      row_dots(D, half.data());
      const Index m = size();
#pragma omp parallel for schedule(static) if (m * X_.cols() > detail::kParallelWork)
      for (Index k = 0; k < m; ++k) {
        const Index p = halves_[2 * k], q = halves_[2 * k + 1];
        out[k] = p == q ? scale_[k] * half[p] : 0.5 * scale_[k] * (half[p] + half[q]);
      }
    }
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    out.setZero(X_.rows(), X_.cols());
    if (mode_ == SplitMode::kRowSplit) {
      row_axpys([&](Index, Index p) { return y[p] * scale_[p]; }, out);
    } else {
      // Row i of P*(y) = sum over the terms touching i of (w y / 2) x_partner, once per appearance
      // (a diagonal term appears once with w y): by rows over the CSR, so that rows are
      // independent (no scatter) and each sum has a fixed order.
      row_axpys([&](Index i, Index p) { return coefficient(i, p) * y[term_[p]] * scale_[term_[p]]; }, out);
    }
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override {
    out = curvature_.asDiagonal() * D;
  }
  bool curvature_is_diagonal() const override { return true; }
  void curvature_diagonal(Vector& d) const override { d = curvature_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }

  // Row-split: half-term p of row i is P_p = e_i a_p^T with a_p = scale_p x_partner(p).
  const RowSplitView* row_split() const override { return mode_ == SplitMode::kRowSplit ? this : nullptr; }
  OnePassUpdate* one_pass() override { return mode_ == SplitMode::kRowSplit ? this : nullptr; }
  const GramSummary* gram_summary() const override { return this; }
  const Index* row_offsets() const override { return row_ptr_.data(); }
  void row_vectors(Index i, double* out) const override { gather_partners(i, out, /*scaled=*/true); }

  // The row stride of the gather's copy of X: r rounded up to 2, 4 or 8 doubles (16, 32 or 64
  // bytes), so that with a 64-byte aligned base no row of a rank up to 8 straddles two cache lines.
  // With r = 5 a packed row (40 bytes) touches 1.5 lines on average: the gather's reads of the
  // partner rows, random and from L3 once X outgrows L2 (m of about 25000), are its cost.
  static constexpr Index gather_stride(Index r) { return r <= 2 ? r : r <= 4 ? 4 : r <= 8 ? 8 : r; }

  // X_ = X, and the gather's padded, aligned copy of it.
  void set_point(const Matrix& X) {
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

  // The partner rows of row i's half-terms, component-major (out[c * deg + q]), times scale_h when
  // `scaled` (then they are the a_h).
  void gather_partners(Index i, double* out, bool scaled) const {
    if (prefetch_next_row_)
      gather_rank<true>(i, out, scaled);
    else
      gather_rank<false>(i, out, scaled);
  }

  // The prefetch decision is a template parameter: a test inside the gather's loop cost 4-5% per
  // ADMM iteration at m = 2000, where it is always false.
  // A fixed rank (detail::with_rank, as the ADMM's row kernels) unrolls the gather of r doubles per
  // half-term; the products are the same at any rank, fixed or dynamic.
  template <bool Prefetch>
  void gather_rank(Index i, double* out, bool scaled) const {
    detail::with_rank(X_.cols(), [&](auto R) { gather<decltype(R)::value, Prefetch>(i, out, scaled); });
  }

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

  void rebuild_row(Index i, const Loss& loss, RebuildScratch& s, double* phi_total, double* abs_total,
                   RowConsumer* consumer) {
    const Index r = X_.cols(), begin = row_ptr_[i], deg = row_ptr_[i + 1] - begin;
    double* block = grams_.data() + i * r * r;
    curvature_[i] = 0.0;
    if (deg == 0) {
      std::fill(block, block + r * r, 0.0);
      if (consumer) consumer->consume_row(i, nullptr, 0, block, 0.0);
      return;
    }
    // The row's targets are read, and its scale and b written, only after its partner rows are
    // gathered: asking for their cache lines first lets the gather (bound by the latency of its
    // random reads of X) hide their transfer, as the ADMM's fused row pass does.
    for (Index p = begin; p < begin + deg; p += 8) {
      __builtin_prefetch(target_.data() + p);
      __builtin_prefetch(scale_.data() + p, 1);
      __builtin_prefetch(b_.data() + p, 1);
    }
    double* rows = s.rows.data();
    gather_partners(i, rows, /*scaled=*/false);
    using Arr = Eigen::Map<Eigen::ArrayXd>;
    using ConstArr = Eigen::Map<const Eigen::ArrayXd>;
    const double* xi = X_.data() + i * r;
    Arr residual(s.residual.data(), deg), scale(scale_.data() + begin, deg), coef(s.coef.data(), deg);
    // Both halves of a term compute the same products in the same order: bitwise the same r.
    double* res = s.residual.data();
    std::fill(res, res + deg, 0.0);
    for (Index c = 0; c < r; ++c)  // c outermost: contiguous in q, vectorised
      for (Index q = 0; q < deg; ++q) res[q] += xi[c] * rows[c * deg + q];
    residual -= ConstArr(target_.data() + begin, deg);
    s.abs_residual = residual.abs().matrix();  // reallocates when deg changes: Loss::evaluate takes Vectors
    loss.evaluate(s.abs_residual, s.phi, s.w);
    // coefficient(i, p), then scale = w coef, b = scale r / 2 (as in update()), C_ii = sum scale; as
    // whole-array expressions so that they vectorise (no loop-carried sums through memory).
    for (Index q = 0; q < deg; ++q) coef[q] = coefficient(i, begin + q);
    scale = s.w.array() * coef;
    Arr(b_.data() + begin, deg) = 0.5 * scale * residual;
    const double d = scale.sum();
    curvature_[i] = d;
    // The two halves of a term carry 1/2 each: the sums count every term once.
    *phi_total += (coef * s.phi.array()).sum();
    *abs_total += (scale * s.abs_residual.array()).sum();
    // a_h = scale_h x_partner(h), in place, then the block sum_h a_h a_h^T.
    for (Index c = 0; c < r; ++c)
      for (Index q = 0; q < deg; ++q) rows[c * deg + q] *= scale_[begin + q];
    detail::row_block_gram(rows, deg, r, block);
    if (consumer) consumer->consume_row(i, rows, deg, block, d);
  }

  // A half-term's share of its term: 1/2 for each half of an off-diagonal term, 1 for a diagonal one.
  double coefficient(Index i, Index p) const { return partner_[p] == i ? 1.0 : 0.5; }

  // c_p in row i's Gram block sum_p c_p^2 x_partner x_partner^T (CSR half-term p): its scale
  // row-split (a_p = scale_p x_partner), the term's weight times coefficient(i, p) coupled.
  double gram_weight(Index i, Index p) const {
    return mode_ == SplitMode::kRowSplit ? scale_[p] : coefficient(i, p) * scale_[term_[p]];
  }

  // out.row(i) += sum over the CSR's half-terms p of row i of a(i, p) x_partner(p), four partners at
  // a time so that the row's running sum is read and written once per four (it was three memory
  // operations per multiply-add with one at a time). `out` is zero on entry.
  template <class Coefficient>
  void row_axpys(const Coefficient& a, Matrix& out) const {
    const Index n = terms_.dimension(), r = X_.cols();
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
  void row_dots(const Matrix& D, double* __restrict half) const {
    const Index n = terms_.dimension(), r = X_.cols();
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

  // The partner rows scattered into component-major order. For a fixed rank of at least 4, four
  // half-terms at a time: each partner row's first four entries in one load, a 4 x 4 transpose in
  // registers and four vector stores, instead of sixteen scalar moves. This gather was half of the
  // row-split ADMM iteration's time (it runs once per row and iteration, fused_iteration() in
  // row_kernel.cc); the transposed form took 12-17% off that iteration at m = 10^4. The products
  // s x are the same as the scalar loop's, so either form gives bitwise the same a_h.
  template <int R, bool Prefetch>
  void gather(Index i, double* out, bool scaled) const {
    const Index r = R == Eigen::Dynamic ? X_.cols() : R;
    const Index stride = R == Eigen::Dynamic ? stride_ : gather_stride(R);
    const Index begin = row_ptr_[i], deg = row_ptr_[i + 1] - begin;
    const double* X = padded_;
    const std::int32_t* partner = partner_.data() + begin;
    // In a local: the stores to `out` could alias scale_'s own pointer, so the compiler would
    // otherwise reload it from *this for every four half-terms.
    const double* scale = scale_.data() + begin;
    // Beyond detail::kPrefetchSplitTerms, where X and the streams come from L3 and memory:
    // (1) the next row's partner indices and scales, sequential but not followed by the hardware
    // prefetcher between the random reads of X; (2) the partner row kPartnerAhead half-terms
    // ahead (into the next row at the end of this one, and into partner_'s padding after the last
    // row), into L2 (prefetcht1), whose indices (1) has brought in. The out-of-order core alone
    // keeps too few of these misses in flight.
    // ADMM iteration at m = 10^5, 1 thread: (1) -6%, (2) a further -7% (64 -> 59 ms); MM step
    // 202 -> 180 ms. (2) without (1) did not help: its own reads of the indices missed.
    if (Prefetch && i + 1 < terms_.dimension()) {
      const Index next = row_ptr_[i + 1], next_end = row_ptr_[i + 2];
      for (Index p = next; p < next_end; p += 16) __builtin_prefetch(partner_.data() + p);
      if (scaled)
        for (Index p = next; p < next_end; p += 8) __builtin_prefetch(scale_.data() + p);
    }
    auto prefetch_partner = [&](Index q) {
      __builtin_prefetch(X + static_cast<Index>(partner[q + kPartnerAhead]) * stride, 0, 2);
    };
    Index q = 0;
#if defined(__AVX2__)
    if constexpr (R != Eigen::Dynamic && R >= 4) {
      for (; q + 4 <= deg; q += 4) {
        if constexpr (Prefetch)
          for (Index t = 0; t < 4; ++t) prefetch_partner(q + t);
        const double* x0 = X + static_cast<Index>(partner[q]) * stride;
        const double* x1 = X + static_cast<Index>(partner[q + 1]) * stride;
        const double* x2 = X + static_cast<Index>(partner[q + 2]) * stride;
        const double* x3 = X + static_cast<Index>(partner[q + 3]) * stride;
        const __m256d s = scaled ? _mm256_loadu_pd(scale + q) : _mm256_set1_pd(1.0);
        // Rows (x0[0..3]) .. (x3[0..3]) -> columns (x0[c], x1[c], x2[c], x3[c]), c = 0..3.
        const __m256d r0 = _mm256_loadu_pd(x0), r1 = _mm256_loadu_pd(x1);
        const __m256d r2 = _mm256_loadu_pd(x2), r3 = _mm256_loadu_pd(x3);
        const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
        const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
        _mm256_storeu_pd(out + q, _mm256_mul_pd(s, _mm256_permute2f128_pd(t0, t2, 0x20)));
        _mm256_storeu_pd(out + deg + q, _mm256_mul_pd(s, _mm256_permute2f128_pd(t1, t3, 0x20)));
        _mm256_storeu_pd(out + 2 * deg + q, _mm256_mul_pd(s, _mm256_permute2f128_pd(t0, t2, 0x31)));
        _mm256_storeu_pd(out + 3 * deg + q, _mm256_mul_pd(s, _mm256_permute2f128_pd(t1, t3, 0x31)));
        for (int c = 4; c < R; ++c)
          _mm256_storeu_pd(out + c * deg + q, _mm256_mul_pd(s, _mm256_set_pd(x3[c], x2[c], x1[c], x0[c])));
      }
    }
#endif
    for (; q < deg; ++q) {
      if constexpr (Prefetch) prefetch_partner(q);
      const double s = scaled ? scale[q] : 1.0;
      const double* x = X + static_cast<Index>(partner[q]) * stride;
      for (Index c = 0; c < r; ++c) out[c * deg + q] = s * x[c];
    }
  }

  // Block i is sum_p c_p^2 x_partner x_partner^T (c_p = gram_weight(i, p)), so its trace is
  // sum_p c_p^2 |x_partner|^2: one pass over the CSR with the n squared row norms of X, not the
  // n r^2 doubles of the blocks.
  void gram_row_traces(Vector& traces) const override {
    const Index n = terms_.dimension();
    const Vector norms = X_.rowwise().squaredNorm();
    traces.resize(n);
#pragma omp parallel for schedule(static) if (row_ptr_[n] > detail::kParallelWork)
    for (Index i = 0; i < n; ++i) {
      double t = 0.0;
      for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p) {
        const double c = gram_weight(i, p);
        t += c * c * norms[partner_[p]];
      }
      traces[i] = t;
    }
  }
  bool shared_gram_block(Matrix&) const override { return false; }

  void gram_row_blocks(Matrix& blocks) const override {
    const Index n = terms_.dimension(), r = X_.cols();
    if (mode_ == SplitMode::kRowSplit) {
      // Block i = sum_h a_h a_h^T over the row's half-terms: computed by update_with_loss from
      // the rows it gathered anyway, else from row_vectors().
      if (grams_valid_)
        blocks = grams_;
      else
        detail::row_gram_blocks(*this, row_ptr_.data(), n, r, max_degree_, blocks);
      return;
    }
    // Coupled: block i of P*P (the CG preconditioner) is sum_k c_k^2 x_partner x_partner^T over
    // the terms touching row i, c_k = w_k for a diagonal term and w_k / 2 for an off-diagonal one
    // (P_k = (w/2)(e_i x_j^T + e_j x_i^T) restricted to row i): the Gram of the rows c_k x_partner,
    // gathered per row and summed by the same kernel as the row-split blocks.
    blocks.resize(n * r, r);
#pragma omp parallel if (size() * r * r > detail::kParallelWork)
    {
      std::vector<double> a(static_cast<std::size_t>(std::max<Index>(max_degree_, 1) * r));
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        const Index begin = row_ptr_[i], deg = row_ptr_[i + 1] - begin;
        gather_partners(i, a.data(), /*scaled=*/false);
        for (Index q = 0; q < deg; ++q) {
          const double c = gram_weight(i, begin + q);
          for (Index col = 0; col < r; ++col) a[col * deg + q] *= c;
        }
        detail::row_block_gram(a.data(), deg, r, blocks.data() + i * r * r);
      }
    }
  }

 private:
  const EntryTerms& terms_;
  SplitMode mode_;
  std::vector<Index> row_ptr_;
  std::vector<std::int32_t> partner_, term_;
  std::vector<std::int32_t> halves_;  // coupled mode: term k's half-terms at 2k, 2k + 1 (equal when diagonal)
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
};

}  // namespace

EntryTerms::EntryTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols,
                       Vector targets)
    : n_(n), rows_(std::move(rows)), cols_(std::move(cols)), targets_(std::move(targets)) {
  if (n <= 0) throw Error("", "entry terms: dimension must be positive, got " + std::to_string(n));
  if (rows_.size() != cols_.size() || static_cast<Index>(rows_.size()) != targets_.size())
    throw Error("", "entry terms: rows, cols and targets differ in length");
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (rows_[k] < 0 || rows_[k] >= n || cols_[k] < 0 || cols_[k] >= n)
      throw Error("", "entry term " + std::to_string(k) + ": index (" + std::to_string(rows_[k]) +
                          ", " + std::to_string(cols_[k]) + ") outside [0, " + std::to_string(n) + ")");
    if (!std::isfinite(targets_[static_cast<Index>(k)]))
      throw Error("", "entry term " + std::to_string(k) + ": target is not finite");
  }
}

EntryTerms::~EntryTerms() = default;

void EntryTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < size(); ++k) values[k] = X.row(rows_[k]).dot(X.row(cols_[k]));
}

void EntryTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  out.setZero(V.rows(), V.cols());
  // sym(e_i e_j^T) V = (e_i v_j^T + e_j v_i^T) / 2, scattered into two rows per term.
  auto scatter = [&](Index begin, Index end, Matrix& acc) {
    if (V.cols() == 1) {  // the spectral start's Lanczos vectors: plain scalars, no 1-wide row views
      const double* v = V.data();
      double* o = acc.data();
      for (Index k = begin; k < end; ++k) {
        const double a = 0.5 * y[k];
        const Index i = rows_[k], j = cols_[k];
        o[i] += a * v[j];
        o[j] += a * v[i];
      }
      return;
    }
    for (Index k = begin; k < end; ++k) {
      const double a = 0.5 * y[k];
      acc.row(rows_[k]).noalias() += a * V.row(cols_[k]);
      acc.row(cols_[k]).noalias() += a * V.row(rows_[k]);
    }
  };
  // The spectral start applies this some hundred times (a third of the start at m = 10^5). The
  // terms are cut into a number of contiguous chunks that depends on their count only (each at
  // least kChunkTerms terms, at most kMaxChunks chunks); each chunk is scattered into a zeroed
  // n x k matrix and the chunks are added to `out` in chunk order, so the result is bitwise the
  // same for any thread count. Fewer than 2 kChunkTerms terms: one chunk, scattered into `out`
  // directly (as before chunking). At most kMaxChunks threads share the work, each holding one
  // n x k matrix; the in-order additions are hand-offs between threads, which a spinning thread
  // on a busy machine slows down (OMP_WAIT_POLICY=passive, as for the row loops).
  constexpr Index kChunkTerms = 100000, kMaxChunks = 8;
  const Index chunks = std::min(kMaxChunks, size() / kChunkTerms);
  if (chunks <= 1) {
    scatter(0, size(), out);
    return;
  }
#pragma omp parallel
  {
    Matrix acc;
#pragma omp for ordered schedule(static, 1)
    for (Index c = 0; c < chunks; ++c) {
      acc.setZero(V.rows(), V.cols());
      scatter(size() * c / chunks, size() * (c + 1) / chunks, acc);
#pragma omp ordered
      out += acc;
    }
  }
}

std::unique_ptr<TermLinearization> EntryTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<EntryLinearization>(*this, mode);
}

}  // namespace sdprl
