// Internal: the checkpoint of `sdprl run` (checkpoint.sdprl in the output directory), read by
// `sdprl run --resume DIR`.
//
// It holds the run as it was started (the model file's path and its bytes then, the --set
// overrides, the plugin paths), the finished lambdas of the grid with the best one's factor, and
// the solver state (sdprl/solver.h: SolverState) inside the current lambda. Doubles are stored as
// their raw 8 bytes, so the state is exact and a resumed run continues bit for bit. The format is
// that of this machine (byte order and double layout are checked on reading, not converted):
// a checkpoint is for resuming on the machine that wrote it.
//
// Layout: the magic "SDPRL-CHECKPOINT", a format version (u32), a byte-order probe (u64), the
// fields in the order of write_checkpoint(), and the FNV-1a hash (u64) of everything before it,
// so that a truncated or altered file is refused instead of resumed wrongly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/runner.h"
#include "sdprl/solver.h"

namespace sdprl::run_detail {

inline constexpr const char* kCheckpointFile = "checkpoint.sdprl";

struct Checkpoint {
  // The run as it was started.
  std::string model_file;   // absolute
  std::string model_text;   // the model file's bytes when the run started
  std::vector<std::pair<std::string, std::string>> overrides;
  std::vector<std::string> plugin_paths;  // absolute
  // The lambda grid: the finished lambdas (in grid order), the best of them and its factor.
  std::vector<LambdaTrial> trials;
  std::uint64_t best = 0;
  Matrix best_X;
  // The last finished lambda's factor: the next one's start under solver.lambda_path (empty when
  // no lambda has finished).
  Matrix last_X;
  // The current lambda is lambdas[trials.size()]; `state` is its solver state after at least one
  // MM step, or absent when the checkpoint was taken between two lambdas.
  bool has_state = false;
  SolverState state;
  // Writing only: the state to write in place of `state` (no copy of the ADMM vectors).
  const SolverState* state_ref = nullptr;
};

// Writes `checkpoint` to `file` atomically (sdprl/io/atomic_file.h); throws Error on failure.
void write_checkpoint(const std::filesystem::path& file, const Checkpoint& checkpoint);

// Reads a checkpoint; throws Error(file, what is wrong) when the file is missing, truncated,
// altered, of another format version or written on a machine with another byte order.
Checkpoint read_checkpoint(const std::filesystem::path& file);

}  // namespace sdprl::run_detail
