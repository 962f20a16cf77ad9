// Test plugin "test-app": a minimal application plugin (build() only reports that it is a test).
#include <string>

#include "sdprl/application.h"
#include "sdprl/config.h"
#include "sdprl/error.h"
#include "sdprl/model.h"
#include "sdprl/plugin.h"

namespace {

class TestApplication final : public sdprl::Application {
 public:
  std::string name() const override { return "test-app"; }
  sdprl::Model build(const sdprl::ConfigTable& table, const sdprl::BuildContext&) const override {
    throw sdprl::Error(table.where(), "test-app builds no model");
  }
};

}  // namespace

SDPRL_APPLICATION_PLUGIN("test-app", "0.3", "test application", TestApplication)
