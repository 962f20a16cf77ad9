// The one-pass rebuild split over processes (terms/split_rebuild.h, docs/method.md section 11), run
// under `mpirun -np 2` (tests/CMakeLists.txt, label mpi): each process rebuilds the rows of its
// share of the fused pass and hands only those to the pass; the sums and the curvature are the whole
// problem's, bit for bit; and any other reader (offsets(), the Gram blocks, P and P*) finds every
// row as a whole rebuild leaves it, the other processes' rows rebuilt on first use.
#include <gtest/gtest.h>

#include <mutex>
#include <random>
#include <set>

#include "admm/row_kernel.h"
#include "parallel/processes.h"
#include "sdprl/l1_loss.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

// The rows the rebuild hands over.
class Rows final : public RowConsumer {
 public:
  void consume_row(Index i, const double*, Index, const double*, double) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    rows.insert(i);
  }
  std::set<Index> rows;

 private:
  std::mutex mutex_;
};

TEST(SplitRebuild, OwnRowsToThePassAndEveryRowToOtherReaders) {
  const EntryData d = random_entries(1000, 20000, 5);  // 16 chunks of 64 rows
  const auto terms = entry_terms(d);
  const L1Loss loss;
  std::mt19937_64 rng(6);
  const Matrix X = random_matrix(d.n, 5, 1.0, rng), D = random_matrix(d.n, 5, 1.0, rng);
  auto split = terms->make_linearization(SplitMode::kRowSplit), whole = terms->make_linearization(SplitMode::kRowSplit);
  double phi = 0.0, abs = 0.0, phi_whole = 0.0, abs_whole = 0.0;
  Rows consumed;
  split->one_pass()->update_with_loss(X, loss, &phi, &abs, &consumed);
  whole->one_pass()->update_with_loss(X, loss, &phi_whole, &abs_whole, nullptr);

  // The pass got this process's rows, and only those.
  const detail::RowShares shares = detail::row_shares(split->row_split()->row_offsets(), d.n);
  const auto me = static_cast<std::size_t>(processes::rank());
  EXPECT_EQ(consumed.rows.size(), static_cast<std::size_t>(shares.rows[me + 1] - shares.rows[me]));
  for (const Index i : consumed.rows) EXPECT_TRUE(shares.owns(i, processes::rank())) << "row " << i;
  if (processes::distributed()) {
    EXPECT_LT(consumed.rows.size(), static_cast<std::size_t>(d.n));
  }

  // Sums and curvature: the whole problem's, bit for bit.
  EXPECT_EQ(phi, phi_whole);
  EXPECT_EQ(abs, abs_whole);
  Vector c, c_whole;
  split->curvature_diagonal(c);
  whole->curvature_diagonal(c_whole);
  EXPECT_EQ(c, c_whole);
  // Every other reader: all rows current (rebuilt on first use), bit for bit.
  EXPECT_EQ(split->offsets(), whole->offsets());
  Matrix g, g_whole;
  split->gram_row_blocks(g);
  whole->gram_row_blocks(g_whole);
  EXPECT_EQ(g, g_whole);
  Vector pd, pd_whole;
  split->apply(D, pd);
  whole->apply(D, pd_whole);
  EXPECT_EQ(pd, pd_whole);
}

}  // namespace
}  // namespace sdprl

int main(int argc, char** argv) {
  const sdprl::processes::Group group(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  // Every process runs the test (the rebuild's exchanges are collective); process 0 reports.
  if (!sdprl::processes::writer()) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  return sdprl::processes::any(failed != 0) ? 1 : 0;
}
