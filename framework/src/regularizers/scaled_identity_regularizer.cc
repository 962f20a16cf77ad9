// A = c I (see sdprl/regularizers/scaled_identity_regularizer.h).
#include "sdprl/regularizers/scaled_identity_regularizer.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sdprl/error.h"

namespace sdprl {

ScaledIdentityRegularizer::ScaledIdentityRegularizer(Index n, double c, std::string name)
    : n_(n), c_(c), name_(std::move(name)) {
  if (n < 1) throw Error("", name_ + ": dimension must be >= 1, got " + std::to_string(n));
  if (!std::isfinite(c)) throw Error("", name_ + ": the scale c of A = c I is not finite");
}

ScaledIdentityRegularizer::~ScaledIdentityRegularizer() = default;

void ScaledIdentityRegularizer::apply(const Matrix& X, Matrix& out) const {
  if (X.rows() != n_)
    throw Error("", name_ + ": X has " + std::to_string(X.rows()) + " rows, expected " + std::to_string(n_));
  out = c_ * X;
}

void ScaledIdentityRegularizer::apply_positive(const Matrix& X, Matrix& out) const {
  out = std::max(c_, 0.0) * X;
}

void ScaledIdentityRegularizer::positive_diagonal(Vector& d) const { d.setConstant(n_, std::max(c_, 0.0)); }

bool ScaledIdentityRegularizer::positive_diagonal_majorant(Vector& d) const {
  positive_diagonal(d);
  return true;
}

}  // namespace sdprl
