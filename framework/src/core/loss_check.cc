#include "sdprl/loss_check.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "sdprl/error.h"

namespace sdprl {

namespace {
// The points both contracts are checked at: 0, then 1e-6 ... 1e6 logarithmically.
std::vector<double> loss_grid() {
  std::vector<double> grid{0.0};
  for (int e = -60; e <= 60; ++e) grid.push_back(std::pow(10.0, e / 10.0));
  return grid;
}
}  // namespace

std::string loss_contract_violation(const Loss& loss) {
  const std::vector<double> grid = loss_grid();
  std::ostringstream os;
  os.precision(10);  // enough to show why two nearby values compare as they do
  const double phi0 = loss.value(0.0);
  if (!(std::abs(phi0) <= 1e-12)) {
    os << "phi(0) must be 0, got " << phi0;
    return os.str();
  }
  // Tolerances relative to the values compared, so that rounding does not refuse a good loss.
  auto tol = [](double x, double y) { return 1e-10 * (1.0 + std::abs(x) + std::abs(y)); };
  for (std::size_t k = 0; k < grid.size(); ++k) {
    const double a = grid[k], fa = loss.value(a), da = loss.derivative(a);
    if (!std::isfinite(fa)) {
      os << "phi(" << a << ") is not finite";
      return os.str();
    }
    // phi' may underflow to 0 far out (Laplace: exp(-a/theta)); such a term simply drops out of
    // the surrogate. It must never be negative, and phi'(0) > 0 keeps the MM weights meaningful.
    if (!std::isfinite(da) || !(da >= 0.0) || (a == 0.0 && !(da > 0.0))) {
      os << (a == 0.0 ? "phi'(0) must be finite and positive" : "phi' must be finite and non-negative")
         << ", phi'(" << a << ") = " << da;
      return os.str();
    }
    if (k + 1 == grid.size()) break;
    const double b = grid[k + 1], fb = loss.value(b), db = loss.derivative(b);
    if (fb < fa - tol(fa, fb)) {
      os << "phi is not increasing: phi(" << b << ") = " << fb << " < phi(" << a << ") = " << fa;
      return os.str();
    }
    if (db > da + tol(da, db) * 1e3) {
      os << "phi is not concave: phi'(" << b << ") = " << db << " > phi'(" << a << ") = " << da;
      return os.str();
    }
    // phi' must be phi's derivative (a supergradient at a kink, as leaky-MCP's at theta): for a
    // concave phi every chord's slope lies between the derivatives at its ends. A plugin whose
    // phi' disagrees with its phi (say half of it) builds surrogates that do not touch F, and MM
    // then "converges" anywhere. The slack covers the rounding of the difference quotient.
    const double slope = (fb - fa) / (b - a);
    const double slack = tol(fa, fb) / (b - a) + 1e-9 * (da + db);
    if (slope > da + slack || slope < db - slack) {
      os << "phi' disagrees with phi: the slope (phi(b) - phi(a)) / (b - a) = " << slope << " between a = " << a
         << " and b = " << b << " is not within [phi'(b), phi'(a)] = [" << db << ", " << da
         << "], where a concave phi's derivative must put it";
      return os.str();
    }
    const double mid = 0.5 * (a + b), fm = loss.value(mid);
    if (fm < 0.5 * (fa + fb) - tol(fa, fb)) {
      os << "phi is not concave: phi(" << mid << ") = " << fm << " < (phi(" << a << ") + phi(" << b
         << "))/2 = " << 0.5 * (fa + fb);
      return os.str();
    }
  }
  return {};
}

void check_loss_for_mm(const Loss& loss) {
  const std::string problem = loss_contract_violation(loss);
  if (!problem.empty())
    throw Error("loss '" + loss.name() + "'",
                "cannot be used by the MM solver (paper Assumption 3: phi(0) = 0, increasing, "
                "concave, phi' finite and positive): " + problem);
}

std::string smooth_loss_violation(const Loss& loss) {
  const std::vector<double> grid = loss_grid();
  std::ostringstream os;
  os.precision(10);
  const double phi0 = loss.value(0.0), d0 = loss.derivative(0.0);
  if (!(std::abs(phi0) <= 1e-12)) {
    os << "phi(0) must be 0, got " << phi0;
    return os.str();
  }
  if (!(d0 == 0.0)) {
    os << "phi'(0) must be 0 (a loss differentiable at 0), got " << d0;
    return os.str();
  }
  auto tol = [](double x, double y) { return 1e-10 * (1.0 + std::abs(x) + std::abs(y)); };
  for (std::size_t k = 0; k + 1 < grid.size(); ++k) {
    const double a = grid[k], b = grid[k + 1], mid = 0.5 * (a + b);
    const double fa = loss.value(a), fb = loss.value(b), da = loss.derivative(a), db = loss.derivative(b),
                 dm = loss.derivative(mid);
    if (!std::isfinite(fb) || !std::isfinite(db) || !std::isfinite(dm)) {
      os << "phi or phi' is not finite at " << b;
      return os.str();
    }
    if (!(db >= 0.0) || !(dm >= 0.0)) {
      os << "phi' must be non-negative, phi'(" << (db < 0.0 ? b : mid) << ") = " << (db < 0.0 ? db : dm);
      return os.str();
    }
    if (fb < fa - tol(fa, fb)) {
      os << "phi is not increasing: phi(" << b << ") = " << fb << " < phi(" << a << ") = " << fa;
      return os.str();
    }
    // A smooth phi's chord slope is phi' somewhere on the chord: within the range of phi' at the
    // ends and the middle, up to a little slack for a phi' that turns inside the interval.
    const double slope = (fb - fa) / (b - a);
    const double lo = std::min({da, db, dm}), hi = std::max({da, db, dm});
    const double slack = tol(fa, fb) / (b - a) + 0.05 * (hi - lo) + 1e-9 * hi;
    if (slope < lo - slack || slope > hi + slack) {
      os << "phi' disagrees with phi: the slope (phi(b) - phi(a)) / (b - a) = " << slope << " between a = " << a
         << " and b = " << b << " is not within the range [" << lo << ", " << hi << "] of phi' at a, b and between";
      return os.str();
    }
  }
  return {};
}

void check_loss_for_lbfgs(const Loss& loss) {
  const std::string problem = smooth_loss_violation(loss);
  if (!problem.empty())
    throw Error("loss '" + loss.name() + "'",
                "cannot be used by the L-BFGS solver (phi(0) = 0, phi'(0) = 0, increasing, phi' its derivative): " +
                    problem);
}

}  // namespace sdprl
