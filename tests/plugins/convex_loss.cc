// Test plugin "test-convex": phi(a) = a + a^2/2, increasing with phi'(0) = 1 but convex, so it
// breaks the MM contract (paper Assumption 3: phi concave) and must be refused before solving.
#include <memory>
#include <string>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

class ConvexLoss final : public sdprl::Loss {
 public:
  std::string name() const override { return "test-convex"; }
  double value(double a) const override { return a + 0.5 * a * a; }
  double derivative(double a) const override { return 1.0 + a; }
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  return std::make_unique<ConvexLoss>();
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-convex", "1.0", "test loss that is convex (breaks the MM contract)", make_loss)
