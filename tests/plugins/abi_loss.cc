// Test plugin "test-abi": a loss plugin built with SDPRL_LOSS_ABI_VERSION=999 (set by
// CMakeLists.txt), which the host must refuse with both versions in the message.
#include <memory>
#include <stdexcept>
#include <string>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

#if SDPRL_LOSS_ABI_VERSION != 999
#error "test-abi must be compiled with SDPRL_LOSS_ABI_VERSION=999"
#endif

namespace {

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  throw std::logic_error("the factory of a plugin with the wrong ABI must never be called");
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-abi", "1.0", "test loss built for another loss ABI", make_loss)
