// PluginHost: finds, checks and loads plugins.
//
// Search order (first match wins): explicit directories or files (command line or TOML), then the
// directories in SDPRL_PLUGIN_PATH (':'-separated), then the plugin directory next to the
// executable (<exe dir>/../lib/sdprl/plugins and <exe dir>), then the install prefix. A plugin of
// kind K and name N lives in a file named sdprl-K-N.so (e.g. sdprl-loss-leaky-mcp.so).
//
// Lifetime: a loaded library is never unloaded. Objects made by a plugin (a loss, an application,
// the model it builds and the closures inside it) hold code from that library; keeping every
// library for the life of the process is the simple rule that makes it impossible for such an
// object to outlive its code (Boost.DLL "missuses": late unload).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sdprl/application.h"
#include "sdprl/config.h"
#include "sdprl/export.h"
#include "sdprl/loss.h"
#include "sdprl/plugin.h"

namespace sdprl {

struct PluginInfo {
  std::string name;
  PluginKind kind = PluginKind::kLoss;
  std::string version;
  std::string description;
  std::filesystem::path file;
};

class SDPRL_API PluginHost {
 public:
  // `explicit_paths`: directories (searched) or .so files (loaded as they are), searched first.
  explicit PluginHost(std::vector<std::filesystem::path> explicit_paths = {});

  // The directories searched, in order (explicit files are not listed).
  std::vector<std::filesystem::path> search_directories() const;

  // A file named like a plugin that could not be loaded, and why (not a plugin, another ABI, ...).
  struct Skipped {
    std::filesystem::path file;
    std::string reason;
  };
  // Every plugin found in the search directories and explicit files, first occurrence of each
  // (kind, name) only. Files that fail the descriptor check are skipped, and listed in `skipped`
  // when it is given.
  std::vector<PluginInfo> discover(std::vector<Skipped>* skipped = nullptr) const;

  // Loads the loss plugin `name` and builds a loss from `parameters`. Not found: Error naming every
  // path tried and every plugin found; ABI mismatch: Error with both values.
  std::shared_ptr<Loss> create_loss(const std::string& name, const ConfigTable& parameters) const;
  std::shared_ptr<Application> create_application(const std::string& name) const;

  // Every file that serves the plugin of this kind and name, in the search order: create_loss()
  // and create_application() load the first, the others are shadowed by it (a user's plugin
  // named like a built-in one). Empty when there is none.
  std::vector<std::filesystem::path> candidates(PluginKind kind, const std::string& name) const;
  // True when `file` comes from a path the user named (the explicit paths, $SDPRL_PLUGIN_PATH),
  // not from the program's own or the install directory.
  bool from_user_paths(const std::filesystem::path& file) const;

  // Reads and checks the descriptor of one file (loads it). Throws Error on any mismatch.
  static PluginInfo inspect(const std::filesystem::path& file);

  // The file name a plugin of this kind and name has: "sdprl-loss-l1.so".
  static std::string file_name(PluginKind kind, const std::string& name);

 private:
  std::filesystem::path locate(PluginKind kind, const std::string& name) const;
  // The files that serve kind/name in the search order (all of them, or the first); `tried` gets
  // every path looked at.
  std::vector<std::filesystem::path> search(PluginKind kind, const std::string& name, bool all,
                                            std::vector<std::filesystem::path>* tried) const;
  std::vector<std::filesystem::path> explicit_paths_;
};

}  // namespace sdprl
