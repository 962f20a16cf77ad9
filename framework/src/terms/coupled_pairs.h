// Internal: whole pair terms on the exact surrogate with a diagonal curvature, as the dual
// coordinate step reads them (xt_step/dual_coordinate.h; docs/method.md section 3.9). Term k
// touches rows i = pair_terms().rows()[k] and j = pair_terms().cols()[k]; with s = term_scales()
// and x the rows of point():
//   kEntry:    P_k = (s_k / 2)(e_i x_j^T + e_j x_i^T), or s_k e_i x_i^T when i = j;
//   kDistance: P_k = s_k (e_i - e_j)(x_i - x_j)^T   (i != j).
#pragma once

#include "sdprl/terms/term_data.h"

namespace sdprl::detail {

enum class PairFamily { kEntry, kDistance };

class CoupledPairs {
 public:
  virtual PairFamily family() const = 0;
  virtual const PairTerms& pair_terms() const = 0;
  virtual const Vector& term_scales() const = 0;
  virtual const Matrix& point() const = 0;
  // Whether the linearisation is in coupled mode (whole terms) with a diagonal curvature.
  virtual bool whole_terms_diagonal() const = 0;
  // Replaces the curvature by a diagonal majorant that is tight at D = 0 (the curvature term is
  // quadratic in D), so that H stays a majoriser tight to first order at X_k. Takes effect at the
  // next update(). A no-op where the curvature is diagonal already.
  virtual void use_diagonal_curvature() = 0;

 protected:
  ~CoupledPairs() = default;
};

// `lin`'s view, when it is a pair family in coupled mode with a diagonal curvature; else nullptr.
inline const CoupledPairs* coupled_pairs(const TermLinearization& lin) {
  const auto* view = dynamic_cast<const CoupledPairs*>(&lin);
  return view && view->whole_terms_diagonal() ? view : nullptr;
}

}  // namespace sdprl::detail
