// Test plugin "test-throw": a loss plugin whose factory always throws sdprl::Error (as parameter
// validation does); the host must let it through unchanged.
#include <memory>

#include "sdprl/config.h"
#include "sdprl/error.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  throw sdprl::Error("model.toml:3:7", "loss.delta: expected a number > 0, got -1");
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-throw", "1.0", "test loss whose factory throws sdprl::Error", make_loss)
