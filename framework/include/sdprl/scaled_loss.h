// ScaledLoss: the common part of a loss with one scale parameter theta > 0, such as the Geman,
// Laplace and log-sum losses.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/loss.h"

namespace sdprl {

// L, the final loss class, derives from ScaledLoss<L>, inherits its constructor and defines name(),
// value() and derivative() from theta(). This base gives it the inlined batched evaluate(), the
// parameters() report and the plugin factory, which reads theta from the [loss] key `theta` (a
// number > 0, 1 when absent):
//   class GemanLoss final : public sdprl::ScaledLoss<GemanLoss> {
//    public:
//     using ScaledLoss::ScaledLoss;
//     std::string name() const override { return "geman"; }
//     double value(double a) const override { return a / (theta() + a); }
//     double derivative(double a) const override { ... }
//   };
//   SDPRL_LOSS_PLUGIN("geman", "1.0", "...", sdprl::ScaledLoss<GemanLoss>::make)
// Header-only and compiled into the plugin; it adds nothing to the Loss interface.
template <class L>
class ScaledLoss : public Loss {
 public:
  explicit ScaledLoss(double theta) : theta_(theta) {}
  void evaluate(const Vector& a, Vector& phi, Vector& dphi) const override {
    evaluate_inline(static_cast<const L&>(*this), a, phi, dphi);
  }
  std::vector<std::pair<std::string, double>> parameters() const override { return {{"theta", theta_}}; }

  // A LossFactory: L with theta read from the [loss] table (minus its "type" key).
  static std::unique_ptr<Loss> make(const ConfigTable& table) {
    return std::make_unique<L>(table.number("theta", 1.0, NumberRule::positive()));
  }

 protected:
  double theta() const { return theta_; }

 private:
  double theta_;
};

}  // namespace sdprl
