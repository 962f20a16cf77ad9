// Test plugin "test-throw-later": the l1 loss (it passes the contract check, which samples value()
// and derivative()) whose batched evaluate() throws std::runtime_error from its `after`-th call on,
// as a plugin failing in the middle of a solve does.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

class ThrowLaterLoss final : public sdprl::Loss {
 public:
  explicit ThrowLaterLoss(long after) : after_(after) {}
  std::string name() const override { return "test-throw-later"; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
  std::vector<std::pair<std::string, double>> parameters() const override {
    return {{"after", static_cast<double>(after_)}};
  }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    if (++calls_ >= after_) throw std::runtime_error("out of widgets at call " + std::to_string(after_));
    phi = a;
    dphi.setOnes(a.size());
  }

 private:
  long after_;
  mutable std::atomic<long> calls_{0};
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable& parameters) {
  return std::make_unique<ThrowLaterLoss>(parameters.integer("after", 50, sdprl::NumberRule::at_least(1)));
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-throw-later", "1.0", "test l1 loss whose evaluate() throws from its after-th call",
                  make_loss)
