// sdprl::testing::check_majoriser (sdprl/testing/checks.h): in the library because it builds the
// internal surrogate of one MM step (mm/surrogate.h).
#include <cmath>
#include <random>
#include <sstream>

#include "mm/surrogate.h"
#include "sdprl/testing/checks.h"

namespace sdprl::testing {

std::string check_majoriser(const Model& model, const Loss& loss, const RegularizationWeights& weights, Index rank,
                            unsigned seed, int steps_per_scale) {
  std::ostringstream os;
  if (!model.terms) return "the model has no terms (Model::terms is required)";
  const Index n = model.terms->dimension();
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  auto random = [&](double scale) {
    Matrix M(n, rank);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < rank; ++j) M(i, j) = scale * normal(rng);
    return M;
  };
  for (SplitMode mode : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
    for (int trial = 0; trial < 3; ++trial) {
      Matrix Xk = random(1.0);
      if (model.constraint) model.constraint->project(Xk);
      Surrogate H(model, loss, weights, mode, rank);
      H.update(Xk);
      const double f0 = objective(model, loss, weights, Xk), h0 = H.value(Matrix::Zero(n, rank));
      if (!(std::abs(h0 - f0) <= 1e-9 * (1.0 + std::abs(f0)))) {
        os << to_string(mode) << ": H(0) = " << h0 << " but F(X_k) = " << f0;
        return os.str();
      }
      for (double scale : {1e-3, 1e-2, 0.1, 0.5, 1.0, 3.0}) {
        for (int s = 0; s < steps_per_scale; ++s) {
          Matrix D = random(scale);
          if (model.constraint) {  // steps to feasible points only: iota_K is +inf elsewhere
            Matrix Y = Xk + D;
            model.constraint->project(Y);
            D = Y - Xk;
          }
          const double h = H.value(D), f = objective(model, loss, weights, Xk + D);
          if (!(h >= f - 1e-9 * (1.0 + std::abs(f)))) {
            os << to_string(mode) << ": H(D) = " << h << " < F(X_k + D) = " << f << " at step scale " << scale;
            return os.str();
          }
        }
      }
    }
  }
  return {};
}

}  // namespace sdprl::testing
