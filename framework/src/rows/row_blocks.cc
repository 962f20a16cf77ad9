// Row blocks shared by the term families and the ADMM (row_blocks.h).
#include "rows/row_blocks.h"

#include <algorithm>

namespace sdprl::detail {
namespace {

// The products of columns c1 in [C0, C1) with columns c2 >= c1 of the (deg x R) matrix A (stored
// column by column) into the block's entries (c1, c2) and (c2, c1): one pass over the terms with
// each product accumulated in eight lanes, R - C0 loads per eight terms instead of two per product
// (separate dot products were load-bound). A fixed order of additions per entry, so the block does
// not depend on the thread that computes it, nor on how the columns are tiled.
template <int R, int C0, int C1>
void gram_tile(const double* a, Index deg, double* block) {
  constexpr int kPairs = (C1 - C0) * (2 * R - C0 - C1 + 1) / 2;
  Lanes acc[kPairs];
  for (Lanes& l : acc) l.setZero();
  Index q = 0;
  for (; q + 8 <= deg; q += 8) {
    Lanes v[R];
    for (int c = C0; c < R; ++c) v[c] = Eigen::Map<const Lanes>(a + c * deg + q);
    int k = 0;
    for (int c1 = C0; c1 < C1; ++c1)
      for (int c2 = c1; c2 < R; ++c2) acc[k++] += v[c1] * v[c2];
  }
  double tail[kPairs] = {};
  for (; q < deg; ++q) {
    int k = 0;
    for (int c1 = C0; c1 < C1; ++c1)
      for (int c2 = c1; c2 < R; ++c2) tail[k++] += a[c1 * deg + q] * a[c2 * deg + q];
  }
  int k = 0;
  for (int c1 = C0; c1 < C1; ++c1)
    for (int c2 = c1; c2 < R; ++c2, ++k) block[c1 * R + c2] = block[c2 * R + c1] = add_lanes(acc[k], tail[k]);
}

// Block = A^T A for the (deg x r) matrix A of the a_h, stored column by column (no GEMM packing for
// these short, thin blocks).
template <int R>
void block_gram(const double* a, Index deg, Index r, double* block) {
  if constexpr (R != Eigen::Dynamic && R <= 8) {
    gram_tile<R, 0, R>(a, deg, block);
  } else if constexpr (R != Eigen::Dynamic) {
    // Rank 10's 55 products in one pass would need 55 accumulators, more than the 32 vector
    // registers of AVX-512, and spill: three passes over the row's columns (in L1) with 27, 18 and
    // 10 of them. The same sums in the same order as one pass.
    static_assert(R == 10, "tile the columns of another fixed rank here");
    gram_tile<R, 0, 3>(a, deg, block);
    gram_tile<R, 3, 6>(a, deg, block);
    gram_tile<R, 6, 10>(a, deg, block);
  } else {
    // A symmetric rank-deg update (Eigen's blocked SYRK) for the lower triangle, mirrored, instead
    // of one dot product per entry (a seventh of an MM step at rank 60, coupled Xt-step).
    const Eigen::Map<const Eigen::MatrixXd> T(a, deg, r);
    Eigen::Map<Eigen::MatrixXd> B(block, r, r);  // symmetric, so either storage order
    B.setZero();
    B.selfadjointView<Eigen::Lower>().rankUpdate(T.transpose());
    for (Index c1 = 0; c1 < r; ++c1)
      for (Index c2 = c1 + 1; c2 < r; ++c2) B(c1, c2) = B(c2, c1);
  }
}

template <int R>
void grams(const RowSplitView& lin, const Index* offsets, Index n, Index r, Index max_degree, Matrix& gram) {
  gram.resize(n * r, r);
#pragma omp parallel
  {
    const std::size_t size = static_cast<std::size_t>(std::max<Index>(max_degree, 1) * r);
    std::vector<double> buf(size);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      double* block = gram.data() + i * r * r;
      const Index deg = offsets[i + 1] - offsets[i];
      if (deg == 0) {
        std::fill(block, block + r * r, 0.0);
        continue;
      }
      lin.row_vectors(i, buf.data());
      block_gram<R>(buf.data(), deg, r, block);
    }
  }
}

}  // namespace

HalfTermCsr half_term_csr(Index n, const std::vector<std::int32_t>& rows, const std::vector<std::int32_t>& cols,
                          bool diagonal_once, bool with_halves, Index padding) {
  const Index m = static_cast<Index>(rows.size());
  HalfTermCsr csr;
  // Count half-terms per row, then fill (counting sort keeps the original term order per row).
  csr.row_ptr.assign(n + 1, 0);
  for (Index k = 0; k < m; ++k) {
    ++csr.row_ptr[rows[k] + 1];
    if (!diagonal_once || rows[k] != cols[k]) ++csr.row_ptr[cols[k] + 1];
  }
  for (Index i = 0; i < n; ++i) csr.row_ptr[i + 1] += csr.row_ptr[i];
  const Index h = csr.row_ptr[n];
  csr.partner.assign(static_cast<std::size_t>(h + padding), 0);
  csr.term.resize(static_cast<std::size_t>(h));
  if (with_halves) csr.halves.resize(2 * static_cast<std::size_t>(m));
  std::vector<Index> fill(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
  for (Index k = 0; k < m; ++k) {
    const std::int32_t i = rows[k], j = cols[k];
    const auto t = static_cast<std::int32_t>(k);
    const Index p = fill[i]++;
    csr.partner[p] = j, csr.term[p] = t;
    Index q = p;
    if (!diagonal_once || i != j) {
      q = fill[j]++;
      csr.partner[q] = i, csr.term[q] = t;
    }
    if (with_halves) {
      csr.halves[2 * k] = static_cast<std::int32_t>(p);
      csr.halves[2 * k + 1] = static_cast<std::int32_t>(q);
    }
  }
  return csr;
}

Index max_row_degree(const Index* offsets, Index n) {
  Index deg = 0;
  for (Index i = 0; i < n; ++i) deg = std::max(deg, offsets[i + 1] - offsets[i]);
  return deg;
}

void row_block_gram(const double* a, Index deg, Index r, double* block) {
  with_rank(r, [&](auto R) { block_gram<decltype(R)::value>(a, deg, r, block); });
}

void row_gram_blocks(const RowSplitView& rows, const Index* offsets, Index n, Index r, Index max_degree,
                     Matrix& gram) {
  with_rank(r, [&](auto R) { grams<decltype(R)::value>(rows, offsets, n, r, max_degree, gram); });
}

}  // namespace sdprl::detail
