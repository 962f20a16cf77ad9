// Test plugin "test-throw-std": a loss plugin whose factory throws a plain std::exception; the host
// must wrap it in sdprl::Error naming the plugin file.
#include <memory>
#include <stdexcept>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  throw std::runtime_error("out of widgets");
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-throw-std", "1.0", "test loss whose factory throws std::runtime_error",
                  make_loss)
