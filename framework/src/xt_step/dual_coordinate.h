// Internal: the kDualCoordinate strategy (xt_step/xt_step.h). The exact surrogate of pair terms
// (entry or distance terms in coupled mode, terms/coupled_pairs.h) with a diagonal B, and no
// constraint or one whose set is a product of one set per row (X >= 0: the multiplier mu of
// X_k + D in K is then the best for nu in closed form, bound_step), minimised through its dual
// (mm/surrogate.h)
//
//   max over |nu_h| <= 2 of  D(nu) = c + <nu, b> - (1/4) sum_i |M_i|^2 / B_ii,   M = G + P*(nu),
//
// by exact maximisation over one nu_h at a time (dual coordinate ascent). Term h = (i, j) has P_h
// nonzero in rows i and j only (entry: (w_h / 2)(e_i x_j^T + e_j x_i^T); distance:
// w_h (e_i - e_j)(x_i - x_j)^T), so its coordinate is a one-dimensional concave quadratic on an
// interval, maximised in closed form, and the update changes rows i and j of M alone: O(r) per
// term, the cost of a row-split ADMM iteration per sweep, with no rho and no linear system.
// Each run() iteration is one sweep over all terms followed by the primal point D = -B^{-1} M / 2
// and the gap H(D) - D(nu) (docs/method.md section 3.9).
//
// The sweep visits the terms in a fixed schedule of row blocks: the terms are bucketed by the pair
// of row blocks they touch, and a round-robin tournament of the blocks runs in rounds of buckets
// that share no row, so the buckets of a round go to the threads and every thread count takes the
// same steps in the same order (the iterates do not depend on it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xt_step/xt_step.h"

#include "terms/coupled_pairs.h"

namespace sdprl::xt_step {

class DualCoordinate final : public XtStep {
 public:
  DualCoordinate(const Surrogate& surrogate, const AdmmOptions& options, const detail::CoupledPairs& lin);
  Kind kind() const override { return Kind::kDualCoordinate; }
  void prepare(double rho, bool rebuild_preconditioner) override;
  void set_rho(double) override {}
  // Accepts no saved state but an empty one or CG's (ignored; see dual_coordinate.cc).
  void restore(const std::string& saved, Surrogate& surrogate, double rho, Matrix& D) override;
  // Never called: iterate_rows() is the whole iteration.
  void solve(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations) override;
  bool iterate_rows(AdmmState& state, double rho, double eps) override;


 private:
  // One term of the schedule, in schedule order so that a sweep reads them sequentially: its rows
  // i and j, c (entry: P_h = c (e_i x_j^T + e_j x_i^T), or c e_i x_i^T when i = j: w_h / 2 or
  // w_h; distance: P_h = c (e_i - e_j)(x_i - x_j)^T, c = w_h), b_h
  // and 1 / q_h (0 when q_h = 0), the last three set at every prepare().
  struct Term {
    std::int32_t i, j;
    double c, b, inv_q;
  };
  // One sweep over the terms of bucket k, or of buckets k and l interleaved term by term (they
  // share no row, so the result is that of k then l, and the two dependency chains overlap).
  // F: the family (detail::PairFamily) as a template parameter, as R is the rank.
  template <int R, detail::PairFamily F>
  void sweep_bucket(Index k, Matrix& M) const;
  template <int R, detail::PairFamily F>
  void sweep_two_buckets(Index k, Index l, Matrix& M) const;
  // A whole sweep (nu in the terms' order, copied into nu_), and the sums below over every bucket.
  template <int R, detail::PairFamily F>
  void sweep(const Vector& nu, Matrix& M, bool parallel) const;
  template <int R, detail::PairFamily F>
  void sums(const Matrix& D, double* terms, double* nu_b, bool parallel) const;
  // sum_h |<D, P_h> + b_h| and <nu, b> over the terms of bucket k.
  template <int R, detail::PairFamily F>
  void sums_bucket(Index k, const Matrix& D, double* terms, double* nu_b) const;

  // The subspace step (docs/method.md section 3.9): the free multipliers (strictly inside the
  // box) move together along a few CG iterations of D's Newton step on them, projected onto the
  // box and shortened to D's maximum along it. U = P_F^* v and out = P_F U over the free terms.
  template <int R, detail::PairFamily F>
  void subspace_step(Matrix& M, bool parallel) const;
  template <int R, detail::PairFamily F>
  void free_adjoint(const Vector& v, Matrix& U, bool parallel) const;
  template <int R, detail::PairFamily F>
  void free_forward(const Matrix& U, Vector& out, bool parallel) const;
  // Under a constraint whose set is one per row (xt_step::make_xt_step): mu <- the best for the
  // current nu, row by row, M following; D (if given) <- the feasible primal point.
  void bound_step(Matrix& M, Matrix& mu, Matrix* D, bool parallel) const;
  int sweeps_ = 0;                             // since the last prepare()
  mutable std::vector<std::int32_t> free_;     // schedule positions of the free multipliers
  mutable std::vector<Index> free_ptr_;        // bucket offsets into free_
  mutable std::vector<Term> free_terms_;       // their terms, in free_'s order
  const detail::CoupledPairs& lin_;
  // The schedule: term indices bucket by bucket (order_), the buckets' offsets into it
  // (bucket_ptr_), the rounds' offsets into the buckets (round_ptr_).
  std::vector<std::int32_t> order_, position_;  // position_[order_[q]] = q
  std::vector<Index> bucket_ptr_, round_ptr_;
  mutable std::vector<Term> terms_;  // in schedule order
  mutable Vector nu_;                // the multipliers in schedule order during a sweep
  Vector inv_b_;                     // 1 / B_ii at the last prepare()
  std::uint64_t token_ = 0;  // AdmmState::adjoint_generation of a state whose Pnu holds this M
};

}  // namespace sdprl::xt_step
