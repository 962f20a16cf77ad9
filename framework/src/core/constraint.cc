#include "sdprl/constraint.h"

#include <limits>

namespace sdprl {

ConvexConstraint::~ConvexConstraint() = default;
Nonnegative::~Nonnegative() = default;

void Nonnegative::project(Matrix& Y) const { Y = Y.cwiseMax(0.0); }

double Nonnegative::support(const Matrix& mu) const {
  return mu.size() == 0 || mu.maxCoeff() <= 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
}

}  // namespace sdprl
