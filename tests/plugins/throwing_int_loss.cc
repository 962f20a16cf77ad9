// Test plugin "test-throw-int": a loss plugin whose factory throws an int, which is no
// std::exception; the host must still answer with sdprl::Error naming the plugin file (it ended in
// std::terminate before).
#include <memory>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace {

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) { throw 42; }

}  // namespace

SDPRL_LOSS_PLUGIN("test-throw-int", "1.0", "test loss whose factory throws an int", make_loss)
