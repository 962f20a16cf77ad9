// Test plugin "test-wrong-derivative": phi(a) = log(1 + a), increasing and concave, but its phi' is
// half of phi's derivative. MM on it builds surrogates that do not touch F and "converges"
// anywhere, so the load-time contract check must refuse it (docs/bad-input.md).
#include <cmath>
#include <memory>
#include <string>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

class WrongDerivativeLoss final : public sdprl::Loss {
 public:
  std::string name() const override { return "test-wrong-derivative"; }
  double value(double a) const override { return std::log1p(a); }
  double derivative(double a) const override { return 0.5 / (1.0 + a); }
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  return std::make_unique<WrongDerivativeLoss>();
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-wrong-derivative", "1.0", "test loss whose phi' is half its derivative", make_loss)
