// Rank-one terms, Q_tau = a_tau a_tau^T: <X, Q_tau X> = ||a_tau^T X||^2 (docs/method.md section 1,
// "dense" row of the family table, with the structure used). The centering constraint of
// (robust) MVU, 1^T Z 1 = 0, is the rank-one term a = 1 with target 0 (RankOneTerms::centering).
//
// Q = a a^T is PSD, so |sym Q| = Q and the curvature C = sum w a a^T is applied as
// A (w .* (A^T D)) with A = [a_1 ... a_m]: O(m n r), nothing n x n. With v = a^T X_k (1 x r) the
// linear part is 2 <D, Q X_k> = 2 (a^T D) . v, so every split term is the whole term,
//     P = w a v   (n x r, rank one),   b = w r / 2,
// in both split modes. A row split (docs/method.md section 3) is possible in principle: by the
// triangle inequality |sum_i a_i d_i.v + r/2| <= sum_i |a_i d_i.v + pi_i r/2| with pi_i =
// |a_i| / ||a||_1, and (a^T D)^2 <= ||a||_1 sum_i |a_i| ||d_i||^2 bounds the curvature by a diagonal.
// But for a dense a (a = 1: every row) that diagonal is ||a||_1 |a_i| = n times the exact one,
// which would shrink every MM step by about n; kept whole, the term only adds a rank-r coupling
// that the CG of the Xt-step, preconditioned by the row blocks, resolves in a few iterations. So
// SplitMode is ignored and rows_decoupled() is false, unless every a_tau has at most one nonzero
// (then a a^T is diagonal and both flags are true).
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Dense>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"

namespace sdprl {

class SDPRL_API RankOneTerms final : public ConstraintSet {
 public:
  // a[k] (length n, finite, not all zero) and targets[k] = t_k. Throws Error otherwise.
  RankOneTerms(Index n, const std::vector<Vector>& a, Vector targets);
  ~RankOneTerms() override;

  // The MVU centering term: a = 1, t = target (default 0), i.e. 1^T Z 1 = ||1^T X||^2 = target.
  static RankOneTerms centering(Index n, double target = 0.0);

  std::string family() const override { return "rank-one"; }
  Index dimension() const override { return vectors_.rows(); }
  Index size() const override { return vectors_.cols(); }
  const Vector& targets() const override { return targets_; }
  void evaluate(const Matrix& X, Vector& values) const override;
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;

  // A = [a_1 ... a_m] (n x m).
  const Eigen::MatrixXd& vectors() const { return vectors_; }
  // True when every a_tau has at most one nonzero: then C is diagonal and the rows decouple.
  bool single_entry() const { return single_entry_; }

 private:
  Eigen::MatrixXd vectors_;
  Vector targets_;
  bool single_entry_ = false;
};

}  // namespace sdprl
