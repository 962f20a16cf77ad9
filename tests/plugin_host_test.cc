// PluginHost: file naming, search order, discovery, descriptor checks and plugin creation, against
// the test plugins of tests/plugins (built into SDPRL_TEST_PLUGIN_DIR).
#include "sdprl/plugin_host.h"

#include <gtest/gtest.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/error.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"
#include "test_files.h"

namespace fs = std::filesystem;
using sdprl::Error;
using sdprl::PluginHost;
using sdprl::PluginInfo;
using sdprl::PluginKind;

namespace {

using sdprl::testing_support::TempDir;

const fs::path kPluginDir = SDPRL_TEST_PLUGIN_DIR;

fs::path plugin_file(PluginKind kind, const std::string& name) {
  return kPluginDir / PluginHost::file_name(kind, name);
}

// Sets (or clears) SDPRL_PLUGIN_PATH for one test and restores the previous value.
class PluginPathGuard {
 public:
  explicit PluginPathGuard(const std::optional<std::string>& value) {
    if (const char* old = getenv("SDPRL_PLUGIN_PATH")) old_ = old;
    if (value) {
      setenv("SDPRL_PLUGIN_PATH", value->c_str(), 1);
    } else {
      unsetenv("SDPRL_PLUGIN_PATH");
    }
  }
  ~PluginPathGuard() {
    if (old_) {
      setenv("SDPRL_PLUGIN_PATH", old_->c_str(), 1);
    } else {
      unsetenv("SDPRL_PLUGIN_PATH");
    }
  }
  PluginPathGuard(const PluginPathGuard&) = delete;
  PluginPathGuard& operator=(const PluginPathGuard&) = delete;

 private:
  std::optional<std::string> old_;
};

const PluginInfo* find_plugin(const std::vector<PluginInfo>& plugins, const std::string& name,
                              PluginKind kind) {
  auto it = std::find_if(plugins.begin(), plugins.end(), [&](const PluginInfo& info) {
    return info.name == name && info.kind == kind;
  });
  return it == plugins.end() ? nullptr : &*it;
}

bool contains_path(const std::vector<fs::path>& paths, const fs::path& wanted) {
  return std::any_of(paths.begin(), paths.end(), [&](const fs::path& p) {
    return fs::weakly_canonical(p) == fs::weakly_canonical(wanted);
  });
}

std::ptrdiff_t index_of(const std::vector<fs::path>& paths, const fs::path& wanted) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (fs::weakly_canonical(paths[i]) == fs::weakly_canonical(wanted)) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

class PluginHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::is_regular_file(plugin_file(PluginKind::kLoss, "test-good")))
        << "test plugins not built in " << kPluginDir << " (target sdprl_test_plugins)";
  }
  // Tests do not see a SDPRL_PLUGIN_PATH from the environment they run in.
  PluginPathGuard no_env_{std::nullopt};
};

}  // namespace

TEST(PluginKindTest, ToString) {
  EXPECT_STREQ(sdprl::to_string(PluginKind::kLoss), "loss");
  EXPECT_STREQ(sdprl::to_string(PluginKind::kApplication), "application");
}

TEST(PluginHostFileName, KindAndName) {
  EXPECT_EQ(PluginHost::file_name(PluginKind::kLoss, "l1"), "sdprl-loss-l1.so");
  EXPECT_EQ(PluginHost::file_name(PluginKind::kLoss, "leaky-mcp"), "sdprl-loss-leaky-mcp.so");
  EXPECT_EQ(PluginHost::file_name(PluginKind::kApplication, "matrix-completion"),
            "sdprl-application-matrix-completion.so");
}

TEST_F(PluginHostTest, SearchDirectoriesOrderAndDuplicates) {
  TempDir a;
  TempDir b;
  const fs::path explicit_file = plugin_file(PluginKind::kLoss, "test-good");
  PluginPathGuard env(":" + b.path().string() + "::" + a.path().string() + ":");
  PluginHost host({a.path(), explicit_file, kPluginDir, a.path() / "." /* duplicate of a */});
  const std::vector<fs::path> dirs = host.search_directories();

  ASSERT_GE(dirs.size(), 3u);
  // Explicit directories first, in the given order; the explicit file is not listed.
  EXPECT_EQ(index_of(dirs, a.path()), 0);
  EXPECT_EQ(index_of(dirs, kPluginDir), 1);
  EXPECT_FALSE(contains_path(dirs, explicit_file));
  // Then SDPRL_PLUGIN_PATH (empty entries skipped; a, already listed, not repeated).
  EXPECT_EQ(index_of(dirs, b.path()), 2);
  EXPECT_EQ(std::count_if(dirs.begin(), dirs.end(),
                          [](const fs::path& p) { return p.empty(); }),
            0);
  // No duplicates at all.
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    for (std::size_t j = i + 1; j < dirs.size(); ++j) {
      EXPECT_NE(fs::weakly_canonical(dirs[i]), fs::weakly_canonical(dirs[j]))
          << dirs[i] << " and " << dirs[j];
    }
  }
  // Then the directories next to the executable.
  const fs::path exe_dir = fs::canonical("/proc/self/exe").parent_path();
  const auto lib_index = index_of(dirs, exe_dir / ".." / "lib" / "sdprl" / "plugins");
  const auto exe_index = index_of(dirs, exe_dir);
  EXPECT_GT(lib_index, 2);
  EXPECT_EQ(exe_index, lib_index + 1);
}

