// Bases of the built-in term families: the data a family keeps besides its Q_tau and the
// ConstraintSet queries that data answers, written once.
//  TargetedTerms: the dimension n and one target t_tau per term (dimension(), size(), targets()).
//  PairTerms:     terms on index pairs (i, j) (entry and distance terms), their indices checked,
//                 and the family's name given once, to the constructor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"

namespace sdprl {

class SDPRL_API TargetedTerms : public ConstraintSet {
 public:
  ~TargetedTerms() override;

  Index dimension() const override { return n_; }
  Index size() const override { return targets_.size(); }
  const Vector& targets() const override { return targets_; }

 protected:
  // Stores n and the targets; the family checks them.
  TargetedTerms(Index n, Vector targets);

 private:
  Index n_;
  Vector targets_;
};

class SDPRL_API PairTerms : public TargetedTerms {
 public:
  ~PairTerms() override;

  std::string family() const override { return family_; }

  // Term k is (rows()[k], cols()[k]).
  const std::vector<std::int32_t>& rows() const { return rows_; }
  const std::vector<std::int32_t>& cols() const { return cols_; }

 protected:
  // Throws Error, its message starting with `family` ("entry terms: ...", "entry term 3: ..."),
  // unless n > 0, rows, cols and targets have one length, every index is in [0, n) and every target
  // is finite.
  PairTerms(const char* family, Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols,
            Vector targets);

 private:
  std::string family_;
  std::vector<std::int32_t> rows_, cols_;
};

}  // namespace sdprl
