// Tests of the MatrixMarket / CSV readers and writers and of atomic output files.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sdprl/error.h"
#include "sdprl/io/atomic_file.h"
#include "sdprl/io/matrix_market.h"

namespace fs = std::filesystem;
using sdprl::Error;
using sdprl::Matrix;
using sdprl::format_location;
using namespace sdprl::io;

namespace {

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sdprl_io_test." + std::to_string(::getpid()) + "." + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path write_file(const std::string& name, const std::string& content) {
    fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary);
    out << content;
    return p;
  }

  std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Number of directory entries (to detect stray temporary files).
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

  fs::path dir_;
};

// Runs `f`, expects an sdprl::Error at `where` whose message contains `phrase`.
void expect_error(const std::function<void()>& f, const std::string& where,
                  const std::string& phrase) {
  try {
    f();
    ADD_FAILURE() << "expected an error at " << where << " containing '" << phrase << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), where) << e.what();
    EXPECT_NE(e.message().find(phrase), std::string::npos)
        << "message '" << e.message() << "' lacks '" << phrase << "'";
  }
}

// ---------------------------------------------------------------- coordinate

TEST_F(IoTest, CoordinateGeneral) {
  auto p = write_file("a.mtx",
                      "%%MatrixMarket matrix coordinate real general\n"
                      "% a comment\n"
                      "%\n"
                      "3 4 3\n"
                      "1 1 1.5\n"
                      "3 4 -2e-3\n"
                      "  2   3\t+7 \n");
  CoordinateMatrix m = read_matrix_market_coordinate(p);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_FALSE(m.symmetric);
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].row, 0);
  EXPECT_EQ(m.entries[0].col, 0);
  EXPECT_EQ(m.entries[0].value, 1.5);
  EXPECT_EQ(m.entries[0].line, 5);
  EXPECT_EQ(m.entries[1].row, 2);
  EXPECT_EQ(m.entries[1].col, 3);
  EXPECT_EQ(m.entries[1].value, -2e-3);
  EXPECT_EQ(m.entries[1].line, 6);
  EXPECT_EQ(m.entries[2].row, 1);
  EXPECT_EQ(m.entries[2].col, 2);
  EXPECT_EQ(m.entries[2].value, 7.0);
  EXPECT_EQ(m.entries[2].line, 7);
}

TEST_F(IoTest, CoordinateSymmetricCaseInsensitiveCrlf) {
  auto p = write_file("s.mtx",
                      "%%matrixmarket MATRIX Coordinate Real SYMMETRIC\r\n"
                      "3 3 4\r\n"
                      "1 1 2.0\r\n"
                      "2 1 -1\r\n"
                      "\r\n"
                      "3 2 0.25\r\n"
                      "3 3 4\r\n");
  CoordinateMatrix m = read_matrix_market_coordinate(p);
  EXPECT_TRUE(m.symmetric);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 3);
  ASSERT_EQ(m.entries.size(), 4u);  // listed, not mirrored
  EXPECT_EQ(m.entries[1].row, 1);
  EXPECT_EQ(m.entries[1].col, 0);
  EXPECT_EQ(m.entries[1].value, -1.0);
  EXPECT_EQ(m.entries[1].line, 4);
  EXPECT_EQ(m.entries[2].row, 2);
  EXPECT_EQ(m.entries[2].col, 1);
  EXPECT_EQ(m.entries[2].value, 0.25);
  EXPECT_EQ(m.entries[2].line, 6);
  EXPECT_EQ(m.entries[3].line, 7);
}

TEST_F(IoTest, CoordinatePatternAndInteger) {
  auto p = write_file("p.mtx",
                      "%%MatrixMarket matrix coordinate pattern general\n"
                      "2 2 2\n1 2\n2 1\n");
  CoordinateMatrix m = read_matrix_market_coordinate(p);
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(m.entries[0].value, 1.0);
  EXPECT_EQ(m.entries[1].value, 1.0);
  EXPECT_EQ(m.entries[0].col, 1);

  auto q = write_file("i.mtx",
                      "%%MatrixMarket matrix coordinate integer general\n"
                      "2 2 1\n2 2 -5\n");
  m = read_matrix_market_coordinate(q);
  ASSERT_EQ(m.entries.size(), 1u);
  EXPECT_EQ(m.entries[0].value, -5.0);

  auto r = write_file("i2.mtx",
                      "%%MatrixMarket matrix coordinate integer general\n"
                      "2 2 1\n2 2 1.5\n");
  expect_error([&] { read_matrix_market_coordinate(r); }, format_location(r.string(), 3, 5),
               "expected an integer value, got '1.5'");
}