TEST_F(PluginHostTest, DiscoverFindsTestPlugins) {
  PluginHost host({kPluginDir});
  const std::vector<PluginInfo> plugins = host.discover();

  const PluginInfo* good = find_plugin(plugins, "test-good", PluginKind::kLoss);
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->version, "1.2");
  EXPECT_EQ(good->description, "test loss: phi(a) = scale * a");
  EXPECT_EQ(fs::weakly_canonical(good->file),
            fs::weakly_canonical(plugin_file(PluginKind::kLoss, "test-good")));

  const PluginInfo* app = find_plugin(plugins, "test-app", PluginKind::kApplication);
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->version, "0.3");

  // Files that fail the checks are skipped, not reported and not fatal.
  for (const auto& info : plugins) {
    EXPECT_NE(info.name, "test-abi");
    EXPECT_NE(info.name, "test-other-soname");
    EXPECT_FALSE(info.name == "test-previous-app-abi" && info.kind == PluginKind::kApplication);
    EXPECT_NE(info.file.filename(), "sdprl-loss-test-garbage.so");
    EXPECT_NE(info.file.filename(), "sdprl-loss-test-nodesc.so");
  }
  // Each (kind, name) once.
  EXPECT_EQ(std::count_if(plugins.begin(), plugins.end(),
                          [](const PluginInfo& i) { return i.name == "test-good"; }),
            1);
}

TEST_F(PluginHostTest, DiscoverKeepsFirstOccurrence) {
  const fs::path good = plugin_file(PluginKind::kLoss, "test-good");
  // The explicit file comes first; the same plugin in the explicit directory is not repeated.
  PluginHost host({kPluginDir, good});
  const std::vector<PluginInfo> plugins = host.discover();
  EXPECT_EQ(std::count_if(plugins.begin(), plugins.end(),
                          [](const PluginInfo& i) { return i.name == "test-good"; }),
            1);
}

TEST_F(PluginHostTest, InspectGoodPlugin) {
  const PluginInfo info = PluginHost::inspect(plugin_file(PluginKind::kLoss, "test-good"));
  EXPECT_EQ(info.name, "test-good");
  EXPECT_EQ(info.kind, PluginKind::kLoss);
  EXPECT_EQ(info.version, "1.2");
  EXPECT_EQ(info.description, "test loss: phi(a) = scale * a");
  EXPECT_EQ(info.file, plugin_file(PluginKind::kLoss, "test-good"));
  // Inspecting again (the library is already loaded) gives the same answer.
  EXPECT_EQ(PluginHost::inspect(plugin_file(PluginKind::kLoss, "test-good")).name, "test-good");
}

TEST_F(PluginHostTest, CreateLossWorks) {
  PluginHost host({kPluginDir});
  std::shared_ptr<sdprl::Loss> loss = host.create_loss("test-good", sdprl::ConfigTable());
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->name(), "test-good");
  EXPECT_DOUBLE_EQ(loss->value(0.0), 0.0);
  EXPECT_DOUBLE_EQ(loss->value(2.0), 2.0);
  EXPECT_DOUBLE_EQ(loss->derivative(3.0), 1.0);
  sdprl::Vector a(3), phi, dphi;
  a << 0.0, 1.5, 4.0;
  loss->evaluate(a, phi, dphi);
  ASSERT_EQ(phi.size(), 3);
  EXPECT_DOUBLE_EQ(phi[2], 4.0);
  EXPECT_DOUBLE_EQ(dphi[1], 1.0);
}

TEST_F(PluginHostTest, CreateLossPassesParameters) {
  PluginHost host({kPluginDir});
  sdprl::ConfigTable parameters;
  parameters.set("scale", "2.5");
  std::shared_ptr<sdprl::Loss> loss = host.create_loss("test-good", parameters);
  EXPECT_DOUBLE_EQ(loss->value(2.0), 5.0);
  EXPECT_DOUBLE_EQ(loss->derivative(1.0), 2.5);
}

