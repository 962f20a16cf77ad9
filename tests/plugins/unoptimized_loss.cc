// Test plugin "test-unoptimized": a valid loss compiled with -O0 (tests/plugins/CMakeLists.txt),
// about which the plugin host warns when it loads it.
#include <memory>
#include <string>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

class AbsLoss final : public sdprl::Loss {
 public:
  std::string name() const override { return "test-unoptimized"; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
};

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) { return std::make_unique<AbsLoss>(); }

}  // namespace

SDPRL_LOSS_PLUGIN("test-unoptimized", "1.0", "test loss compiled without optimisation", make_loss)
