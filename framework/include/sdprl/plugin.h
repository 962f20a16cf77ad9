// The plugin boundary. A plugin is a shared module (CMake MODULE library) that exports exactly two
// symbols:
//   * `sdprl_plugin_descriptor_v1`, a plain C struct (below) that the host reads first and checks
//     (magic, struct size, kind, the ABI version of that kind, Eigen alignment), so that a plugin
//     built against another sdprl refuses to load with both values shown instead of crashing;
//   * one factory, exported through BOOST_DLL_ALIAS as `sdprl_plugin_factory`, whose signature
//     depends on the kind (LossFactory or ApplicationFactory below).
// Plugins are compiled with hidden visibility; these macros export the two symbols. Use exactly
// one SDPRL_*_PLUGIN macro per plugin, in one source file, at namespace scope.
#pragma once

#include <cstdint>
#include <memory>

#ifndef BOOST_DLL_FORCE_ALIAS_INSTANTIATION
#define BOOST_DLL_FORCE_ALIAS_INSTANTIATION
#endif
#include <boost/dll/alias.hpp>

#include "sdprl/application.h"
#include "sdprl/config.h"
#include "sdprl/loss.h"

namespace sdprl {

// One ABI version per plugin kind, so that a change a kind never sees does not make its plugins
// refuse to load. CHANGELOG.md records every bump and what it changed.
//
// The loss ABI: what a loss plugin's binary depends on, i.e. the Loss class (its virtual functions
// and their order), ConfigTable and NumberRule, Error, the LossFactory signature and the
// descriptor below. Bump it on any incompatible change of these; since applications call losses,
// such a change bumps the application ABI too. It is also libsdprl's SOVERSION (the SONAME every
// plugin is linked against), so that a loss plugin keeps loading while only the application ABI
// changes.
#define SDPRL_LOSS_ABI_VERSION_CURRENT 1
// The application ABI: everything an application plugin's binary depends on (every installed
// header: the terms, ConstraintSet, Application, the readers, the graph helpers, and the loss ABI).
// Bump it on any incompatible change of a public class layout, a virtual function or a factory
// signature. 1 to 6 were the single plugin ABI before it was split per kind (CHANGELOG.md).
#define SDPRL_APPLICATION_ABI_VERSION_CURRENT 7
// A plugin is built for the versions of the headers it includes; tests override them to build a
// plugin as if against another sdprl.
#ifndef SDPRL_LOSS_ABI_VERSION
#define SDPRL_LOSS_ABI_VERSION SDPRL_LOSS_ABI_VERSION_CURRENT
#endif
#ifndef SDPRL_APPLICATION_ABI_VERSION
#define SDPRL_APPLICATION_ABI_VERSION SDPRL_APPLICATION_ABI_VERSION_CURRENT
#endif
constexpr std::uint32_t kPluginMagic = 0x53445052u;  // "SDPR"
constexpr std::uint32_t kLossAbiVersion = SDPRL_LOSS_ABI_VERSION_CURRENT;
constexpr std::uint32_t kApplicationAbiVersion = SDPRL_APPLICATION_ABI_VERSION_CURRENT;

enum class PluginKind : std::uint32_t { kLoss = 1, kApplication = 2 };
SDPRL_API const char* to_string(PluginKind kind);

// The ABI version this sdprl expects of a plugin of `kind`.
constexpr std::uint32_t abi_version(PluginKind kind) {
  return kind == PluginKind::kLoss ? kLossAbiVersion : kApplicationAbiVersion;
}

using LossFactory = std::unique_ptr<Loss>(const ConfigTable& parameters);
using ApplicationFactory = std::unique_ptr<Application>();

}  // namespace sdprl

extern "C" {
struct sdprl_plugin_descriptor {
  std::uint32_t magic;             // kPluginMagic
  std::uint32_t struct_size;       // sizeof(sdprl_plugin_descriptor) when built
  std::uint32_t abi_version;       // the ABI version of its kind when built: SDPRL_LOSS_ABI_VERSION
                                   // or SDPRL_APPLICATION_ABI_VERSION
  std::uint32_t kind;              // PluginKind
  std::uint32_t eigen_max_align;   // EIGEN_MAX_ALIGN_BYTES when built (must match the host's)
  const char* compiler;            // __VERSION__ when built, for messages
  const char* name;                // e.g. "leaky-mcp"
  const char* version;             // the plugin's own version, e.g. "1.0"
  const char* description;         // one line
};
}

// Whether the plugin was compiled with optimisation (__OPTIMIZE__, set by -O1 and above): the host
// warns about one that was not (a plugin built without a build type ran 6.4x slower). A symbol of
// its own beside the descriptor, so that the descriptor's layout, and so no ABI, changes; plugins
// without it are not warned about.
#if defined(__OPTIMIZE__)
#define SDPRL_DETAIL_PLUGIN_OPTIMIZED 1
#else
#define SDPRL_DETAIL_PLUGIN_OPTIMIZED 0
#endif

#define SDPRL_DETAIL_PLUGIN_DESCRIPTOR(KIND, ABI, NAME, VERSION, DESCRIPTION)                   \
  extern "C" __attribute__((visibility("default"))) const int sdprl_plugin_optimized =          \
      SDPRL_DETAIL_PLUGIN_OPTIMIZED;                                                            \
  extern "C" __attribute__((visibility("default"))) const sdprl_plugin_descriptor               \
      sdprl_plugin_descriptor_v1 = {::sdprl::kPluginMagic,                                      \
                                    static_cast<std::uint32_t>(sizeof(sdprl_plugin_descriptor)), \
                                    static_cast<std::uint32_t>(ABI),                            \
                                    static_cast<std::uint32_t>(KIND),                           \
                                    EIGEN_MAX_ALIGN_BYTES,                                      \
                                    __VERSION__,                                                \
                                    NAME,                                                       \
                                    VERSION,                                                    \
                                    DESCRIPTION};

// Declares a loss plugin. FACTORY: a function std::unique_ptr<sdprl::Loss>(const ConfigTable&)
// that reads and validates the [loss] table (minus its "type" key).
#define SDPRL_LOSS_PLUGIN(NAME, VERSION, DESCRIPTION, FACTORY)                              \
  SDPRL_DETAIL_PLUGIN_DESCRIPTOR(::sdprl::PluginKind::kLoss, SDPRL_LOSS_ABI_VERSION, NAME,   \
                                 VERSION, DESCRIPTION)                                     \
  namespace sdprl_plugin_entry {                                                            \
  std::unique_ptr<::sdprl::Loss> create(const ::sdprl::ConfigTable& parameters) {          \
    return FACTORY(parameters);                                                             \
  }                                                                                         \
  }                                                                                         \
  BOOST_DLL_ALIAS(sdprl_plugin_entry::create, sdprl_plugin_factory)

// Declares an application plugin. CLASS: a default-constructible sdprl::Application.
#define SDPRL_APPLICATION_PLUGIN(NAME, VERSION, DESCRIPTION, CLASS)                             \
  SDPRL_DETAIL_PLUGIN_DESCRIPTOR(::sdprl::PluginKind::kApplication,                            \
                                 SDPRL_APPLICATION_ABI_VERSION, NAME, VERSION, DESCRIPTION)    \
  namespace sdprl_plugin_entry {                                                                \
  std::unique_ptr<::sdprl::Application> create() { return std::make_unique<CLASS>(); }         \
  }                                                                                             \
  BOOST_DLL_ALIAS(sdprl_plugin_entry::create, sdprl_plugin_factory)
