// Robust symmetric NMF (paper Section "Example Robust SDP Applications", SNMF; docs/method.md 1, 5):
// matrix completion of a nonnegative symmetric matrix with the factor kept nonnegative,
//   min sum_{(i,j) observed} phi(|x_i . x_j - O_ij|) + (lambda/2)||X||^2   s.t.  X >= 0.
// The paper's eq. (snmf2) drops X >= 0; here it is a constraint the solver keeps exactly: every
// iterate is nonnegative (sdprl/constraint.h).
//
// [model] keys: those of matrix-completion (synthetic = { ... } or observations = FILE, ...), with
// the synthetic generator switched to the paper's SNMF protocol: V_ij ~ Exp(1), outliers +sigma
// (the paper's "outliers from {0, sigma}"); and
//   labels = FILE     the USPS construction: V = the one-hot label matrix of this LIBSVM file
//                     (2007 x 10 for USPS), M = V V^T; sampling, noise and outliers as synthetic
//                     (its m and rank then come from the data).
#include <algorithm>
#include <cmath>
#include <map>

#include "sdprl/completion/build_completion.h"
#include "sdprl/constraint.h"
#include "sdprl/error.h"
#include "sdprl/io/libsvm.h"
#include "sdprl/plugin.h"

namespace sdprl::snmf {
namespace {

// One-hot label matrix: row i has a 1 in the column of sample i's label (labels sorted).
Matrix one_hot(const std::vector<double>& labels, const std::string& file) {
  std::map<double, Index> column;
  for (double l : labels) column.emplace(l, 0);
  Index c = 0;
  for (auto& [label, col] : column) col = c++;
  if (c < 2) throw Error(file, "the labels take " + std::to_string(c) + " value(s); one-hot needs at least 2");
  Matrix V = Matrix::Zero(static_cast<Index>(labels.size()), c);
  for (std::size_t i = 0; i < labels.size(); ++i) V(static_cast<Index>(i), column[labels[i]]) = 1.0;
  return V;
}

class Snmf final : public Application {
 public:
  std::string name() const override { return "snmf"; }
  Model build(const ConfigTable& table, const BuildContext& context) const override {
    mc::CompletionDefaults defaults;
    defaults.application = "snmf";
    defaults.exponential_factor = true;
    defaults.positive_outliers = true;
    Matrix labels_factor;
    if (const auto file = table.file("labels")) {
      if (!table.contains("synthetic"))
        table.fail("labels", "the USPS construction also needs synthetic = { s, outlier_fraction, ... }");
      labels_factor = one_hot(io::read_libsvm(*file).labels, file->string());
      defaults.given_factor = &labels_factor;
    }
    Model model = mc::build_completion(table, context, defaults);
    model.constraint = std::make_shared<Nonnegative>();
    return model;
  }
};

}  // namespace
}  // namespace sdprl::snmf

SDPRL_APPLICATION_PLUGIN("snmf", "1.0", "robust symmetric NMF: entry terms with X >= 0 kept exactly",
                         sdprl::snmf::Snmf)
