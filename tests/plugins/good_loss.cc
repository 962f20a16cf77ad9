// Test plugin "test-good": a valid loss plugin, phi(a) = scale * a (scale > 0, default 1).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

class ScaledAbsLoss final : public sdprl::Loss {
 public:
  explicit ScaledAbsLoss(double scale) : scale_(scale) {}
  std::string name() const override { return "test-good"; }
  double value(double a) const override { return scale_ * a; }
  double derivative(double) const override { return scale_; }
  std::vector<std::pair<std::string, double>> parameters() const override {
    return {{"scale", scale_}};
  }

 private:
  double scale_;
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable& parameters) {
  return std::make_unique<ScaledAbsLoss>(
      parameters.number("scale", 1.0, sdprl::NumberRule::positive()));
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-good", "1.2", "test loss: phi(a) = scale * a", make_loss)
