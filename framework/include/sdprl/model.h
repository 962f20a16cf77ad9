// Model: what an application plugin builds from its TOML table and data, and everything the solver
// needs besides the loss: the terms, the A-term, the metrics.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sdprl/constraint.h"
#include "sdprl/constraint_set.h"
#include "sdprl/export.h"
#include "sdprl/regularizer.h"
#include "sdprl/types.h"

namespace sdprl {

struct Metric {
  std::string name;
  double value = 0.0;
};

// Application-specific quality measures of a factor X (e.g. test RMSE).
class SDPRL_API Evaluator {
 public:
  virtual ~Evaluator();
  // Metrics reported in the summary, e.g. {"test_rmse", 0.12}.
  virtual std::vector<Metric> evaluate(const Matrix& X) const = 0;
  // Whether validation_error() is available (needed to choose lambda from a grid).
  virtual bool has_validation() const;
  // Error on the validation set; lower is better.
  virtual double validation_error(const Matrix& X) const;
};

// The Evaluator of a model with held-out sets (matrix completion, NPKL, CMVU): test_rmse and
// validation_rmse, each from its own error function of X (an empty function: no such set), and
// test_relative_rmse = test_rmse / test_scale when test_scale > 0 (e.g. the RMS of the test
// targets). Lambda is chosen by the validation RMSE.
class SDPRL_API HeldOutEvaluator final : public Evaluator {
 public:
  using Rmse = std::function<double(const Matrix& X)>;
  HeldOutEvaluator(Rmse validation, Rmse test, double test_scale = 0.0);
  ~HeldOutEvaluator() override;

  std::vector<Metric> evaluate(const Matrix& X) const override;
  bool has_validation() const override { return static_cast<bool>(validation_); }
  double validation_error(const Matrix& X) const override;

 private:
  Rmse validation_, test_;
  double test_scale_;
};

struct Model {
  std::string application;                       // the plugin that built it
  std::shared_ptr<const ConstraintSet> terms;    // required
  std::shared_ptr<const Regularizer> quadratic;  // the A of (gamma/2)<X, A X>; null means A = 0
  std::shared_ptr<const ConvexConstraint> constraint;  // X in K (e.g. X >= 0); null: none
  double default_gamma = 0.0;                    // gamma when the TOML does not set it
  double default_lambda = 1.0;                   // lambda when the TOML does not set it
  Index default_rank = 0;                        // rank when the TOML does not set it (0: none)
  std::shared_ptr<const Evaluator> evaluator;    // may be null
  std::vector<Metric> facts;                     // sizes etc., for the report (e.g. n, m)
  // The application's own starting factor for a rank (solver.init = "model"), e.g. the top-r
  // principal directions for sparse PCA; empty when it has none.
  std::function<void(Index rank, Matrix& X)> start;
  // For a model whose terms are constraints its problem must meet (the sdpa application's
  // tr(F_i Z) = c_i): how far a factor X is from meeting them, relative to their scale (e.g.
  // max_i |<X, Q_i X> - t_i| / max(1, |t_i|)). gamma is then a penalty weight, and `sdprl run`
  // lowers it while the result is unbounded or violates the constraints by more than
  // solver.feasibility_tolerance (docs/method.md section 9). Empty: the terms are a loss to fit.
  std::function<double(const Matrix& X)> infeasibility;
};

}  // namespace sdprl
