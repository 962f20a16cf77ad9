// The SDPA sparse format reader and writer (sdprl/io/sdpa.h), and the l1 export's structure:
// SDPA's free formatting, every malformed-file error with its file:line:column, an exact
// write/read round trip, and the blocks and signs of l1_problem_as_sdpa on a small model.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <tuple>
#include <string>

#include "sdprl/constraint.h"
#include "sdprl/error.h"
#include "sdprl/io/sdpa.h"
#include "test_files.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

class SdpaFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& text, const std::string& name = "p.dat-s") {
    const auto file = dir_.path() / name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  // The Error of reading `text`: its where() and message().
  std::pair<std::string, std::string> error_of(const std::string& text) {
    const auto file = write(text);
    try {
      io::read_sdpa(file);
    } catch (const Error& e) {
      const std::string prefix = file.string() + ":";
      std::string where = e.where();
      if (where == file.string()) where.clear();
      if (where.compare(0, prefix.size(), prefix) == 0) where = where.substr(prefix.size());
      return {where, e.message()};
    }
    return {"no error", ""};
  }
  TempDir dir_;
};

// The header of SDPA's manual example (mDIM, nBLOCK, bLOCKsTRUCT annotations, braces, commas),
// comments of both kinds anywhere, an LP block, i > j, an explicit zero and c over two lines.
TEST_F(SdpaFile, ReadsTheFreeFormat) {
  const auto file = write(
      "\"Example 1: mDim = 3, nBLOCK = 2, {2, -2}\n"
      "* a second comment\n"
      "   3  =  mDIM\n"
      "   2  =  nBLOCK\n"
      "  (2, -2)  = bLOCKsTRUCT\n"
      "{48, -8,\n"
      " 20}\n"
      "0 1 1 1 -11\r\n"
      "0 1 2 2 23\n"
      "* entries of F_1\n"
      "1 1 1 1 10\n"
      "1,1,1,2,4\n"
      "2 1 2 2 -8\n"
      "3 1 2 1 -8\n"
      "3 1 2 2 -2\n"
      "3 2 2 2 +1.5e0\n"
      "2 2 1 1 0.0\n"
      "\n");
  const io::SdpaProblem p = io::read_sdpa(file);
  EXPECT_EQ(p.m, 3);
  ASSERT_EQ(p.blocks.size(), 2u);
  EXPECT_EQ(p.blocks[0], 2);
  EXPECT_EQ(p.blocks[1], -2);
  EXPECT_EQ(p.blocks_line, 5);
  ASSERT_EQ(p.c.size(), 3);
  EXPECT_EQ(p.c[0], 48.0);
  EXPECT_EQ(p.c[1], -8.0);
  EXPECT_EQ(p.c[2], 20.0);
  ASSERT_EQ(p.entries.size(), 8u);  // the zero is dropped
  const io::SdpaEntry& swapped = p.entries[5];  // "3 1 2 1 -8" is (1, 2) of F_3
  EXPECT_EQ(swapped.matrix, 3);
  EXPECT_EQ(swapped.block, 0);
  EXPECT_EQ(swapped.row, 0);
  EXPECT_EQ(swapped.col, 1);
  EXPECT_EQ(swapped.value, -8.0);
  EXPECT_EQ(swapped.line, 14);
  EXPECT_EQ(p.entries[3].value, 4.0);
  EXPECT_EQ(p.entries[7].block, 1);
  EXPECT_EQ(p.entries[7].value, 1.5);
}

TEST_F(SdpaFile, MalformedFilesNameLineColumnAndWhatWasExpected) {
  const std::string head = "2\n1\n2\n1 1\n";
  struct Case {
    std::string text, where, message;
  };
  const std::vector<Case> cases = {
      {"", "", "expected m"},
      {"\"only a comment\n", "1", "expected m"},
      {"x = mDIM\n", "1:1", "expected an integer number of constraint matrices m, got 'x'"},
      {"0\n", "1:1", "must be >= 1"},
      {"2\n1\n", "2", "expected the 1 block sizes"},
      {"2\n2\n3 0\n", "3:3", "block size must be nonzero"},
      {"2\n1\n2\n1\n", "4", "expected 2 numbers of c, found 1"},
      {"2\n1\n2\n1 1 1\n", "4:5", "expected m = 2 numbers of c, found more: '1'"},
      {"2\n1\n2\n1 abc\n", "4:3", "expected a real c_2, got 'abc'"},
      {head + "1 1 1 1\n", "5", "expected an entry 'matno blkno i j value' (5 numbers), got 4 fields"},
      {head + "1 1 1 1 1 9\n", "5:11", "got 6 fields"},
      {head + "3 1 1 1 1\n", "5:1", "matrix number 3 outside [0, m = 2]"},
      {head + "1 2 1 1 1\n", "5:3", "block number 2 outside [1, nBLOCK = 1]"},
      {head + "1 1 3 1 1\n", "5:5", "row index 3 outside block 1 of size 2"},
      {head + "1 1 1 0 1\n", "5:7", "column index 0 outside block 1 of size 2"},
      {head + "1 1 1 1 1e999\n", "5:9", "out of the range of a double"},
      {head + "1 1 1 1 nan\n", "5:9", "NaN/Inf"},
      {head + "1 1 1 2 1.5x\n", "5:9", "expected a real entry value, got '1.5x'"},
      {head + "1 1 1 2 1\n* comment\n1 1 2 1 3\n", "7:1", "duplicate entry: matrix 1, block 1, (1, 2) was given on line 5"},
      {"1\n1\n-2\n1\n1 1 1 2 1\n", "5:5", "block 1 is diagonal (size -2), so an entry needs i = j, got (1, 2)"},
      {"1\n1\n2\n1\n1.5 1 1 1 1\n", "5:1", "expected an integer matrix number, got '1.5'"},
  };
  for (const Case& c : cases) {
    const auto [where, message] = error_of(c.text);
    EXPECT_EQ(where, c.where) << c.text;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.text << "\n  got: " << message;
  }
}

