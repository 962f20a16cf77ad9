// Shared by the matrix-completion and snmf plugins: entry observations from the paper's synthetic
// generator or from MatrixMarket/CSV files, the RMSE evaluator, and the [model] keys they share.
#pragma once

#include "sdprl/application.h"
#include "sdprl/model.h"

namespace sdprl::mc {

struct CompletionDefaults {
  const char* application = "matrix-completion";
  bool exponential_factor = false;  // synthetic V_ij ~ Exp(1) (symmetric NMF)
  bool positive_outliers = false;   // synthetic outliers +sigma only (symmetric NMF)
  const Matrix* given_factor = nullptr;  // synthetic M = V V^T with this V (e.g. one-hot labels)
};

// Builds the model from [model] (keys in matrix_completion.cc's header comment).
Model build_completion(const ConfigTable& table, const BuildContext& context, const CompletionDefaults& defaults);

}  // namespace sdprl::mc
