// Judging a point of a constrained SDP by its multipliers (sdp/judge.h).
#include "sdp/judge.h"

#include <cmath>
#include <limits>

namespace sdprl::sdp {

Judgement judge_multipliers(const Model& model, const Loss& loss, const RegularizationWeights& weights, double gamma_from,
                            double tolerance, const Matrix& X, double violation, const Vector& mu, double lambda_min) {
  Judgement j;
  const double slope = loss.derivative(0.0);
  j.weights = weights;
  j.weights.gamma = gamma_from;
  for (int k = 0; k < 12 && 0.5 * j.weights.gamma * mu.cwiseAbs().maxCoeff() > slope; ++k) j.weights.gamma /= 10.0;
  j.multipliers = (-0.5 * j.weights.gamma / slope) * mu;
  j.distance = std::numeric_limits<double>::infinity();
  if (violation > tolerance) return j;
  // F's S(y) at these multipliers is (gamma / 2) S.
  j.certificate = mm::certify(model, loss, j.weights, X, j.multipliers, 1, nullptr, true,
                              0.5 * j.weights.gamma * lambda_min);
  j.answer = mm::constrained_answer(model, j.weights, X, violation, j.certificate, tolerance);
  const double d = std::max(std::abs(j.answer.relative_gap), j.answer.dual_infeasibility);
  if (!std::isnan(d)) j.distance = d;
  return j;
}

}  // namespace sdprl::sdp
