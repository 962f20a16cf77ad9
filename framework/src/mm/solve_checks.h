// Internal (not installed): what solve() refuses before it starts, as messages, so that the
// program (run/runner.cc) says the same words at the model file's key, before any output exists.
#pragma once

#include <string>

#include "sdprl/loss.h"
#include "sdprl/model.h"

namespace sdprl::mm {

// "" when `loss` suits the L-BFGS solver's first condition (phi'(0) = 0), else why not.
std::string lbfgs_loss_problem(const Loss& loss);

// "" when init = "model" can start `model` (Model::start is set), else why not.
std::string model_start_problem(const Model& model);

}  // namespace sdprl::mm
