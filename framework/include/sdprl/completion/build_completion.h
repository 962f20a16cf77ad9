// Shared by the matrix-completion and snmf applications: entry observations from the paper's
// synthetic generator (sdprl/completion/synthetic.h) or from MatrixMarket/CSV files, the RMSE
// evaluator, and the [model] keys they share (listed in
// plugins/applications/matrix-completion/matrix_completion.cc).
#pragma once

#include "sdprl/application.h"
#include "sdprl/export.h"
#include "sdprl/model.h"

namespace sdprl::mc {

struct CompletionDefaults {
  const char* application = "matrix-completion";
  bool exponential_factor = false;  // synthetic V_ij ~ Exp(1) (symmetric NMF)
  bool positive_outliers = false;   // synthetic outliers +sigma only (symmetric NMF)
  const Matrix* given_factor = nullptr;  // synthetic M = V V^T with this V (e.g. one-hot labels)
};

// Builds the model from [model]; a bad key, value or file throws sdprl::Error naming it.
SDPRL_API Model build_completion(const ConfigTable& table, const BuildContext& context, const CompletionDefaults& defaults);

}  // namespace sdprl::mc
