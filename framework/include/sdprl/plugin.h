// The plugin boundary. A plugin is a shared module (CMake MODULE library) that exports exactly two
// symbols:
//   * `sdprl_plugin_descriptor_v1`, a plain C struct (below) that the host reads first and checks
//     (magic, struct size, ABI version, Eigen alignment, kind), so that a plugin built against
//     another sdprl refuses to load with both values shown instead of crashing;
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

// Bump on any change of a public interface class layout or of a factory signature.
// 2: TermLinearization gained row_offsets()/row_vectors() (the fused row-split ADMM pass).
// 3: TermLinearization gained term_weights()/shared_gram_block() (loss weights outside P).
// 4: TermLinearization gained update_with_loss() (the one-pass MM rebuild).
// 5: update_with_loss() takes a RowConsumer (the rebuild fused with the next ADMM's first iteration).
// 6: TermLinearization gained gram_row_traces() (the row-scaled preconditioner without n r^2 doubles).
#define SDPRL_PLUGIN_ABI_VERSION_CURRENT 6
#ifndef SDPRL_PLUGIN_ABI_VERSION
#define SDPRL_PLUGIN_ABI_VERSION SDPRL_PLUGIN_ABI_VERSION_CURRENT
#endif
constexpr std::uint32_t kPluginMagic = 0x53445052u;  // "SDPR"
constexpr std::uint32_t kPluginAbiVersion = SDPRL_PLUGIN_ABI_VERSION_CURRENT;

enum class PluginKind : std::uint32_t { kLoss = 1, kApplication = 2 };
SDPRL_API const char* to_string(PluginKind kind);

using LossFactory = std::unique_ptr<Loss>(const ConfigTable& parameters);
using ApplicationFactory = std::unique_ptr<Application>();

}  // namespace sdprl

extern "C" {
struct sdprl_plugin_descriptor {
  std::uint32_t magic;             // kPluginMagic
  std::uint32_t struct_size;       // sizeof(sdprl_plugin_descriptor) when built
  std::uint32_t abi_version;       // SDPRL_PLUGIN_ABI_VERSION when built
  std::uint32_t kind;              // PluginKind
  std::uint32_t eigen_max_align;   // EIGEN_MAX_ALIGN_BYTES when built (must match the host's)
  const char* compiler;            // __VERSION__ when built, for messages
  const char* name;                // e.g. "leaky-mcp"
  const char* version;             // the plugin's own version, e.g. "1.0"
  const char* description;         // one line
};
}

#define SDPRL_DETAIL_PLUGIN_DESCRIPTOR(KIND, NAME, VERSION, DESCRIPTION)                        \
  extern "C" __attribute__((visibility("default"))) const sdprl_plugin_descriptor               \
      sdprl_plugin_descriptor_v1 = {::sdprl::kPluginMagic,                                      \
                                    static_cast<std::uint32_t>(sizeof(sdprl_plugin_descriptor)), \
                                    SDPRL_PLUGIN_ABI_VERSION,                                   \
                                    static_cast<std::uint32_t>(KIND),                           \
                                    EIGEN_MAX_ALIGN_BYTES,                                      \
                                    __VERSION__,                                                \
                                    NAME,                                                       \
                                    VERSION,                                                    \
                                    DESCRIPTION};

// Declares a loss plugin. FACTORY: a function std::unique_ptr<sdprl::Loss>(const ConfigTable&)
// that reads and validates the [loss] table (minus its "type" key).
#define SDPRL_LOSS_PLUGIN(NAME, VERSION, DESCRIPTION, FACTORY)                              \
  SDPRL_DETAIL_PLUGIN_DESCRIPTOR(::sdprl::PluginKind::kLoss, NAME, VERSION, DESCRIPTION)    \
  namespace sdprl_plugin_entry {                                                            \
  std::unique_ptr<::sdprl::Loss> create(const ::sdprl::ConfigTable& parameters) {          \
    return FACTORY(parameters);                                                             \
  }                                                                                         \
  }                                                                                         \
  BOOST_DLL_ALIAS(sdprl_plugin_entry::create, sdprl_plugin_factory)

// Declares an application plugin. CLASS: a default-constructible sdprl::Application.
#define SDPRL_APPLICATION_PLUGIN(NAME, VERSION, DESCRIPTION, CLASS)                             \
  SDPRL_DETAIL_PLUGIN_DESCRIPTOR(::sdprl::PluginKind::kApplication, NAME, VERSION, DESCRIPTION) \
  namespace sdprl_plugin_entry {                                                                \
  std::unique_ptr<::sdprl::Application> create() { return std::make_unique<CLASS>(); }         \
  }                                                                                             \
  BOOST_DLL_ALIAS(sdprl_plugin_entry::create, sdprl_plugin_factory)