TEST_F(SdpaFile, WriteThenReadIsExact) {
  io::SdpaProblem p;
  p.m = 2;
  p.blocks = {3, -4};
  p.c = Vector(2);
  p.c << 0.1, -1.0 / 3.0;
  p.entries = {{0, 0, 0, 2, 1.0 / 7.0, 0}, {1, 1, 3, 3, -2e-300, 0}, {2, 0, 1, 1, 12345.678901234567, 0}};
  const auto file = dir_.path() / "round.dat-s";
  io::write_sdpa(file, p, "two comment\nlines");
  const io::SdpaProblem q = io::read_sdpa(file);
  EXPECT_EQ(q.m, p.m);
  EXPECT_EQ(q.blocks, p.blocks);
  EXPECT_EQ(q.c, p.c);
  ASSERT_EQ(q.entries.size(), p.entries.size());
  for (std::size_t k = 0; k < p.entries.size(); ++k) {
    EXPECT_EQ(q.entries[k].matrix, p.entries[k].matrix);
    EXPECT_EQ(q.entries[k].block, p.entries[k].block);
    EXPECT_EQ(q.entries[k].row, p.entries[k].row);
    EXPECT_EQ(q.entries[k].col, p.entries[k].col);
    EXPECT_EQ(q.entries[k].value, p.entries[k].value);  // 17 digits: bit-exact
  }
}

// Two entry terms on n = 3 with lambda = 1, gamma = 2, A = a dense matrix: F_0 holds
// -(gamma/2 A + lambda/2 I) and -1 on the 4 slacks; F_1 = sym(e_1 e_2^T) with its slack pair.
TEST_F(SdpaFile, ExportHasTheL1ProblemsBlocksAndSigns) {
  Model model;
  model.terms = std::make_shared<EntryTerms>(3, std::vector<std::int32_t>{0, 2}, std::vector<std::int32_t>{1, 2},
                                             Vector((Vector(2) << 5.0, -1.0).finished()));
  Eigen::MatrixXd A(3, 3);
  A << 2, 1, 0, 1, 0, 0, 0, 0, -4;
  model.quadratic = std::make_shared<DenseRegularizer>(A);
  const io::SdpaProblem p = io::l1_problem_as_sdpa(model, {1.0, 2.0});
  EXPECT_EQ(p.m, 2);
  EXPECT_EQ(p.blocks, (std::vector<std::int64_t>{3, -4}));
  EXPECT_EQ(p.c[0], 5.0);
  EXPECT_EQ(p.c[1], -1.0);
  std::map<std::tuple<int, int, int, int>, double> e;
  for (const io::SdpaEntry& x : p.entries) e[{x.matrix, x.block, x.row, x.col}] = x.value;
  EXPECT_EQ(e.size(), 4u + 4u + 3u + 3u);  // F_0: (0,0) (0,1) (1,1) (2,2) + 4 slacks; F_1, F_2: 1 + 2
  EXPECT_EQ((e[{0, 0, 0, 0}]), -(2.0 + 0.5));
  EXPECT_EQ((e[{0, 0, 0, 1}]), -1.0);
  EXPECT_EQ((e[{0, 0, 1, 1}]), -0.5);
  EXPECT_EQ((e[{0, 0, 2, 2}]), -(-4.0 + 0.5));
  for (int h = 0; h < 4; ++h) EXPECT_EQ((e[{0, 1, h, h}]), -1.0);
  EXPECT_EQ((e[{1, 0, 0, 1}]), 0.5);  // tr(Z sym(e_1 e_2^T)) = Z_12
  EXPECT_EQ((e[{1, 1, 0, 0}]), -1.0);
  EXPECT_EQ((e[{1, 1, 2, 2}]), 1.0);
  EXPECT_EQ((e[{2, 0, 2, 2}]), 1.0);
  EXPECT_EQ((e[{2, 1, 1, 1}]), -1.0);
  EXPECT_EQ((e[{2, 1, 3, 3}]), 1.0);

  // Refusals: X >= 0 (completely positive Z) and n above the limit.
  Model constrained = model;
  constrained.constraint = std::make_shared<Nonnegative>();
  EXPECT_THROW(io::l1_problem_as_sdpa(constrained, {1.0, 0.0}), Error);
  try {
    io::l1_problem_as_sdpa(model, {1.0, 0.0}, 2);
    ADD_FAILURE() << "n = 3 > 2 was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("n = 3 exceeds 2"), std::string::npos) << err.what();
  }
  // 200,000 terms on n = 1000 (m^2 n = 4e13): refused at once, not probed for hours.
  Model big;
  big.terms = entry_terms(random_entries(1000, 200000, 3));
  try {
    io::l1_problem_as_sdpa(big, {1.0, 0.0});
    ADD_FAILURE() << "a 4e13-operation probe was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("m = 200000 terms on n = 1000 would take about"), std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace sdprl
