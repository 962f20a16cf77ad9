// Test plugin "test-previous-app-abi" (loss): built with SDPRL_APPLICATION_ABI_VERSION set to the
// previous application ABI (by CMakeLists.txt), as a loss built against the sdprl before an
// application-interface change is. Its descriptor carries the loss ABI only, so it must load.
#include <memory>
#include <string>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

static_assert(SDPRL_APPLICATION_ABI_VERSION == SDPRL_APPLICATION_ABI_VERSION_CURRENT - 1,
              "test-previous-app-abi must be compiled with the previous application ABI");
static_assert(SDPRL_LOSS_ABI_VERSION == SDPRL_LOSS_ABI_VERSION_CURRENT,
              "test-previous-app-abi is built for the current loss ABI");

namespace {

class HalfAbsLoss final : public sdprl::Loss {
 public:
  std::string name() const override { return "test-previous-app-abi"; }
  double value(double a) const override { return 0.5 * a; }
  double derivative(double) const override { return 0.5; }
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  return std::make_unique<HalfAbsLoss>();
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-previous-app-abi", "1.0",
                  "test loss built against the previous application ABI: phi(a) = a / 2", make_loss)