TEST_F(PluginHostTest, ParameterErrorFromFactoryPassesThrough) {
  PluginHost host({kPluginDir});
  sdprl::ConfigTable parameters;
  parameters.set("scale", "-1.5");
  try {
    host.create_loss("test-good", parameters);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("scale"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().find(".so"), std::string::npos) << "wrapped: " << e.where();
  }
}

TEST_F(PluginHostTest, LossOutlivesHost) {
  std::shared_ptr<sdprl::Loss> loss;
  {
    PluginHost host({kPluginDir});
    loss = host.create_loss("test-good", sdprl::ConfigTable());
  }
  EXPECT_DOUBLE_EQ(loss->value(7.0), 7.0);  // the library stays loaded
}

TEST_F(PluginHostTest, CreateLossFromExplicitFile) {
  const fs::path good = plugin_file(PluginKind::kLoss, "test-good");
  PluginHost host({good});
  std::shared_ptr<sdprl::Loss> loss = host.create_loss("test-good", sdprl::ConfigTable());
  EXPECT_DOUBLE_EQ(loss->value(3.0), 3.0);
  EXPECT_NE(find_plugin(host.discover(), "test-good", PluginKind::kLoss), nullptr);
}

TEST_F(PluginHostTest, CreateApplication) {
  PluginHost host({kPluginDir});
  std::shared_ptr<sdprl::Application> app = host.create_application("test-app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->name(), "test-app");
}

TEST_F(PluginHostTest, MissingPluginListsEveryPathTriedAndEveryPluginFound) {
  TempDir empty;
  const fs::path good = plugin_file(PluginKind::kLoss, "test-good");
  PluginPathGuard env(empty.path().string());
  PluginHost host({kPluginDir, good});
  try {
    host.create_loss("no-such-loss", sdprl::ConfigTable());
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    const std::string message = e.message();
    EXPECT_EQ(e.where(), "");
    EXPECT_NE(message.find("no loss plugin named 'no-such-loss'"), std::string::npos) << message;
    EXPECT_NE(message.find("searched: "), std::string::npos) << message;
    // The explicit file was tried, and the expected file name in every search directory.
    EXPECT_NE(message.find(good.string()), std::string::npos) << message;
    for (const auto& dir : host.search_directories()) {
      const std::string tried = (dir / "sdprl-loss-no-such-loss.so").string();
      EXPECT_NE(message.find(tried), std::string::npos) << tried << " not in: " << message;
    }
    EXPECT_NE(message.find((empty.path() / "sdprl-loss-no-such-loss.so").string()),
              std::string::npos)
        << message;
    // Every plugin found, with its kind and file.
    EXPECT_NE(message.find("plugins found: "), std::string::npos) << message;
    EXPECT_NE(message.find("test-good (loss, "), std::string::npos) << message;
    EXPECT_NE(message.find("test-app (application, "), std::string::npos) << message;
  }
}

TEST_F(PluginHostTest, WrongKindIsNotFound) {
  PluginHost host({kPluginDir});
  // test-app is an application: there is no loss of that name.
  try {
    host.create_loss("test-app", sdprl::ConfigTable());
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("no loss plugin named 'test-app'"), std::string::npos)
        << e.message();
  }
  EXPECT_THROW(host.create_application("test-good"), Error);
}

TEST_F(PluginHostTest, AbiMismatchShowsBothVersions) {
  const fs::path abi = plugin_file(PluginKind::kLoss, "test-abi");
  const std::string expected = "loss plugin ABI version 999, this sdprl expects " +
                               std::to_string(sdprl::kLossAbiVersion) + " (plugin built by ";
  try {
    PluginHost::inspect(abi);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), abi.string());
    EXPECT_NE(e.message().find(expected), std::string::npos) << e.message();
  }

  PluginHost host({kPluginDir});
  try {
    host.create_loss("test-abi", sdprl::ConfigTable());
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(expected), std::string::npos) << e.message();
  }
}

