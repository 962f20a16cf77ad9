// Every shipped loss: phi' against central finite differences, the MM contract (paper Assumption 3)
// on a grid, parameter validation; and losses that break the contract are refused.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "sdprl/error.h"
#include "sdprl/loss_check.h"
#include "sdprl/solver.h"
#include "test_models.h"

namespace sdprl {
namespace {

using testing_support::load_loss;

class ShippedLoss : public ::testing::TestWithParam<const char*> {};

TEST_P(ShippedLoss, DerivativeMatchesFiniteDifferences) {
  auto loss = load_loss(GetParam());
  EXPECT_EQ(loss->name(), GetParam());
  EXPECT_EQ(loss->value(0.0), 0.0);
  int checked = 0;
  for (double a = 1e-3; a < 100.0; a *= 1.37) {
    const double h = 1e-6 * std::max(1.0, a);
    const double fd = (loss->value(a + h) - loss->value(a - h)) / (2 * h);
    // Kinks (leaky-MCP at theta - eta) make the central difference an average of the two sides.
    if (std::abs(loss->derivative(a + h) - loss->derivative(a - h)) > 1e-4) continue;
    EXPECT_NEAR(loss->derivative(a), fd, 1e-6 * std::max(1.0, std::abs(fd))) << "a = " << a;
    ++checked;
  }
  EXPECT_GT(checked, 20);
  // Right derivative at 0.
  const double h = 1e-7;
  EXPECT_NEAR(loss->derivative(0.0), loss->value(h) / h, 1e-5 * std::max(1.0, loss->derivative(0.0)));
  // Batched evaluation agrees with the scalar one.
  Vector a = Vector::LinSpaced(50, 0.0, 20.0), phi, dphi;
  loss->evaluate(a, phi, dphi);
  for (Index k = 0; k < a.size(); ++k) {
    EXPECT_EQ(phi[k], loss->value(a[k]));
    EXPECT_EQ(dphi[k], loss->derivative(a[k]));
  }
}

TEST_P(ShippedLoss, SatisfiesTheMmContract) {
  auto loss = load_loss(GetParam());
  EXPECT_EQ(loss_contract_violation(*loss), "");
  EXPECT_NO_THROW(check_loss_for_mm(*loss));
}

std::string loss_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, ShippedLoss, ::testing::Values("l1", "leaky-mcp", "geman", "laplace", "log-sum"),
                         loss_name);

// The square loss has its finite-difference check too; it is not an MM loss (see SquareLoss below).
class SmoothLoss : public ShippedLoss {};
TEST_P(SmoothLoss, DerivativeMatchesFiniteDifferences) {
  auto loss = load_loss(GetParam());
  for (double a = 1e-3; a < 100.0; a *= 1.37) {
    const double h = 1e-6 * std::max(1.0, a);
    const double fd = (loss->value(a + h) - loss->value(a - h)) / (2 * h);
    EXPECT_NEAR(loss->derivative(a), fd, 1e-6 * std::max(1.0, std::abs(fd))) << "a = " << a;
  }
}
INSTANTIATE_TEST_SUITE_P(All, SmoothLoss, ::testing::Values("square"), loss_name);

TEST(LossParameters, AreValidated) {
  PluginHost host({SDPRL_PLUGIN_BUILD_DIR});
  for (const char* name : {"leaky-mcp", "geman", "laplace", "log-sum"}) {
    ConfigTable t = ConfigTable::parse_string("theta = -1.0\n", "loss.toml");
    try {
      host.create_loss(name, t);
      ADD_FAILURE() << name << " accepted theta = -1";
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "loss.toml:1:9") << name;
      EXPECT_NE(e.message().find("theta"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("> 0"), std::string::npos) << e.message();
    }
  }
  // eta must lie in (0, theta).
  ConfigTable t = ConfigTable::parse_string("theta = 2.0\neta = 3.0\n", "loss.toml");
  EXPECT_THROW(host.create_loss("leaky-mcp", t), Error);
  ConfigTable good = ConfigTable::parse_string("theta = 2.0\neta = 0.5\n", "loss.toml");
  auto mcp = host.create_loss("leaky-mcp", good);
  EXPECT_DOUBLE_EQ(mcp->derivative(0.0), 2.0);
  EXPECT_DOUBLE_EQ(mcp->derivative(10.0), 0.5);
  EXPECT_DOUBLE_EQ(mcp->value(10.0), 0.5 * 10.0 + 0.5 * 1.5 * 1.5);
}

class SquareLoss final : public Loss {  // convex: not a valid MM loss
 public:
  std::string name() const override { return "square"; }
  double value(double a) const override { return 0.5 * a * a; }
  double derivative(double a) const override { return a; }
};
class DecreasingLoss final : public Loss {
 public:
  std::string name() const override { return "decreasing"; }
  double value(double a) const override { return -a; }
  double derivative(double) const override { return -1.0; }
};
class OffsetLoss final : public Loss {
 public:
  std::string name() const override { return "offset"; }
  double value(double a) const override { return 1.0 + a; }
  double derivative(double) const override { return 1.0; }
};
class HalfDerivativeLoss final : public Loss {  // concave and increasing, but phi' is half of phi's slope
 public:
  std::string name() const override { return "half-derivative"; }
  double value(double a) const override { return std::log1p(a); }
  double derivative(double a) const override { return 0.5 / (1.0 + a); }
};
class WigglyLoss final : public Loss {  // increasing with phi' > 0 but convex between 1 and 2
 public:
  std::string name() const override { return "wiggly"; }
  double value(double a) const override { return a < 1.0 ? a : (a < 2.0 ? a + (a - 1) * (a - 1) : 3.0 + 3.0 * (a - 2.0)); }
  double derivative(double a) const override { return a < 1.0 ? 1.0 : (a < 2.0 ? 1.0 + 2.0 * (a - 1) : 3.0); }
};

TEST(LossContract, RefusesLossesThatBreakIt) {
  SquareLoss square;
  // phi'(0) = 0 is the first violation of the square loss.
  EXPECT_NE(loss_contract_violation(square).find("phi'(0) must be finite and positive"), std::string::npos);
  DecreasingLoss decreasing;
  EXPECT_NE(loss_contract_violation(decreasing).find("phi'(0) must be finite and positive"), std::string::npos);
  OffsetLoss offset;
  EXPECT_NE(loss_contract_violation(offset).find("phi(0) must be 0"), std::string::npos);
  HalfDerivativeLoss half;
  const std::string h = loss_contract_violation(half);
  EXPECT_NE(h.find("phi' disagrees with phi"), std::string::npos) << h;
  EXPECT_NE(h.find("between a = 0 and b = 1e-06"), std::string::npos) << h;  // the first grid interval
  WigglyLoss wiggly;
  const std::string w = loss_contract_violation(wiggly);
  EXPECT_NE(w.find("not concave"), std::string::npos) << w;
  try {
    check_loss_for_mm(wiggly);
    ADD_FAILURE() << "a non-concave loss was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "loss 'wiggly'");
    EXPECT_NE(e.message().find("concave"), std::string::npos);
  }
  // The solver refuses it too, before touching the model.
  Model model;
  model.terms = testing_support::entry_terms(testing_support::random_entries(5, 10, 1));
  SolverOptions o;
  o.rank = 2;
  o.verbose = false;
  Matrix X;
  EXPECT_THROW(solve(model, wiggly, {}, o, X), Error);
}

}  // namespace
}  // namespace sdprl

