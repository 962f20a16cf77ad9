// One TOML-specified run, end to end (architecture.md's data flow):
//   TOML file (+ --set overrides) -> ConfigTable -> application plugin builds the Model -> loss
//   plugin -> solve() for each lambda of the grid (chosen on the validation set) -> outputs:
//   summary.json, trace.csv and X.mtx in the output directory, each written atomically.
// The `sdprl run` command is a thin wrapper around run_model().
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/model.h"
#include "sdprl/plugin_host.h"
#include "sdprl/solver.h"

namespace sdprl {

struct RunRequest {
  std::filesystem::path model_file;
  std::vector<std::pair<std::string, std::string>> overrides;  // --set KEY=VALUE, in order
  std::optional<std::filesystem::path> output_directory;        // --out; else [output] directory
  std::vector<std::filesystem::path> plugin_paths;              // --plugin-path, searched first
  bool quiet = false;                                           // no iteration table
  const std::atomic<bool>* interrupt = nullptr;                 // e.g. set by SIGINT
  // A hook for tests, with no model-file key or command-line option: called after every MM step
  // of every lambda's solve with that step's trace row (solve()'s IterationCallback, which goes
  // on). A test that sets *interrupt from it at MM step k stops the run as SIGINT would, but at a
  // known step: at the end of step k, or of step k + 1 when step k had already begun the next
  // step's ADMM (the fused rebuild, which a checkpoint must not split).
  std::function<void(const TraceRow& row)> after_mm_step;
  // --resume DIR: continue the run whose checkpoint (checkpoint.sdprl) is in DIR, with the model
  // file, overrides and plugin paths saved in it (model_file and overrides must then be empty;
  // plugin_paths are searched before the saved ones). Refused when the model file changed since.
  std::optional<std::filesystem::path> resume_directory;
  // --force: a new run into a directory that holds a checkpoint deletes it (refused otherwise).
  bool force = false;
};

// The exclusive lock (flock) of an output directory for the lifetime of a run: a second run into
// the same directory is refused while the first holds it. Throws Error naming the directory.
class SDPRL_API OutputLock {
 public:
  explicit OutputLock(const std::filesystem::path& directory);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

// One solve of a model whose terms are constraints (Model::infeasibility) at one penalty gamma.
struct PenaltyStep {
  double gamma = 0.0;
  SolverStatus status = SolverStatus::kNumericalError;
  int mm_iterations = 0;
  double infeasibility = 0.0;  // Model::infeasibility of the result (NaN when it has none)
  double time = 0.0;           // seconds
};

struct LambdaTrial {
  double lambda = 0.0;
  double validation_error = 0.0;
  Summary summary;
  // Models with Model::infeasibility: the penalties tried, in order; the last one is `summary`'s.
  // `summary`'s times include the earlier solves'.
  std::vector<PenaltyStep> penalty_path;
};

struct RunResult {
  Summary summary;                       // of the chosen lambda
  Matrix X;                              // its factor
  RegularizationWeights weights;         // the weights used
  std::vector<LambdaTrial> trials;       // one per lambda of the grid (a single entry without grid)
  std::filesystem::path output_directory;
  std::string loss, application;
  SolverOptions options;                 // [solver] as read (model file and --set)
  std::vector<PluginInfo> plugins;       // the application's and the loss's, as loaded
};

// Runs the model. Configuration, plugin and data errors throw sdprl::Error before any output is
// written; the output directory is checked for writability before the solve starts.
// Checkpoints ([solver] checkpoint_interval, MM solver): checkpoint.sdprl in the output directory,
// written atomically every checkpoint_interval seconds and when the run is interrupted; removed
// when the run ends with any other status (the outputs then hold the result).
SDPRL_API RunResult run_model(const RunRequest& request);

// The model of a TOML file built exactly as run_model() builds it (same plugins, overrides and
// solver.seed), with its [regularizer] weights, for commands that use the model without solving
// it (`sdprl export-sdpa`). [loss], [solver] and [output] are not read (only solver.seed).
struct LoadedModel {
  Model model;
  std::string application;
  std::filesystem::path model_file;
  std::vector<double> lambdas;  // [regularizer] lambda (a grid has several)
  double gamma = 0.0;
  std::string lambda_where;     // "file:line:column" of regularizer.lambda, for messages
};
SDPRL_API LoadedModel load_model(const RunRequest& request);

}  // namespace sdprl
