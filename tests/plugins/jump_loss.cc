// Test plugin "test-jump": a broken loss for the rising-objective check of the MM solver. Its
// phi and phi' are those of l1 (so it passes the loss contract check, which samples value() and
// derivative()), but its batched evaluate() adds `jump` to every phi from its `after`-th call on:
// F jumps up between two MM steps, which no inexact ADMM can explain. With the coupled Xt-step the
// surrogate evaluates the loss once at the start and once per MM step, so the jump lands in MM step
// after - 1 (the row-split one-pass rebuild calls evaluate() once per row instead).
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

class JumpLoss final : public sdprl::Loss {
 public:
  JumpLoss(long after, double jump) : after_(after), jump_(jump) {}
  std::string name() const override { return "test-jump"; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
  std::vector<std::pair<std::string, double>> parameters() const override {
    return {{"after", static_cast<double>(after_)}, {"jump", jump_}};
  }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    phi = a;
    dphi.setOnes(a.size());
    if (++calls_ >= after_) phi.array() += jump_;
  }

 private:
  long after_;
  double jump_;
  mutable std::atomic<long> calls_{0};
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable& parameters) {
  return std::make_unique<JumpLoss>(parameters.integer("after", 5, sdprl::NumberRule::at_least(1)),
                                    parameters.number("jump", 1.0, sdprl::NumberRule::positive()));
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-jump", "1.0", "test loss: l1 whose batched values jump up after some calls", make_loss)
