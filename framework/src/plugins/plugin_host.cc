// PluginHost: search paths, descriptor checks and the process-lifetime library registry.
#include "sdprl/plugin_host.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <cstdio>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include "sdprl/error.h"

namespace sdprl {

namespace fs = std::filesystem;

const char* to_string(PluginKind kind) {
  switch (kind) {
    case PluginKind::kLoss:
      return "loss";
    case PluginKind::kApplication:
      return "application";
  }
  return "unknown";
}

namespace {

constexpr const char* kDescriptorSymbol = "sdprl_plugin_descriptor_v1";
constexpr const char* kFactoryAlias = "sdprl_plugin_factory";

// A path in a form suitable as a map key and for duplicate detection: absolute, symlinks resolved
// as far as the path exists, lexically normal. Never throws.
fs::path normalized(const fs::path& path) {
  std::error_code ec;
  fs::path result = fs::weakly_canonical(path, ec);
  if (ec) {
    result = fs::absolute(path, ec);
    if (ec) result = path;
  }
  return result.lexically_normal();
}

// Every library ever loaded, keyed by its normalized path. Intentionally leaked: a library is never
// unloaded, so no object made by a plugin can outlive its code (not even during static
// destruction at exit). References into the map stay valid forever (std::map is node-based).
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

std::map<fs::path, boost::dll::shared_library>& registry() {
  static auto* libraries = new std::map<fs::path, boost::dll::shared_library>;
  return *libraries;
}

// Loads `file` once per process; later calls return the same library. Throws Error on failure.
const boost::dll::shared_library& load_library(const fs::path& file) {
  const fs::path key = normalized(file);
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& libraries = registry();
  auto found = libraries.find(key);
  if (found != libraries.end()) return found->second;

  std::error_code exists_ec;
  if (!fs::exists(key, exists_ec)) {
    throw Error(file.string(), "cannot load plugin: file does not exist");
  }
  if (fs::is_directory(key, exists_ec)) {
    throw Error(file.string(), "cannot load plugin: this is a directory, not a shared library");
  }

  boost::dll::fs::error_code ec;
  boost::dll::shared_library library(key, ec, boost::dll::load_mode::default_mode);
  if (ec || !library.is_loaded()) {
    const char* dl_message = dlerror();
    std::string reason = dl_message != nullptr ? std::string(dl_message) : ec.message();
    // dlerror() starts with the path, which `where` already shows.
    for (const std::string& prefix : {key.string() + ": ", file.string() + ": "}) {
      if (reason.rfind(prefix, 0) == 0) {
        reason.erase(0, prefix.size());
        break;
      }
    }
    // A plugin linked against another libsdprl SONAME (libsdprl.so.<loss ABI>, CHANGELOG.md)
    // fails here, before its descriptor can be read: say so.
    const std::string own_soname = "libsdprl.so." + std::to_string(kLossAbiVersion);
    if (reason.rfind("libsdprl.so.", 0) == 0 && reason.rfind(own_soname + ":", 0) != 0) {
      reason += "; the plugin was built against another sdprl (this one is " + own_soname +
                ", loss plugin ABI version " + std::to_string(kLossAbiVersion) +
                ", application plugin ABI version " + std::to_string(kApplicationAbiVersion) +
                "); rebuild the plugin against this sdprl";
    }
    throw Error(file.string(), "cannot load plugin: " + reason);
  }
  return libraries.emplace(key, std::move(library)).first->second;
}

const char* or_empty(const char* text) { return text != nullptr ? text : ""; }

bool has_so_extension(const fs::path& path) { return path.extension() == ".so"; }

bool is_plugin_file_name(const fs::path& path) {
  const std::string name = path.filename().string();
  return has_so_extension(path) && name.rfind("sdprl-", 0) == 0;
}

// An explicit path names a file when it is one or when it ends in .so (and is not a directory).
bool is_explicit_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return false;
  if (fs::is_regular_file(path, ec)) return true;
  return has_so_extension(path);
}

bool is_loadable_candidate(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec) && !fs::is_directory(path, ec);
}