TEST_F(IoTest, CoordinateEmptyMatrix) {
  auto p = write_file("e.mtx", "%%MatrixMarket matrix coordinate real general\n5 5 0\n");
  CoordinateMatrix m = read_matrix_market_coordinate(p);
  EXPECT_EQ(m.rows, 5);
  EXPECT_TRUE(m.entries.empty());
}

TEST_F(IoTest, CoordinateErrors) {
  const std::string header = "%%MatrixMarket matrix coordinate real general\n";

  auto p = write_file("few_fields.mtx", header + "5 5 2\n1 1 1\n2 2\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 4),
               "expected 3 fields 'row col value', got 2");

  p = write_file("extra.mtx", header + "5 5 1\n1 1 1 9\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 3, 7),
               "expected 3 fields 'row col value', got 4");

  p = write_file("row_range.mtx", header + "5 5 2\n1 1 1\n7 1 1\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 4, 1),
               "row index 7 out of range [1, 5]");

  p = write_file("col_range.mtx", header + "% c\n5 3 1\n1  0 1\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 4, 4),
               "column index 0 out of range [1, 3]");

  p = write_file("nan.mtx", header + "5 5 2\n1 1 nan\n2 2 1\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 3, 5),
               "value is NaN/Inf");

  p = write_file("inf.mtx", header + "5 5 2\n1 1 1\n2 2 -inf\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 4, 5),
               "value is NaN/Inf");

  p = write_file("overflow.mtx", header + "5 5 1\n1 1 1e400\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 3, 5),
               "out of the range");

  p = write_file("junk.mtx", header + "5 5 1\n1 1 1.5x\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 3, 5),
               "expected a real value, got '1.5x'");

  p = write_file("bad_index.mtx", header + "5 5 1\n1.0 1 1\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 3, 1),
               "expected an integer row index, got '1.0'");

  p = write_file("short.mtx", header + "5 5 10\n" + [] {
    std::string s;
    for (int k = 1; k <= 9; ++k) s += "1 1 1\n";
    return s;
  }());
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 11),
               "expected 10 entries, file ends after 9");

  p = write_file("long.mtx", header + "5 5 1\n1 1 1\n2 2 2\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 4),
               "expected 1 entry (from the size line), found more");

  p = write_file("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 1, 23),
               "unsupported MatrixMarket format 'array' (expected coordinate)");

  p = write_file("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 0\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 1, 34),
               "unsupported MatrixMarket field 'complex'");

  p = write_file("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 1, 39),
               "unsupported MatrixMarket symmetry 'skew-symmetric'");

  p = write_file("nobanner.mtx", "3 3 0\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 1),
               "expected banner");

  // A compressed file named .mtx: its bytes are shown as \xHH, the quote closed (a NUL cut the
  // message short).
  p = write_file("gzip.mtx", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + "\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 1),
               "got '\\x1f\\x8b\\x08\\x00\\x00\\x00\\x00\\x00\\x00\\x03'");

  p = write_file("empty.mtx", "");
  expect_error([&] { read_matrix_market_coordinate(p); }, p.string(), "file is empty");

  p = write_file("nosize.mtx", header + "% only comments\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 2),
               "expected size line 'rows cols nnz'");

  p = write_file("badsize.mtx", header + "5 5\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 2),
               "expected 3 fields in size line 'rows cols nnz', got 2");

  p = write_file("negsize.mtx", header + "5 -5 0\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 2, 3),
               "column count must be >= 0");

  p = dir_ / "missing.mtx";
  expect_error([&] { read_matrix_market_coordinate(p); }, p.string(), "cannot open file");

  expect_error([&] { read_matrix_market_coordinate(dir_); }, dir_.string(), "cannot open file");
}

