// Robust PSD matrix completion (paper Section "Robust matrix completion"; docs/method.md 1 and 5):
// entry terms |<X, e_i e_j^T X> - O_ij| on the observed entries, A = 0, lambda tuned on the
// validation set. Data: the synthetic instance of the paper (synthetic = { ... }) or files
// (observations = "obs.mtx" | "obs.csv", with optional validation/test files of the same kind).
//
// [model] keys:
//   synthetic = { m, rank, s, outlier_fraction, outlier_magnitude, noise_variance,
//                 sampling = "independent" | "symmetric", seed, eval_samples }
//   observations = FILE   MatrixMarket coordinate (.mtx) or CSV triplets i,j,value (1-based)
//   validation = FILE, test = FILE   same formats, compared with (X X^T)_ij
//   n = INT               the matrix size when the files do not reach the last row
//   rank = INT            default rank of the factor (synthetic: its rank; files: 5)
// Metrics: test_rmse and validation_rmse (when those sets exist), observed (count).
#include "sdprl/completion/build_completion.h"
#include "sdprl/plugin.h"

namespace sdprl::mc {
namespace {

class MatrixCompletion final : public Application {
 public:
  std::string name() const override { return "matrix-completion"; }
  Model build(const ConfigTable& table, const BuildContext& context) const override {
    return build_completion(table, context, CompletionDefaults{});
  }
};

}  // namespace
}  // namespace sdprl::mc

SDPRL_APPLICATION_PLUGIN("matrix-completion", "1.0",
                         "robust PSD matrix completion (entry terms; synthetic or MatrixMarket/CSV data)",
                         sdprl::mc::MatrixCompletion)
