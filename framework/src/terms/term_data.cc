// Bases of the built-in term families (see sdprl/terms/term_data.h).
#include "sdprl/terms/term_data.h"

#include <cmath>
#include <string>
#include <utility>

#include "sdprl/error.h"

namespace sdprl {

TargetedTerms::TargetedTerms(Index n, Vector targets) : n_(n), targets_(std::move(targets)) {}

TargetedTerms::~TargetedTerms() = default;

PairTerms::PairTerms(const char* family, Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols,
                     Vector targets)
    : TargetedTerms(n, std::move(targets)), family_(family), rows_(std::move(rows)), cols_(std::move(cols)) {
  const std::string& name = family_;
  if (n <= 0) throw Error("", name + " terms: dimension must be positive, got " + std::to_string(n));
  if (rows_.size() != cols_.size() || static_cast<Index>(rows_.size()) != size())
    throw Error("", name + " terms: rows, cols and targets differ in length");
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (rows_[k] < 0 || rows_[k] >= n || cols_[k] < 0 || cols_[k] >= n)
      throw Error("", name + " term " + std::to_string(k) + ": index (" + std::to_string(rows_[k]) + ", " +
                          std::to_string(cols_[k]) + ") outside [0, " + std::to_string(n) + ")");
    if (!std::isfinite(this->targets()[static_cast<Index>(k)]))
      throw Error("", name + " term " + std::to_string(k) + ": target is not finite");
  }
}

PairTerms::~PairTerms() = default;

}  // namespace sdprl