TEST_F(IoTest, CoordinateSymmetricRejectsUpperTriangle) {
  auto p = write_file("up.mtx",
                      "%%MatrixMarket matrix coordinate real symmetric\n"
                      "3 3 2\n2 1 1\n1 3 1\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 4),
               "entry (1, 3) is above the diagonal");

  p = write_file("nonsquare.mtx",
                 "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n");
  expect_error([&] { read_matrix_market_coordinate(p); }, format_location(p.string(), 2),
               "must be square");
}

// ---------------------------------------------------------------- array

TEST_F(IoTest, ArrayRoundTripIsExact) {
  Matrix X(3, 2);
  X << 1.0 / 3.0, -2.0 / 7.0,
       1e-300, -1e300,
       std::numeric_limits<double>::denorm_min(), -0.0;
  auto p = dir_ / "x.mtx";
  write_matrix_market_array(p, X, "factor X\nsecond line");
  Matrix Y = read_matrix_market_array(p);
  ASSERT_EQ(Y.rows(), 3);
  ASSERT_EQ(Y.cols(), 2);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(Y(i, j), X(i, j)) << i << "," << j;
      EXPECT_EQ(std::signbit(Y(i, j)), std::signbit(X(i, j)));
    }
  }
  // Banner, comment lines, size line, then column-major values, each in the fewest digits that
  // read back as the same double.
  EXPECT_EQ(read_text(p),
            "%%MatrixMarket matrix array real general\n"
            "% factor X\n"
            "% second line\n"
            "3 2\n"
            "0.3333333333333333\n"
            "1e-300\n"
            "5e-324\n"
            "-0.2857142857142857\n"
            "-1e+300\n"
            "-0\n");
  EXPECT_EQ(entries(), 1u);  // no temporary file left behind

  // Overwriting replaces the file.
  Matrix Z = Matrix::Constant(1, 1, 2.5);
  write_matrix_market_array(p, Z);
  EXPECT_EQ(read_text(p), "%%MatrixMarket matrix array real general\n1 1\n2.5\n");
  EXPECT_EQ(read_matrix_market_array(p)(0, 0), 2.5);
}

TEST_F(IoTest, ArrayRandomRoundTrip) {
  Matrix X = Matrix::Random(17, 5);
  X.row(3) *= 1e-200;
  X.row(4) *= 1e200;
  auto p = dir_ / "r.mtx";
  write_matrix_market_array(p, X);
  Matrix Y = read_matrix_market_array(p);
  ASSERT_EQ(Y.rows(), X.rows());
  ASSERT_EQ(Y.cols(), X.cols());
  EXPECT_TRUE((Y.array() == X.array()).all());
}

TEST_F(IoTest, ArrayReadsColumnMajor) {
  auto p = write_file("a.mtx",
                      "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n3\n4\n5\n6\n");
  Matrix X = read_matrix_market_array(p);
  ASSERT_EQ(X.rows(), 2);
  ASSERT_EQ(X.cols(), 3);
  EXPECT_EQ(X(0, 0), 1);
  EXPECT_EQ(X(1, 0), 2);
  EXPECT_EQ(X(0, 1), 3);
  EXPECT_EQ(X(1, 2), 6);
}

TEST_F(IoTest, ArrayErrors) {
  const std::string header = "%%MatrixMarket matrix array real general\n";

  auto p = write_file("short.mtx", header + "2 2\n1\n2\n3\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 5),
               "expected 4 values, file ends after 3");

  p = write_file("long.mtx", header + "1 2\n1\n2\n3\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 5),
               "found more");

  p = write_file("two.mtx", header + "2 1\n1 2\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 3, 3),
               "expected 1 field 'value' per line, got 2");

  p = write_file("nan.mtx", header + "2 1\n1\nNaN\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 4, 1),
               "value is NaN/Inf");

  p = write_file("junk.mtx", header + "1 1\n0.5.5\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 3, 1),
               "expected a real value, got '0.5.5'");

  p = write_file("size.mtx", header + "2 2 4\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 2),
               "expected 2 fields in size line 'rows cols', got 3");

  p = write_file("coord.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 0\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 1, 23),
               "unsupported MatrixMarket format 'coordinate' (expected array)");

  p = write_file("sym.mtx", "%%MatrixMarket matrix array real symmetric\n1 1\n1\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 1, 34),
               "unsupported MatrixMarket symmetry 'symmetric' (expected general)");
}

