// The example's own tests, written with the framework's helpers for plugin authors
// (sdprl/testing/checks.h): the model the plugin builds from its TOML table must be a valid SDP-RL
// model (the MM surrogate majorises F and touches it at every iterate, for both Xt-step variants),
// its A must be what it claims, and a bad key must be reported where it is.
#include <gtest/gtest.h>

#include <sdprl/error.h>
#include <sdprl/plugin_host.h>
#include <sdprl/testing/checks.h>

namespace {

const sdprl::PluginHost& host() {  // the plugin just built, and the installed losses
  static const sdprl::PluginHost h({ROBUST_MVU_PLUGIN_DIR, SDPRL_PLUGIN_DIR});
  return h;
}

sdprl::Model build(const std::string& extra_keys) {
  const std::string text = "data = \"" EXAMPLE_DIR "/data/spiral.txt\"\n" + extra_keys;
  return host().create_application("robust-mvu")->build(sdprl::ConfigTable::parse_string(text, "test.toml"), {});
}

TEST(RobustMvu, BuildsAValidModel) {
  const sdprl::Model model = build("neighbours = 4\noutlier_fraction = 0.1\n");
  EXPECT_EQ(model.terms->family(), "composite(distance+rank-one)");
  EXPECT_EQ(model.terms->dimension(), 100);
  for (const char* loss : {"l1", "leaky-mcp"})
    EXPECT_EQ(sdprl::testing::check_majoriser(model, *host().create_loss(loss, {}), {0.0, 0.01}), "") << loss;
  EXPECT_EQ(sdprl::testing::check_regularizer(*model.quadratic, -Eigen::MatrixXd::Identity(100, 100)), "");
}

TEST(RobustMvu, ReportsABadKeyWithItsLocation) {
  try {
    build("neighbours = 100\n");  // a 100-point file has at most 99 neighbours per point
    FAIL() << "no error";
  } catch (const sdprl::Error& e) {
    EXPECT_EQ(e.where().rfind("test.toml:2:", 0), 0u) << e.where();
    EXPECT_NE(e.message().find("has 100"), std::string::npos) << e.message();
  }
}

}  // namespace
