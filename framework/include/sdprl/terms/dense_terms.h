// Dense terms: any n x n matrices Q_tau (the paper's SDP-RL-dense, for general SDPs). Each
// sym(Q_tau) and |sym(Q_tau)| is computed once (an eigen-split) when the set is built; one ADMM
// iteration costs O(m n r), the MM step O(m n^2 r). For small n only.
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Dense>

#include "sdprl/export.h"
#include "sdprl/terms/term_data.h"

namespace sdprl {

class SDPRL_API DenseTerms final : public TargetedTerms {
 public:
  // Q[k] is n x n (need not be symmetric); targets[k] = t_k.
  DenseTerms(Index n, std::vector<Eigen::MatrixXd> Q, Vector targets);
  ~DenseTerms() override;

  std::string family() const override { return "dense"; }
  void evaluate(const Matrix& X, Vector& values) const override;
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;

  const std::vector<Eigen::MatrixXd>& symmetric_parts() const { return sym_; }
  const std::vector<Eigen::MatrixXd>& absolute_parts() const { return abs_; }

 private:
  std::vector<Eigen::MatrixXd> sym_, abs_;
};

}  // namespace sdprl