// The plugin files of one directory, sorted by name (so that discovery is deterministic).
std::vector<fs::path> plugin_files_in(const fs::path& directory) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return files;
  fs::directory_iterator it(directory, ec);
  if (ec) return files;
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::path& path = it->path();
    std::error_code entry_ec;
    if (is_plugin_file_name(path) && !fs::is_directory(path, entry_ec)) files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string describe(const PluginInfo& info) {
  return info.name + " (" + to_string(info.kind) + ", " + info.file.string() + ")";
}

// The library of a located plugin file, checked: the descriptor passes inspect() and declares the
// expected kind and name.
const boost::dll::shared_library& checked_library(const fs::path& file, PluginKind kind,
                                                  const std::string& name) {
  const PluginInfo info = PluginHost::inspect(file);
  if (info.kind != kind || info.name != name) {
    throw Error(file.string(), std::string("expected the ") + to_string(kind) + " plugin '" + name +
                                   "', but this file declares the " + to_string(info.kind) +
                                   " plugin '" + info.name + "'");
  }
  const auto& library = load_library(file);
  // An unoptimised plugin works, slowly: said once per file.
  static std::set<fs::path> warned;
  if (library.has("sdprl_plugin_optimized") && library.get<const int>("sdprl_plugin_optimized") == 0 &&
      warned.insert(file).second) {
    std::fprintf(stderr,
                 "sdprl: warning: %s was compiled without optimisation (a build with no CMAKE_BUILD_TYPE?); it "
                 "runs several times slower: rebuild it with -DCMAKE_BUILD_TYPE=Release\n",
                 file.string().c_str());
  }
  if (!library.has(kFactoryAlias)) {
    throw Error(file.string(),
                std::string("not an sdprl plugin: no symbol ") + kFactoryAlias +
                    " (declare the plugin with SDPRL_LOSS_PLUGIN or SDPRL_APPLICATION_PLUGIN)");
  }
  return library;
}

// Calls a plugin factory: sdprl::Error passes through unchanged; anything else thrown is wrapped
// in an Error naming the plugin file; a null result is an Error.
template <typename Result, typename Call>
std::shared_ptr<Result> run_factory(const fs::path& file, PluginKind kind, const std::string& name,
                                    Call&& call) {
  std::unique_ptr<Result> result;
  try {
    result = call();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(file.string(), std::string(to_string(kind)) + " plugin '" + name +
                                   "' failed: " + e.what());
  } catch (...) {
    // `throw 42;` reached std::terminate (exit 134, no message of sdprl's).
    throw Error(file.string(), std::string(to_string(kind)) + " plugin '" + name +
                                   "' failed: it threw something that is not a std::exception");
  }
  if (!result) {
    throw Error(file.string(),
                std::string(to_string(kind)) + " plugin '" + name + "' returned no object");
  }
  return std::shared_ptr<Result>(std::move(result));
}

}  // namespace

PluginHost::PluginHost(std::vector<fs::path> explicit_paths)
    : explicit_paths_(std::move(explicit_paths)) {}

std::string PluginHost::file_name(PluginKind kind, const std::string& name) {
  return std::string("sdprl-") + to_string(kind) + "-" + name + ".so";
}

