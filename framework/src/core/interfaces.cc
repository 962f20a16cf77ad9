// Out-of-line destructors and defaults of the public interfaces: their vtables and typeinfo live
// in the framework library, once, so that plugins and the program agree on them.
#include "sdprl/application.h"
#include "sdprl/constraint_set.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/regularizer.h"

#include <stdexcept>
#include <utility>

namespace sdprl {

Loss::~Loss() = default;
std::vector<std::pair<std::string, double>> Loss::parameters() const { return {}; }
void Loss::evaluate(const Vector& a, Vector& phi, Vector& dphi) const {
  phi.resize(a.size());
  dphi.resize(a.size());
  for (Index k = 0; k < a.size(); ++k) {
    phi[k] = value(a[k]);
    dphi[k] = derivative(a[k]);
  }
}

TermLinearization::~TermLinearization() = default;
Index TermLinearization::rows_per_term() const { return rows_decoupled() ? 1 : 0; }
const RowSplitView* TermLinearization::row_split() const { return nullptr; }
OnePassUpdate* TermLinearization::one_pass() { return nullptr; }
const ExternalWeights* TermLinearization::external_weights() const { return nullptr; }
const GramSummary* TermLinearization::gram_summary() const { return nullptr; }
RowSplitView::~RowSplitView() = default;
OnePassUpdate::~OnePassUpdate() = default;
ExternalWeights::~ExternalWeights() = default;
GramSummary::~GramSummary() = default;

const Vector* term_weights(const TermLinearization& lin) {
  const ExternalWeights* weights = lin.external_weights();
  return weights ? &weights->term_weights() : nullptr;
}
void gram_row_traces(const TermLinearization& lin, Vector& traces) {
  if (const GramSummary* summary = lin.gram_summary()) {
    summary->gram_row_traces(traces);
    return;
  }
  Matrix blocks;
  lin.gram_row_blocks(blocks);
  const Index r = blocks.cols(), n = r > 0 ? blocks.rows() / r : 0;
  traces.resize(n);
  for (Index i = 0; i < n; ++i) traces[i] = blocks.block(i * r, 0, r, r).trace();
}
bool shared_gram_block(const TermLinearization& lin, Matrix& block) {
  const GramSummary* summary = lin.gram_summary();
  return summary && summary->shared_gram_block(block);
}
RowConsumer::~RowConsumer() = default;
ConstraintSet::~ConstraintSet() = default;
Regularizer::~Regularizer() = default;
bool Regularizer::positive_diagonal_majorant(Vector&) const { return false; }
Evaluator::~Evaluator() = default;
bool Evaluator::has_validation() const { return false; }
double Evaluator::validation_error(const Matrix&) const {
  throw std::logic_error("this model has no validation set");
}

HeldOutEvaluator::HeldOutEvaluator(Rmse validation, Rmse test, double test_scale)
    : validation_(std::move(validation)), test_(std::move(test)), test_scale_(test_scale) {}

HeldOutEvaluator::~HeldOutEvaluator() = default;

std::vector<Metric> HeldOutEvaluator::evaluate(const Matrix& X) const {
  std::vector<Metric> out;
  if (test_) {
    const double e = test_(X);
    out.push_back({"test_rmse", e});
    if (test_scale_ > 0.0) out.push_back({"test_relative_rmse", e / test_scale_});
  }
  if (validation_) out.push_back({"validation_rmse", validation_(X)});
  return out;
}

double HeldOutEvaluator::validation_error(const Matrix& X) const {
  return validation_ ? validation_(X) : Evaluator::validation_error(X);
}
Application::~Application() = default;

}  // namespace sdprl