TEST_F(IoTest, ArrayWriteRejectsNonFinite) {
  Matrix X = Matrix::Zero(2, 2);
  X(1, 0) = std::nan("");
  auto p = dir_ / "x.mtx";
  expect_error([&] { write_matrix_market_array(p, X); }, p.string(), "(2, 1) is NaN/Inf");
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(entries(), 0u);
}

// ---------------------------------------------------------------- CSV

TEST_F(IoTest, CsvWithHeaderCommentsOneBased) {
  auto p = write_file("t.csv",
                      "# observations\n"
                      "\n"
                      "row, col, value\n"
                      "1,1,0.5\n"
                      "# mid comment\n"
                      " 3 , 2 ,\t-1.25 \n"
                      "2,4,3\n");
  CoordinateMatrix m = read_csv_triplets(p);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_FALSE(m.symmetric);
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].row, 0);
  EXPECT_EQ(m.entries[0].col, 0);
  EXPECT_EQ(m.entries[0].value, 0.5);
  EXPECT_EQ(m.entries[0].line, 4);
  EXPECT_EQ(m.entries[1].row, 2);
  EXPECT_EQ(m.entries[1].col, 1);
  EXPECT_EQ(m.entries[1].value, -1.25);
  EXPECT_EQ(m.entries[1].line, 6);
  EXPECT_EQ(m.entries[2].col, 3);
  EXPECT_EQ(m.entries[2].line, 7);
}

TEST_F(IoTest, CsvZeroBasedWithoutHeader) {
  auto p = write_file("t.csv", "0,0,1\r\n4,1,2e3\r\n");
  CoordinateMatrix m = read_csv_triplets(p, 0);
  EXPECT_EQ(m.rows, 5);
  EXPECT_EQ(m.cols, 2);
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(m.entries[0].row, 0);
  EXPECT_EQ(m.entries[1].row, 4);
  EXPECT_EQ(m.entries[1].col, 1);
  EXPECT_EQ(m.entries[1].value, 2000.0);
  EXPECT_EQ(m.entries[0].line, 1);

  // Only the first non-comment line may be a header.
  p = write_file("h.csv", "i,j,v\n1,1,1\ni,j,v\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 3, 1),
               "expected an integer row index, got 'i'");

  // An empty file is an empty matrix.
  p = write_file("e.csv", "# nothing\n");
  m = read_csv_triplets(p);
  EXPECT_EQ(m.rows, 0);
  EXPECT_EQ(m.cols, 0);
  EXPECT_TRUE(m.entries.empty());
}

// The stream overloads (used by the fuzz targets) read the same formats and name the stream.
TEST_F(IoTest, StreamOverloads) {
  std::istringstream coordinate("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 -3.5\n");
  const CoordinateMatrix m = read_matrix_market_coordinate(coordinate, "<memory>");
  ASSERT_EQ(m.entries.size(), 1u);
  EXPECT_EQ(m.entries[0].row, 1);
  EXPECT_EQ(m.entries[0].col, 0);
  EXPECT_DOUBLE_EQ(m.entries[0].value, -3.5);
  std::istringstream array("%%MatrixMarket matrix array real general\n1 2\n1\n");
  expect_error([&] { read_matrix_market_array(array, "<memory>"); }, "<memory>:3",
               "expected 2 values, file ends after 1");
  std::istringstream csv("0,1,2\n");
  EXPECT_EQ(read_csv_triplets(csv, "<memory>", 0).cols, 2);
  std::istringstream csv2("0,1,2\n");
  expect_error([&] { read_csv_triplets(csv2, "<memory>", 2); }, "<memory>", "index base must be 0 or 1");
}