namespace {
// The directories a user names: explicit ones (--plugin-path, [plugins] path) and $SDPRL_PLUGIN_PATH's.
std::vector<fs::path> user_directories(const std::vector<fs::path>& explicit_paths) {
  std::vector<fs::path> directories;
  for (const auto& path : explicit_paths) {
    if (!path.empty() && !is_explicit_file(path)) directories.push_back(path);
  }
  if (const char* env = std::getenv("SDPRL_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (true) {
      const std::size_t colon = rest.find(':');
      const std::string_view entry = rest.substr(0, colon);
      if (!entry.empty()) directories.emplace_back(std::string(entry));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  return directories;
}
}  // namespace

bool PluginHost::from_user_paths(const fs::path& file) const {
  for (const auto& path : explicit_paths_)
    if (!path.empty() && is_explicit_file(path) && normalized(path) == normalized(file)) return true;
  for (const auto& directory : user_directories(explicit_paths_))
    if (normalized(directory) == normalized(file.parent_path())) return true;
  return false;
}

std::vector<fs::path> PluginHost::search_directories() const {
  std::vector<fs::path> candidates = user_directories(explicit_paths_);
  boost::dll::fs::error_code ec;
  const fs::path program = boost::dll::program_location(ec);
  if (!ec && !program.empty()) {
    const fs::path program_dir = program.parent_path();
    candidates.push_back(program_dir / ".." / "lib" / "sdprl" / "plugins");
    candidates.push_back(program_dir);
  }
#ifdef SDPRL_INSTALL_PLUGIN_DIR
  candidates.emplace_back(SDPRL_INSTALL_PLUGIN_DIR);
#endif

  std::vector<fs::path> directories;
  std::set<fs::path> seen;
  for (const auto& candidate : candidates) {
    if (seen.insert(normalized(candidate)).second) {
      directories.push_back(candidate.lexically_normal());
    }
  }
  return directories;
}

PluginInfo PluginHost::inspect(const fs::path& file) {
  const auto& library = load_library(file);
  const std::string where = file.string();
  if (!library.has(kDescriptorSymbol)) {
    throw Error(where, std::string("not an sdprl plugin: no symbol ") + kDescriptorSymbol);
  }
  const auto& descriptor = library.get<const sdprl_plugin_descriptor>(kDescriptorSymbol);
  if (descriptor.magic != kPluginMagic) {
    std::ostringstream message;
    message << "not an sdprl plugin: " << kDescriptorSymbol << " has magic 0x" << std::hex
            << descriptor.magic << ", expected 0x" << kPluginMagic;
    throw Error(where, message.str());
  }
  if (descriptor.struct_size < sizeof(sdprl_plugin_descriptor)) {
    throw Error(where, "plugin descriptor of " + std::to_string(descriptor.struct_size) +
                           " bytes, this sdprl expects at least " +
                           std::to_string(sizeof(sdprl_plugin_descriptor)) +
                           " (plugin built by " + or_empty(descriptor.compiler) +
                           "); rebuild the plugin against this sdprl");
  }
  // The kind before its ABI version: each kind has its own (plugin.h).
  if (descriptor.kind != static_cast<std::uint32_t>(PluginKind::kLoss) &&
      descriptor.kind != static_cast<std::uint32_t>(PluginKind::kApplication)) {
    throw Error(where, "plugin of unknown kind " + std::to_string(descriptor.kind) +
                           " (expected 1 = loss or 2 = application)");
  }
  const auto kind = static_cast<PluginKind>(descriptor.kind);
  if (descriptor.abi_version != abi_version(kind)) {
    throw Error(where, std::string(to_string(kind)) + " plugin ABI version " +
                           std::to_string(descriptor.abi_version) + ", this sdprl expects " +
                           std::to_string(abi_version(kind)) + " (plugin built by " +
                           or_empty(descriptor.compiler) +
                           "); rebuild the plugin against this sdprl");
  }
  if (descriptor.eigen_max_align != static_cast<std::uint32_t>(EIGEN_MAX_ALIGN_BYTES)) {
    throw Error(where, "plugin built with EIGEN_MAX_ALIGN_BYTES " +
                           std::to_string(descriptor.eigen_max_align) + ", this sdprl uses " +
                           std::to_string(EIGEN_MAX_ALIGN_BYTES) + " (plugin built by " +
                           or_empty(descriptor.compiler) +
                           "); build the plugin with the same compiler flags as sdprl");
  }
  if (descriptor.name == nullptr || *descriptor.name == '\0') {
    throw Error(where, "plugin descriptor has no name");
  }

  PluginInfo info;
  info.name = descriptor.name;
  info.kind = kind;
  info.version = or_empty(descriptor.version);
  info.description = or_empty(descriptor.description);
  info.file = file;
  return info;
}

std::vector<PluginInfo> PluginHost::discover(std::vector<Skipped>* skipped) const {
  std::vector<fs::path> files;
  for (const auto& path : explicit_paths_) {
    if (!path.empty() && is_explicit_file(path)) files.push_back(path);
  }
  for (const auto& directory : search_directories()) {
    for (auto& file : plugin_files_in(directory)) files.push_back(std::move(file));
  }

  std::vector<PluginInfo> found;
  std::set<std::pair<PluginKind, std::string>> seen;
  for (const auto& file : files) {
    PluginInfo info;
    try {
      info = inspect(file);
    } catch (const Error& e) {
      // Not a plugin, or one built for another sdprl: skipped, with the reason.
      if (skipped) skipped->push_back({file, e.message()});
      continue;
    } catch (const std::exception& e) {
      if (skipped) skipped->push_back({file, e.what()});
      continue;
    }
    if (seen.emplace(info.kind, info.name).second) found.push_back(std::move(info));
  }
  return found;
}

std::vector<fs::path> PluginHost::search(PluginKind kind, const std::string& name, bool all,
                                         std::vector<fs::path>* tried) const {
  const std::string wanted = file_name(kind, name);
  std::vector<fs::path> files;
  // A directory listed twice (the executable's and $SDPRL_PLUGIN_PATH's) gives its file once.
  std::set<fs::path> seen;
  auto add = [&](const fs::path& file) {
    std::error_code ec;
    const fs::path key = fs::weakly_canonical(file, ec);
    if (seen.insert(ec ? file : key).second) files.push_back(file);
    return !all;  // stop at the first
  };

  // Explicit files first: those whose descriptor declares this kind and name.
  for (const auto& path : explicit_paths_) {
    if (path.empty() || !is_explicit_file(path)) continue;
    if (tried) tried->push_back(path);
    try {
      const PluginInfo info = inspect(path);
      if (info.kind == kind && info.name == name && add(path)) return files;
    } catch (const std::exception&) {
      // A file named for exactly this plugin that fails its check, before any that serves:
      // report why, do not hide it.
      if (files.empty() && path.filename() == wanted) throw;
    }
  }

  for (const auto& directory : search_directories()) {
    const fs::path candidate = directory / wanted;
    if (tried) tried->push_back(candidate);
    if (is_loadable_candidate(candidate) && add(candidate)) return files;
  }
  return files;
}

std::vector<fs::path> PluginHost::candidates(PluginKind kind, const std::string& name) const {
  return search(kind, name, true, nullptr);
}

fs::path PluginHost::locate(PluginKind kind, const std::string& name) const {
  std::vector<fs::path> tried;
  if (const std::vector<fs::path> files = search(kind, name, false, &tried); !files.empty()) return files.front();

  std::string message = std::string("no ") + to_string(kind) + " plugin named '" + name +
                        "'; searched: ";
  for (std::size_t i = 0; i < tried.size(); ++i) {
    if (i > 0) message += ", ";
    message += tried[i].string();
  }
  if (tried.empty()) message += "(nothing)";
  message += "; plugins found: ";
  const std::vector<PluginInfo> found = discover();
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (i > 0) message += ", ";
    message += describe(found[i]);
  }
  if (found.empty()) message += "none";
  throw Error("", message);
}

std::shared_ptr<Loss> PluginHost::create_loss(const std::string& name,
                                              const ConfigTable& parameters) const {
  const fs::path file = locate(PluginKind::kLoss, name);
  const auto& library = checked_library(file, PluginKind::kLoss, name);
  auto& factory = library.get_alias<LossFactory>(kFactoryAlias);
  return run_factory<Loss>(file, PluginKind::kLoss, name, [&] { return factory(parameters); });
}

std::shared_ptr<Application> PluginHost::create_application(const std::string& name) const {
  const fs::path file = locate(PluginKind::kApplication, name);
  const auto& library = checked_library(file, PluginKind::kApplication, name);
  auto& factory = library.get_alias<ApplicationFactory>(kFactoryAlias);
  return run_factory<Application>(file, PluginKind::kApplication, name,
                                  [&] { return factory(); });
}

}  // namespace sdprl
