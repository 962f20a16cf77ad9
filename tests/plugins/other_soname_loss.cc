// Test plugin "test-other-soname": a loss plugin linked against libsdprl.so.999 (CMakeLists.txt),
// as a plugin built against an sdprl of another loss ABI is. The dynamic loader cannot find that
// library, so the host must refuse the plugin, naming both SONAMEs.
#include <memory>
#include <stdexcept>
#include <string>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

double sdprl_test_other_soname_scale();

namespace {

std::unique_ptr<sdprl::Loss> make_loss(const sdprl::ConfigTable&) {
  // Uses the other library, so that the link keeps it as a dependency.
  if (sdprl_test_other_soname_scale() > 0.0) {
    throw std::logic_error("a plugin of another libsdprl must never load");
  }
  return nullptr;
}

}  // namespace

SDPRL_LOSS_PLUGIN("test-other-soname", "1.0", "test loss linked against another libsdprl",
                  make_loss)