namespace sdprl {
namespace {

// The square loss goes to L-BFGS automatically, and L-BFGS ends at a stationary point of F:
// directional derivatives of F (finite differences) vanish there.
TEST(SquareLoss, LbfgsReachesAStationaryPoint) {
  auto loss = testing_support::load_loss("square");
  EXPECT_EQ(loss->derivative(0.0), 0.0);
  EXPECT_NE(loss_contract_violation(*loss), "");
  Model model;
  model.terms = testing_support::entry_terms(testing_support::random_entries(25, 300, 5));
  SolverOptions o;
  o.rank = 2;
  o.verbose = false;
  o.relative_tolerance = 1e-12;
  const RegularizationWeights w{0.5, 0.0};
  Matrix X;
  Summary s = solve(model, *loss, w, o, X);
  EXPECT_EQ(s.solver, SolverType::kLbfgs);
  EXPECT_TRUE(s.usable());
  EXPECT_LT(s.final_objective, s.initial_objective);
  EXPECT_NEAR(s.final_objective, objective(model, *loss, w, X), 1e-12 * s.final_objective);
  std::mt19937_64 rng(2);
  for (int k = 0; k < 10; ++k) {
    Matrix D = testing_support::random_matrix(X.rows(), X.cols(), 1.0, rng);
    D /= D.norm();
    const double h = 1e-5;
    const double slope = (objective(model, *loss, w, X + h * D) - objective(model, *loss, w, X - h * D)) / (2 * h);
    EXPECT_LT(std::abs(slope), 1e-4 * s.final_objective) << "direction " << k;
  }
  // Forcing MM with the square loss is refused with the contract's message.
  o.type = SolverType::kMm;
  EXPECT_THROW(solve(model, *loss, w, o, X), Error);
  EXPECT_EQ(smooth_loss_violation(*loss), "");
}

// An interrupt reaches L-BFGS at its next function evaluation, also when no evaluation improves F
// (it was read only on an improvement: SIGTERM went unheard for 82 s). trace.csv counts the
// iterations from row 0, the start.
TEST(SquareLoss, LbfgsHearsAnInterruptAtOnce) {
  auto loss = testing_support::load_loss("square");
  Model model;
  model.terms = testing_support::entry_terms(testing_support::random_entries(25, 300, 5));
  std::atomic<bool> interrupt{true};
  SolverOptions o;
  o.rank = 2;
  o.verbose = false;
  o.relative_tolerance = 1e-12;
  o.interrupt = &interrupt;
  Matrix X;
  const Summary s = solve(model, *loss, {0.5, 0.0}, o, X);
  EXPECT_EQ(s.status, SolverStatus::kInterrupted);
  EXPECT_LE(s.mm_iterations, 1);
  interrupt = false;
  X.resize(0, 0);
  const Summary full = solve(model, *loss, {0.5, 0.0}, o, X);
  ASSERT_FALSE(full.trace.empty());
  EXPECT_EQ(full.trace.front().mm_iteration, 0);
  EXPECT_LE(full.trace.back().mm_iteration, full.mm_iterations);
}

}  // namespace
}  // namespace sdprl