// Each kind has its own ABI version: a loss built against the previous application ABI (the
// sdprl before an application-interface change) still loads and works.
TEST_F(PluginHostTest, LossBuiltAgainstThePreviousApplicationAbiLoads) {
  static_assert(sdprl::abi_version(PluginKind::kLoss) == sdprl::kLossAbiVersion);
  static_assert(sdprl::abi_version(PluginKind::kApplication) == sdprl::kApplicationAbiVersion);
  const PluginInfo info =
      PluginHost::inspect(plugin_file(PluginKind::kLoss, "test-previous-app-abi"));
  EXPECT_EQ(info.kind, PluginKind::kLoss);
  EXPECT_EQ(info.name, "test-previous-app-abi");

  PluginHost host({kPluginDir});
  std::shared_ptr<sdprl::Loss> loss =
      host.create_loss("test-previous-app-abi", sdprl::ConfigTable());
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->name(), "test-previous-app-abi");
  EXPECT_DOUBLE_EQ(loss->value(3.0), 1.5);
  EXPECT_DOUBLE_EQ(loss->derivative(3.0), 0.5);
  EXPECT_NE(find_plugin(host.discover(), "test-previous-app-abi", PluginKind::kLoss), nullptr);
}

// ... while an application built the same way is refused, with the kind and both versions.
TEST_F(PluginHostTest, ApplicationOfThePreviousApplicationAbiIsRefused) {
  const fs::path app = plugin_file(PluginKind::kApplication, "test-previous-app-abi");
  const std::string expected =
      "application plugin ABI version " + std::to_string(sdprl::kApplicationAbiVersion - 1) +
      ", this sdprl expects " + std::to_string(sdprl::kApplicationAbiVersion) +
      " (plugin built by ";
  try {
    PluginHost::inspect(app);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), app.string());
    EXPECT_NE(e.message().find(expected), std::string::npos) << e.message();
  }

  PluginHost host({kPluginDir});
  try {
    host.create_application("test-previous-app-abi");
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), app.string());
    EXPECT_NE(e.message().find(expected), std::string::npos) << e.message();
  }
  EXPECT_EQ(find_plugin(host.discover(), "test-previous-app-abi", PluginKind::kApplication),
            nullptr);
}

// libsdprl's SONAME is libsdprl.so.<loss ABI> (framework/CMakeLists.txt reads it from plugin.h):
// the library this test runs with, found by the loader through that SONAME, carries it.
TEST_F(PluginHostTest, LibrarySonameIsTheLossAbi) {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string name = fs::path(info->dlpi_name != nullptr ? info->dlpi_name : "")
                                     .filename()
                                     .string();
        if (name.rfind("libsdprl.so", 0) == 0) {
          static_cast<std::vector<std::string>*>(data)->push_back(name);
        }
        return 0;
      },
      &names);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "libsdprl.so." + std::to_string(sdprl::kLossAbiVersion));
}

// A plugin linked against another libsdprl SONAME fails in the dynamic loader, before its
// descriptor can be read: the message names both libraries and says to rebuild.
TEST_F(PluginHostTest, PluginOfAnotherLibraryVersionIsRefusedClearly) {
  const fs::path other = plugin_file(PluginKind::kLoss, "test-other-soname");
  try {
    PluginHost::inspect(other);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), other.string());
    const std::string own = "libsdprl.so." + std::to_string(sdprl::kLossAbiVersion);
    EXPECT_EQ(e.message().rfind("cannot load plugin: libsdprl.so.999: ", 0), 0u) << e.message();
    EXPECT_NE(e.message().find("the plugin was built against another sdprl (this one is " + own +
                               ", loss plugin ABI version " +
                               std::to_string(sdprl::kLossAbiVersion) +
                               ", application plugin ABI version " +
                               std::to_string(sdprl::kApplicationAbiVersion) +
                               "); rebuild the plugin against this sdprl"),
              std::string::npos)
        << e.message();
  }
  PluginHost host({kPluginDir});
  EXPECT_EQ(find_plugin(host.discover(), "test-other-soname", PluginKind::kLoss), nullptr);
}

TEST_F(PluginHostTest, PluginPathEnvironmentIsHonored) {
  PluginPathGuard env("/nonexistent/sdprl/plugins::" + kPluginDir.string());
  PluginHost host;  // no explicit paths
  const std::vector<fs::path> dirs = host.search_directories();
  const auto nonexistent = index_of(dirs, "/nonexistent/sdprl/plugins");
  const auto test_dir = index_of(dirs, kPluginDir);
  ASSERT_EQ(nonexistent, 0);
  ASSERT_EQ(test_dir, 1);

  std::shared_ptr<sdprl::Loss> loss = host.create_loss("test-good", sdprl::ConfigTable());
  EXPECT_DOUBLE_EQ(loss->value(1.25), 1.25);
  EXPECT_NE(find_plugin(host.discover(), "test-good", PluginKind::kLoss), nullptr);
}

