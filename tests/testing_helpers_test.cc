// The plugin authors' test helpers (sdprl/testing/checks.h) accept the shipped pieces and reject
// broken ones.
#include <gtest/gtest.h>

#include "sdprl/testing/checks.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

TEST(TestingHelpers, AcceptShippedLossesAndTerms) {
  for (const char* name : {"l1", "leaky-mcp", "geman", "laplace", "log-sum"})
    EXPECT_EQ(sdprl::testing::check_loss(*load_loss(name)), "") << name;
  EntryData d = random_entries(8, 30, 3);
  std::vector<Eigen::MatrixXd> Q;
  for (std::size_t k = 0; k < d.rows.size(); ++k) {
    Eigen::MatrixXd q = Eigen::MatrixXd::Zero(8, 8);
    q(d.rows[k], d.cols[k]) = 1.0;
    Q.push_back(q);
  }
  EXPECT_EQ(sdprl::testing::check_constraint_set(*entry_terms(d), Q), "");
  EXPECT_EQ(sdprl::testing::check_constraint_set(*dense_terms(d), Q), "");
  EntryData p = random_pairs(8, 25, 4);
  EXPECT_EQ(sdprl::testing::check_constraint_set(*distance_terms(p), distance_matrices(p)), "");
}

class WrongDerivative final : public Loss {
 public:
  std::string name() const override { return "wrong"; }
  double value(double a) const override { return std::log1p(a); }
  double derivative(double a) const override { return 1.0 / (1.0 + 2.0 * a); }
};

TEST(TestingHelpers, RejectBrokenPieces) {
  WrongDerivative wrong;
  EXPECT_NE(sdprl::testing::check_loss(wrong).find("finite difference"), std::string::npos);
  // Entry terms checked against the wrong reference (transposed one entry's partner).
  EntryData d = random_entries(6, 10, 4);
  std::vector<Eigen::MatrixXd> Q;
  for (std::size_t k = 0; k < d.rows.size(); ++k) {
    Eigen::MatrixXd q = Eigen::MatrixXd::Zero(6, 6);
    q(d.rows[k], (d.cols[k] + (k == 3 ? 1 : 0)) % 6) = 1.0;
    Q.push_back(q);
  }
  EXPECT_NE(sdprl::testing::check_constraint_set(*entry_terms(d), Q).find("term 3"), std::string::npos);
}

}  // namespace
}  // namespace sdprl
