// Test plugin "test-previous-app-abi" (application): built with SDPRL_APPLICATION_ABI_VERSION set to
// the previous application ABI (by CMakeLists.txt), which the host must refuse with the kind and
// both versions in the message.
#include <stdexcept>
#include <string>

#include "sdprl/application.h"
#include "sdprl/config.h"
#include "sdprl/error.h"
#include "sdprl/model.h"
#include "sdprl/plugin.h"

static_assert(SDPRL_APPLICATION_ABI_VERSION == SDPRL_APPLICATION_ABI_VERSION_CURRENT - 1,
              "test-previous-app-abi must be compiled with the previous application ABI");

namespace {

class PreviousAbiApplication final : public sdprl::Application {
 public:
  std::string name() const override { return "test-previous-app-abi"; }
  sdprl::Model build(const sdprl::ConfigTable&, const sdprl::BuildContext&) const override {
    throw std::logic_error("the factory of a plugin with the wrong ABI must never be called");
  }
};

}  // namespace

SDPRL_APPLICATION_PLUGIN("test-previous-app-abi", "1.0",
                         "test application built against the previous application ABI",
                         PreviousAbiApplication)
