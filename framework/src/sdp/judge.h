// Internal (not installed): how the SDP solvers that end with the SDP's own multipliers
// (sdp/augmented_lagrangian.h, sdp/interior_point.h) judge a point by them.
#pragma once

#include <cmath>

#include "mm/certificate.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::sdp {

struct Judgement {
  RegularizationWeights weights;  // gamma: the largest of the penalty path's where the l1 penalty is exact
  Vector multipliers;             // F's at that gamma, -(gamma / 2) mu / phi'(0)
  Certificate certificate;
  mm::ConstrainedAnswer answer;
  // max(|relative gap|, dual infeasibility) of the constrained answer; infinity where the point
  // violates the constraints by more than `tolerance` (then nothing is certified).
  double distance = 0.0;
};

// mu: the constrained SDP's multipliers, S = A - sum_i mu_i sym(Q_i). gamma is the largest of
// gamma_from, gamma_from / 10, ... (twelve at most) with |gamma mu_i / 2| <= phi'(0): there the l1
// penalty is exact (docs/method.md section 9), and F's certificate and the constrained answer at X
// are computed from the multipliers that mu gives F. `violation` is model.infeasibility(X).
// lambda_min: lambda_min(S) where the caller knows it (else NaN: the certificate computes it).
Judgement judge_multipliers(const Model& model, const Loss& loss, const RegularizationWeights& weights, double gamma_from,
                            double tolerance, const Matrix& X, double violation, const Vector& mu,
                            double lambda_min = std::nan(""));

}  // namespace sdprl::sdp
