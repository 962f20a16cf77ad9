// Row blocks of row-split linearisations: what the term families (framework/src/terms) and the
// ADMM's row kernels (framework/src/admm) share. A row-split split term is P_h = e_i a_h^T; the
// split terms of row i are numbered offsets[i] .. offsets[i+1]-1 (RowSplitView), and a row's a_h
// are stored component-major (a[c * deg + q]).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/types.h"

namespace sdprl::detail {

// Above this many split terms the row passes prefetch each row's streams (u and b of the row,
// and the entry terms' partner indices and scales of the next row) by hand. Those streams are
// read a row at a time between the gather's random reads of X, and the hardware prefetcher does
// not follow them; without the prefetch an ADMM iteration at m = 10^5 (23 million half-terms,
// some 830 MB of streams) took 86 ms instead of 68. Below, the streams stay in the last-level
// cache and the prefetch instructions only cost: at m = 2000 (300 thousand half-terms, 11 MB)
// 2-3% per iteration. 2^20 split terms are some 36 MB of streams, beyond this machine's 32 MB L3.
constexpr Index kPrefetchSplitTerms = Index{1} << 20;

// Below this many multiply-adds a pass over rows or terms runs on one thread: the fork and join of
// a parallel region (a few microseconds) would cost more than it saves.
constexpr Index kParallelWork = 1 << 16;

// Calls f(std::integral_constant<int, R>{}) with R = r for r <= 8 and r = 10, else R =
// Eigen::Dynamic: the one place where the rank becomes a template parameter (row kernels, Gram
// blocks, the entry terms' gather), so that the per-term loops over r doubles are unrolled and
// vectorised. Rank 10 is the rank of models/snmf_usps, cmvu_usps and npkl_a1a: its fixed kernels
// took snmf_usps from 11.6 to 8.9 s per lambda (medians of 3, same objective).
template <class F>
decltype(auto) with_rank(Index r, F&& f) {
  switch (r) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 10: return f(std::integral_constant<int, 10>{});
    default: return f(std::integral_constant<int, Eigen::Dynamic>{});
  }
}

// Eight doubles: one AVX-512 register, two AVX ones. The fixed-rank kernels keep their running sums
// in such lanes, so that one pass over a row's terms feeds several sums at once.
using Lanes = Eigen::Array<double, 8, 1>;

// The lanes added in order, after `start` (Eigen's sum() of an 8-lane packet trips GCC 12's
// -Wuninitialized inside the AVX-512 intrinsics, a false positive).
inline double add_lanes(const Lanes& lanes, double start) {
  double copy[8];
  Eigen::Map<Lanes> view(copy);
  view = lanes;
  for (const double x : copy) start += x;
  return start;
}

// The half-terms of pair terms (i, j) in CSR order by the row they touch: an off-diagonal term has
// one half-term in row i (partner j) and one in row j (partner i), in that order; the counting sort
// keeps the terms' order within each row.
struct HalfTermCsr {
  std::vector<Index> row_ptr;                // n + 1: row i's half-terms are row_ptr[i] .. row_ptr[i+1]-1
  std::vector<std::int32_t> partner, term;  // per half-term: the other row and the term
  std::vector<std::int32_t> halves;         // with_halves: term k's half-terms at 2k, 2k + 1
};

// A diagonal term (i = i) has one half-term when `diagonal_once` (entry terms: e_i e_i^T touches
// row i once), else two (distance terms). partner gets `padding` more entries (0: row 0) for a
// reader that looks ahead past the last half-term. halves (equal for a diagonal term counted
// once) only when `with_halves`.
HalfTermCsr half_term_csr(Index n, const std::vector<std::int32_t>& rows, const std::vector<std::int32_t>& cols,
                          bool diagonal_once, bool with_halves = false, Index padding = 0);

// max_i (offsets[i+1] - offsets[i]).
Index max_row_degree(const Index* offsets, Index n);

// block = A^T A (r x r, symmetric) for the deg x r matrix A stored column by column (a[c * deg + q]),
// as RowSplitView::row_vectors writes a row's a_h.
void row_block_gram(const double* a, Index deg, Index r, double* block);

// The r x r blocks sum_{h in row i} a_h a_h^T of P*P (rows i*r .. i*r + r - 1 of gram), from the
// a_h of RowSplitView::row_vectors: the same result as TermLinearization::gram_row_blocks.
void row_gram_blocks(const RowSplitView& rows, const Index* offsets, Index n, Index r, Index max_degree,
                     Matrix& gram);

}  // namespace sdprl::detail
