#include "sdprl/constraint.h"

#include <cmath>
#include <limits>
#include <string>

#include "sdprl/error.h"

namespace sdprl {

ConvexConstraint::~ConvexConstraint() = default;
Nonnegative::~Nonnegative() = default;

void Nonnegative::project(Matrix& Y) const { Y = Y.cwiseMax(0.0); }

double Nonnegative::support(const Matrix& mu) const {
  return mu.size() == 0 || mu.maxCoeff() <= 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
}

FrobeniusBall::FrobeniusBall(double radius) : radius_(radius) {
  if (!(radius > 0.0) || !std::isfinite(radius))
    throw Error("", "frobenius ball: the radius must be positive and finite, got " + std::to_string(radius));
}
FrobeniusBall::~FrobeniusBall() = default;

void FrobeniusBall::project(Matrix& Y) const {
  const double norm = Y.norm();
  if (norm > radius_) Y *= radius_ / norm;
}

double FrobeniusBall::support(const Matrix& mu) const { return radius_ * mu.norm(); }

}  // namespace sdprl