// Found by the fuzzer (tests/fuzz/corpus/matrix_market/zero_by_huge.mtx): "0 1000000000000000003"
// was read as a 0 x 10^18 matrix, and any loop over its columns never ended.
TEST_F(IoTest, ArrayWithOneZeroDimensionIsRefused) {
  auto p = write_file("z.mtx", "%%MatrixMarket matrix array real general\n0 1000000000000000003\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 2),
               "expected an empty matrix to be 0 x 0, got 0 x 1000000000000000003");
  p = write_file("z2.mtx", "%%MatrixMarket matrix array real general\n3 0\n");
  expect_error([&] { read_matrix_market_array(p); }, format_location(p.string(), 2),
               "expected an empty matrix to be 0 x 0, got 3 x 0");
  p = write_file("z3.mtx", "%%MatrixMarket matrix array real general\n0 0\n");
  const Matrix X = read_matrix_market_array(p);
  EXPECT_EQ(X.rows(), 0);
  EXPECT_EQ(X.cols(), 0);
}

TEST_F(IoTest, CsvErrors) {
  auto p = write_file("a.csv", "row,col,value\n1,1,1\n2, x ,3\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 3, 4),
               "expected an integer column index, got 'x'");

  p = write_file("b.csv", "1,1,1\n1,2\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 2),
               "expected 3 fields 'row,col,value', got 2");

  p = write_file("c.csv", "1,1,1,7\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 1, 7),
               "expected 3 fields 'row,col,value', got 4");

  p = write_file("d.csv", "1,1,1\n0,1,1\n");
  expect_error([&] { read_csv_triplets(p, 1); }, format_location(p.string(), 2, 1),
               "row index 0 is below the index base 1");

  p = write_file("e.csv", "0,-1,1\n");
  expect_error([&] { read_csv_triplets(p, 0); }, format_location(p.string(), 1, 3),
               "column index -1 is below the index base 0");

  p = write_file("f.csv", "1,1,  inf\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 1, 7),
               "value is NaN/Inf");

  p = write_file("g.csv", "1,1,2.5e\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 1, 5),
               "expected a real value, got '2.5e'");

  p = write_file("h.csv", "1x,1,2\n");  // starts like a number: not a header
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 1, 1),
               "expected an integer row index, got '1x'");

  // A first line with a number in it is data, not a header: a typo in its first field is named.
  p = write_file("h2.csv", "l,2,3.0\n1,1,1\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 1, 1),
               "expected an integer row index, got 'l'");

  p = write_file("i.csv", "1,1,\n");
  expect_error([&] { read_csv_triplets(p); }, format_location(p.string(), 1, 5),
               "expected a real value, got ''");

  p = write_file("j.csv", "1,1,1\n");
  expect_error([&] { read_csv_triplets(p, 2); }, p.string(), "index base must be 0 or 1");

  p = dir_ / "missing.csv";
  expect_error([&] { read_csv_triplets(p); }, p.string(), "cannot open file");
}

// ---------------------------------------------------------------- atomic files