TEST_F(PluginHostTest, WithoutPathsTestPluginsAreNotFound) {
  PluginHost host;  // SDPRL_PLUGIN_PATH unset by the fixture
  EXPECT_EQ(index_of(host.search_directories(), kPluginDir), -1);
  EXPECT_THROW(host.create_loss("test-good", sdprl::ConfigTable()), Error);
}

TEST_F(PluginHostTest, GarbageFileIsRefusedClearly) {
  const fs::path garbage = kPluginDir / "sdprl-loss-test-garbage.so";
  ASSERT_TRUE(fs::is_regular_file(garbage));
  try {
    PluginHost::inspect(garbage);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), garbage.string());
    EXPECT_NE(e.message().find("cannot load plugin"), std::string::npos) << e.message();
  }
  // Named for the plugin "test-garbage": create_loss reports why it cannot be used.
  PluginHost host({kPluginDir});
  try {
    host.create_loss("test-garbage", sdprl::ConfigTable());
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), garbage.string());
    EXPECT_NE(e.message().find("cannot load plugin"), std::string::npos) << e.message();
  }
}

TEST_F(PluginHostTest, GarbageFileWrittenAtTestTimeIsSkippedByDiscover) {
  TempDir dir;
  const fs::path fake = dir.path() / "sdprl-loss-fake.so";
  {
    std::ofstream out(fake);
    out << "\x7f" "ELF but not really\n";
  }
  PluginHost host({dir.path(), kPluginDir});
  const std::vector<PluginInfo> plugins = host.discover();
  EXPECT_NE(find_plugin(plugins, "test-good", PluginKind::kLoss), nullptr);
  EXPECT_EQ(find_plugin(plugins, "fake", PluginKind::kLoss), nullptr);
  EXPECT_THROW(PluginHost::inspect(fake), Error);
  // Listed with the reason when asked (sdprl plugins prints them).
  std::vector<PluginHost::Skipped> skipped;
  host.discover(&skipped);
  bool listed = false;
  for (const auto& s : skipped)
    if (s.file == fake) listed = !s.reason.empty();
  EXPECT_TRUE(listed);
}

// A plugin compiled without optimisation loads, and the host says once why it will be slow.
TEST_F(PluginHostTest, UnoptimizedPluginLoadsWithAWarning) {
  PluginHost host({kPluginDir});
  testing::internal::CaptureStderr();
  const auto loss = host.create_loss("test-unoptimized", sdprl::ConfigTable());
  const auto again = host.create_loss("test-unoptimized", sdprl::ConfigTable());
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_NE(loss, nullptr);
  const std::string warning = "was compiled without optimisation (a build with no CMAKE_BUILD_TYPE?); it runs "
                              "several times slower: rebuild it with -DCMAKE_BUILD_TYPE=Release\n";
  ASSERT_NE(err.find(warning), std::string::npos) << err;
  EXPECT_EQ(err.find(warning), err.rfind(warning)) << "warned twice:\n" << err;
  testing::internal::CaptureStderr();
  host.create_loss("test-good", sdprl::ConfigTable());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(PluginHostTest, SharedLibraryWithoutDescriptorIsRefused) {
  const fs::path nodesc = plugin_file(PluginKind::kLoss, "test-nodesc");
  try {
    PluginHost::inspect(nodesc);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), nodesc.string());
    EXPECT_EQ(e.message(), "not an sdprl plugin: no symbol sdprl_plugin_descriptor_v1");
  }
}

TEST_F(PluginHostTest, MissingFileIsRefusedClearly) {
  const fs::path missing = kPluginDir / "sdprl-loss-does-not-exist.so";
  try {
    PluginHost::inspect(missing);
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), missing.string());
    EXPECT_NE(e.message().find("does not exist"), std::string::npos) << e.message();
  }
}

TEST_F(PluginHostTest, FactoryErrorPassesThroughUnchanged) {
  PluginHost host({kPluginDir});
  try {
    host.create_loss("test-throw", sdprl::ConfigTable());
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "model.toml:3:7");
    EXPECT_EQ(e.message(), "loss.delta: expected a number > 0, got -1");
  }
}

TEST_F(PluginHostTest, OtherFactoryExceptionsAreWrapped) {
  PluginHost host({kPluginDir});
  try {
    host.create_loss("test-throw-std", sdprl::ConfigTable());
    FAIL() << "expected sdprl::Error";
  } catch (const Error& e) {
    EXPECT_EQ(fs::path(e.where()).filename(), "sdprl-loss-test-throw-std.so") << e.where();
    EXPECT_NE(e.message().find("test-throw-std"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("out of widgets"), std::string::npos) << e.message();
  }
}
