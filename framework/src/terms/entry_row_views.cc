// EntryLinearization's capability views (see entry_linearization.h): the row split's gathered
// partner rows, the one-pass update with the loss, and the Gram summaries of P*P.
#include "terms/entry_linearization.h"

#include <exception>
#include <optional>

#include "admm/row_kernel.h"
#include "parallel/processes.h"
#include "rows/row_blocks.h"
#include "sdprl/loss.h"

#if defined(__AVX2__)
#include <immintrin.h>  // the transposed gather of gather()
#endif

namespace sdprl::detail {

void EntryLinearization::row_vectors(Index i, double* out) const { gather_partners(i, out, /*scaled=*/true); }

// The prefetch decision is a template parameter: a test inside the gather's loop cost 4-5% per
// ADMM iteration at m = 2000, where it is always false.
// A fixed rank (detail::with_rank, as the ADMM's row kernels) unrolls the gather of r doubles per
// half-term; the products are the same at any rank, fixed or dynamic.
template <bool Prefetch>
void EntryLinearization::gather_rank(Index i, double* out, bool scaled) const {
  detail::with_rank(X_.cols(), [&](auto R) { gather<decltype(R)::value, Prefetch>(i, out, scaled); });
}

// The partner rows scattered into component-major order. For a fixed rank of at least 4, four
// half-terms at a time: each partner row's first four entries in one load, a 4 x 4 transpose in
// registers and four vector stores, instead of sixteen scalar moves. This gather was half of the
// row-split ADMM iteration's time (it runs once per row and iteration, fused_iteration() in
// row_kernel.cc); the transposed form took 12-17% off that iteration at m = 10^4. The products
// s x are the same as the scalar loop's, so either form gives bitwise the same a_h.
template <int R, bool Prefetch>
void EntryLinearization::gather(Index i, double* out, bool scaled) const {
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

// One pass per row over its half-terms (row-split only): gather the partner rows x_j, the
// residuals r = <x_i, x_j> - t (both halves of a term compute the same products in the same
// order, so they see bitwise the same r), phi and w = phi'(|r|) in one Loss::evaluate call per
// row, then scale, b and C as update() sets them, and the row's Gram block of P*P from the same
// gathered rows (gram_row_blocks() hands it to the ADMM instead of gathering again). Rows in
// parallel; the sums are added per block of rows in a fixed order, so that they do not depend
// on the thread count.
void EntryLinearization::update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum,
                                          double* weighted_abs_sum, RowConsumer* consumer) {
  static_assert(kRowsPerBlock == kRowChunk, "the rebuild's blocks are the row pass's chunks");
  set_point(X);
  const Index n = terms_.dimension(), r = X_.cols();
  grams_.resize(n * r, r);
  const Index blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  // phi and weighted |r| per block, interleaved (2 doubles a block), added in block order below.
  std::vector<double> parts(static_cast<std::size_t>(2 * blocks), 0.0);
  // Under several processes the fused pass consumes its own rows only, so each process rebuilds
  // those (its blocks of rows are the pass's chunks: detail::row_shares, kRowsPerBlock = 64 rows
  // as the pass's chunks) and the parts and the curvature are shared; the rest waits for complete().
  others_stale_.clear();
  stale_loss_ = nullptr;
  if (consumer && processes::distributed()) {
    const RowShares shares = row_shares(row_ptr_.data(), n);
    const auto me = static_cast<std::size_t>(processes::rank());
    rebuild_blocks(shares.chunks[me], shares.chunks[me + 1], loss, consumer, parts.data(), parts.data() + 1);
    processes::share_items(parts.data(), shares.chunks, 2);
    processes::share_items(curvature_.data(), shares.rows, 1);
    others_stale_ = shares.rows;
    stale_loss_ = &loss;
  } else {
    rebuild_blocks(0, blocks, loss, consumer, parts.data(), parts.data() + 1);
  }
  *phi_sum = 0.0;
  *weighted_abs_sum = 0.0;
  for (Index block = 0; block < blocks; ++block) {
    *phi_sum += parts[static_cast<std::size_t>(2 * block)];
    *weighted_abs_sum += parts[static_cast<std::size_t>(2 * block + 1)];
  }
  grams_valid_ = true;
}

void EntryLinearization::rebuild_blocks(Index block_begin, Index block_end, const Loss& loss, RowConsumer* consumer,
                                        double* phi_part, double* abs_part) {
  const Index n = terms_.dimension(), r = X_.cols();
  // An exception must not leave an OpenMP region (that terminates the program): the first one
  // (a user's loss that throws, an allocation) is kept and rethrown after it.
  std::exception_ptr failure;
#pragma omp parallel
  {
    std::optional<RebuildScratch> scratch;
#pragma omp for schedule(static)
    for (Index block = block_begin; block < block_end; ++block) {
      try {
        if (!scratch) scratch.emplace(max_degree_, r);
        const Index i0 = block * kRowsPerBlock, i1 = std::min(n, i0 + kRowsPerBlock);
        double phi_total = 0.0, abs_total = 0.0;
        for (Index i = i0; i < i1; ++i) rebuild_row(i, loss, *scratch, &phi_total, &abs_total, consumer);
        if (phi_part) phi_part[2 * block] = phi_total;
        if (abs_part) abs_part[2 * block] = abs_total;
      } catch (...) {
#pragma omp critical(sdprl_entry_rebuild_failure)
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

void EntryLinearization::complete() const {
  if (others_stale_.empty()) return;  // (read without the lock: set and cleared between passes)
  const std::lock_guard<std::mutex> lock(complete_mutex_);
  if (others_stale_.empty()) return;
  // The object is never const itself; complete() is const so that the const readers can call it.
  auto& self = const_cast<EntryLinearization&>(*this);
  const Index n = terms_.dimension();
  const Index blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  const auto me = static_cast<std::size_t>(processes::rank());
  const Index mine_begin = others_stale_[me] / kRowsPerBlock;
  const Index mine_end = (others_stale_[me + 1] + kRowsPerBlock - 1) / kRowsPerBlock;
  // The same rows with the same loss and X: the same bits as the whole rebuild (the curvature,
  // shared already, is written again with its own value).
  self.rebuild_blocks(0, mine_begin, *stale_loss_, nullptr, nullptr, nullptr);
  self.rebuild_blocks(mine_end, blocks, *stale_loss_, nullptr, nullptr, nullptr);
  self.others_stale_.clear();
  self.stale_loss_ = nullptr;
}

void EntryLinearization::rebuild_row(Index i, const Loss& loss, RebuildScratch& s, double* phi_total,
                                     double* abs_total, RowConsumer* consumer) {
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

// Block i is sum_p c_p^2 x_partner x_partner^T (c_p = gram_weight(i, p)), so its trace is
// sum_p c_p^2 |x_partner|^2: one pass over the CSR with the n squared row norms of X, not the
// n r^2 doubles of the blocks.
void EntryLinearization::gram_row_traces(Vector& traces) const {
  complete();
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

void EntryLinearization::gram_row_blocks(Matrix& blocks) const {
  complete();
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

}  // namespace sdprl::detail