TEST_F(IoTest, AtomicWriteWritesAndReplaces) {
  auto p = dir_ / "out.txt";
  write_atomically(p, [](std::ostream& out) { out << "first\n"; });
  EXPECT_EQ(read_text(p), "first\n");
  write_atomically(p, [](std::ostream& out) { out << "second\n"; });
  EXPECT_EQ(read_text(p), "second\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(IoTest, AtomicWriteExceptionLeavesNothing) {
  auto p = dir_ / "out.txt";
  try {
    write_atomically(p, [](std::ostream& out) {
      out << "partial";
      throw std::runtime_error("boom");
    });
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), p.string());
    EXPECT_EQ(e.message(), "cannot write: boom");
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(IoTest, AtomicWriteExceptionKeepsPreviousFile) {
  auto p = write_file("out.txt", "old\n");
  EXPECT_THROW(write_atomically(p, [](std::ostream& out) {
                 out << "new";
                 throw std::runtime_error("boom");
               }),
               Error);
  EXPECT_EQ(read_text(p), "old\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(IoTest, AtomicWriteRethrowsSdprlErrorUnchanged) {
  auto p = dir_ / "out.txt";
  try {
    write_atomically(p, [](std::ostream&) { throw Error("somewhere:3", "custom problem"); });
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "somewhere:3");
    EXPECT_EQ(e.message(), "custom problem");
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(IoTest, AtomicWriteFailedStreamIsAnError) {
  // Simulates a full disk: the stream goes bad while writing.
  auto p = dir_ / "out.txt";
  try {
    write_atomically(p, [](std::ostream& out) {
      out << "data";
      out.setstate(std::ios::badbit);
    });
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), p.string());
    EXPECT_EQ(e.message().rfind("cannot write: ", 0), 0u) << e.message();
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(IoTest, AtomicWriteMissingDirectoryIsAnError) {
  auto p = dir_ / "no" / "such" / "out.txt";
  expect_error([&] { write_atomically(p, [](std::ostream& out) { out << "x"; }); }, p.string(),
               "cannot write: ");
}

// Only regular files are replaced (docs/bad-input.md): a FIFO and a character device are written
// through and stay what they are; a symbolic link to a regular file and a directory are refused,
// and neither they nor their targets change.
TEST_F(IoTest, AtomicWriteReplacesOnlyRegularFiles) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader that does not block (so that a writer that replaced the FIFO fails here, not hangs).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_atomically(fifo, [](std::ostream& out) { out << "through the pipe\n"; });
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof buffer - 1);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0), "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(fifo));

  // A character device, through a symbolic link (as /dev/stdout is one): the link in the temporary
  // directory, so that a writer that replaced it would not touch /dev/null itself.
  fs::create_symlink("/dev/null", dir_ / "to-null");
  write_atomically(dir_ / "to-null", [](std::ostream& out) { out << "discarded\n"; });
  EXPECT_TRUE(fs::is_symlink(dir_ / "to-null"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // Device nodes of the test's own (root only: mknod), never the system's: a node like /dev/null,
  // and one like /dev/full, which fails every write (ENOSPC): an error, not a silent success.
  if (::geteuid() == 0 && ::mknod((dir_ / "null").c_str(), S_IFCHR | 0600, ::makedev(1, 3)) == 0 &&
      ::mknod((dir_ / "full").c_str(), S_IFCHR | 0600, ::makedev(1, 7)) == 0) {
    write_atomically(dir_ / "null", [](std::ostream& out) { out << "discarded\n"; });
    EXPECT_TRUE(fs::is_character_file(dir_ / "null"));
    expect_error([&] { write_atomically(dir_ / "full", [](std::ostream& out) { out << std::string(1 << 16, 'x'); }); },
                 (dir_ / "full").string(), "cannot write: error writing");
    EXPECT_TRUE(fs::is_character_file(dir_ / "full"));
  }

  const fs::path target = write_file("target.txt", "keep\n");
  fs::create_symlink(target, dir_ / "link");
  expect_error([&] { write_atomically(dir_ / "link", [](std::ostream& out) { out << "new\n"; }); },
               (dir_ / "link").string(), "cannot write: it is a symbolic link to a regular file; sdprl replaces only "
                                         "regular files: give the target's own path");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(read_text(target), "keep\n");
  fs::create_directory(dir_ / "sub");
  expect_error([&] { write_atomically(dir_ / "sub", [](std::ostream& out) { out << "new\n"; }); },
               (dir_ / "sub").string(), "cannot write: it is a directory; sdprl replaces only regular files");
  EXPECT_TRUE(fs::is_directory(dir_ / "sub"));
  // No temporary file was left by any of them.
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST_F(IoTest, EnsureWritableDirectory) {
  auto d = dir_ / "a" / "b";
  ensure_writable_directory(d);
  EXPECT_TRUE(fs::is_directory(d));
  EXPECT_TRUE(fs::is_empty(d));  // the probe file is removed
  ensure_writable_directory(d);  // existing directory is fine

  auto f = write_file("regular", "x");
  auto under = f / "sub";
  expect_error([&] { ensure_writable_directory(under); }, under.string(),
               "output directory is not writable: ");
  expect_error([&] { ensure_writable_directory(f); }, f.string(),
               "output directory is not writable: ");
}

}  // namespace
