// Tests of the LIBSVM and dense labelled readers, of .gz/.bz2 input (files compressed by the gzip
// and bzip2 programs) and of the real data sets in models/data/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "sdprl/error.h"
#include "sdprl/io/libsvm.h"

namespace fs = std::filesystem;
using sdprl::Error;
using sdprl::Index;
using sdprl::format_location;
using sdprl::io::LabeledData;
using sdprl::io::read_dense_labeled;
using sdprl::io::read_libsvm;

namespace {

const fs::path kData = fs::path(SDPRL_SOURCE_DIR) / "models" / "data";

class LibsvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sdprl_libsvm_test." + std::to_string(::getpid()) + "." + info->name());
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

  // Writes `content` to `name`, compressed by the gzip or bzip2 program according to the
  // extension of `name` (".gz", ".bz2", any case).
  fs::path write_compressed(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    const fs::path plain = write_file(name + ".plain", content);
    std::string ext = p.extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string tool = ext == ".gz" ? "gzip" : "bzip2";
    const std::string command = tool + " -c '" + plain.string() + "' > '" + p.string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    fs::remove(plain);
    return p;
  }

  // Expects `f` to throw Error whose where() is `where` and whose message contains `part`.
  template <class F>
  void expect_error(F f, const std::string& where, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no error thrown, expected " << where << ": ..." << part << "...";
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), where) << e.what();
      EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
    }
  }

  fs::path dir_;
};

std::map<double, int> label_counts(const LabeledData& d) {
  std::map<double, int> counts;
  for (double l : d.labels) ++counts[l];
  return counts;
}

TEST_F(LibsvmTest, SparseRowsBecomeDense) {
  const fs::path p = write_file("a.libsvm",
                                "# a comment line\n"
                                "+1 1:0.5 3:-2\n"
                                "\n"
                                "-1 2:4 4:1e-3   # trailing comment\n"
                                "   \t\n"
                                "2.5\n"
                                "0 1:1 2:2 3:3 4:4\r\n");
  LabeledData d = read_libsvm(p);
  ASSERT_EQ(d.samples.rows(), 4);
  ASSERT_EQ(d.samples.cols(), 4);
  EXPECT_EQ(d.labels, (std::vector<double>{1.0, -1.0, 2.5, 0.0}));
  sdprl::Matrix expected(4, 4);
  expected << 0.5, 0, -2, 0,  //
      0, 4, 0, 1e-3,          //
      0, 0, 0, 0,             //
      1, 2, 3, 4;
  EXPECT_EQ(d.samples, expected);
}

TEST_F(LibsvmTest, DeclaredFeatures) {
  const fs::path p = write_file("a.libsvm", "1 2:1\n-1 3:1\n");
  EXPECT_EQ(read_libsvm(p).samples.cols(), 3);
  LabeledData d = read_libsvm(p, 6);
  EXPECT_EQ(d.samples.cols(), 6);
  EXPECT_EQ(d.samples.rightCols(3).norm(), 0.0);
  EXPECT_EQ(d.samples(1, 2), 1.0);
  expect_error([&] { read_libsvm(p, 2); }, format_location(p.string(), 2, 4),
               "index 3 exceeds the declared 2 features");
  expect_error([&] { read_libsvm(p, -1); }, p.string(), "must be >= 0");
}

TEST_F(LibsvmTest, ErrorsNameLineAndColumn) {
  struct Case {
    std::string content;
    long line, column;
    std::string part;
  };
  const std::vector<Case> cases = {
      {"1 1:1\nabc 1:1\n", 2, 1, "expected a real label, got 'abc'"},
      {"nan 1:1\n", 1, 1, "label is NaN/Inf"},
      {"1 1:1\n1 2:1 3\n", 2, 7, "expected 'index:value', got '3'"},
      {"1 x:1\n", 1, 3, "expected an integer index"},
      {"1 :1\n", 1, 3, "expected an integer index"},
      {"1 1:abc\n", 1, 5, "expected a real value, got 'abc'"},
      {"1 1:\n", 1, 5, "expected a value after ':'"},
      {"1 0:1\n", 1, 3, "indices are 1-based: expected an index >= 1, got 0"},
      {"1 -2:1\n", 1, 3, "expected an index >= 1, got -2"},
      {"1 2:1 2:1\n", 1, 7, "strictly increasing: expected an index > 2, got 2"},
      {"1 3:1 2:1\n", 1, 7, "strictly increasing: expected an index > 3, got 2"},
      {"1 1:1 12:inf\n", 1, 10, "value is NaN/Inf, got 'inf'"},
      {"1 1:NaN\n", 1, 5, "value is NaN/Inf"},
      {"1 1:1e999\n", 1, 5, "out of the range of a double"},
      {"1 99999999999999999999:1\n", 1, 3, "is too large"},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const fs::path p = write_file("case" + std::to_string(k) + ".libsvm", cases[k].content);
    SCOPED_TRACE(cases[k].content);
    expect_error([&] { read_libsvm(p); },
                 format_location(p.string(), cases[k].line, cases[k].column), cases[k].part);
  }
}

// Found by the fuzzer (tests/fuzz/corpus/libsvm/huge_index.txt): an index far beyond the data made
// the reader allocate (and zero) a dense n x index matrix, gigabytes for a one-line file. It is
// refused at the place of the largest index once the matrix would exceed the limit.
TEST_F(LibsvmTest, HugeIndexIsRefusedAtItsPlace) {
  const fs::path p = write_file("huge.libsvm", "1 1:1\n-1 2:1 300000000:0.5\n");
  ASSERT_EQ(setenv("SDPRL_MAX_DENSE_MB", "64", 1), 0);
  expect_error([&] { read_libsvm(p); }, format_location(p.string(), 2, 8),
               "300000000 features make the dense 2 x 300000000 matrix 4578 MB, more than the limit "
               "of 64 MB");
  // Within the limit the same reader builds the matrix.
  const fs::path small = write_file("small.libsvm", "1 1:1\n-1 2:1 1000:0.5\n");
  EXPECT_EQ(read_libsvm(small).samples.cols(), 1000);
  // A declared feature count is checked the same way, at the file.
  expect_error([&] { read_libsvm(small, 300000000); }, p.parent_path().string() + "/small.libsvm",
               "more than the limit of 64 MB");
  ASSERT_EQ(setenv("SDPRL_MAX_DENSE_MB", "lots", 1), 0);
  expect_error([&] { read_libsvm(small); }, "SDPRL_MAX_DENSE_MB", "expected a whole number of megabytes");
  ASSERT_EQ(unsetenv("SDPRL_MAX_DENSE_MB"), 0);
  EXPECT_EQ(read_libsvm(small).samples.cols(), 1000);
}

// The stream overloads read the same formats and name the stream as given.
TEST_F(LibsvmTest, StreamOverloads) {
  std::istringstream sparse("1 2:0.5\n-1 1:1\n");
  const LabeledData a = read_libsvm(sparse, "<memory>");
  EXPECT_EQ(a.samples.rows(), 2);
  EXPECT_EQ(a.samples.cols(), 2);
  EXPECT_DOUBLE_EQ(a.samples(0, 1), 0.5);
  std::istringstream dense("1 2 3\n4 5\n");
  expect_error([&] { read_dense_labeled(dense, "<memory>"); }, "<memory>:2",
               "expected 2 values after the label (as on line 1), got 1");
}

TEST_F(LibsvmTest, EmptyAndMissingFiles) {
  const fs::path empty = write_file("empty.libsvm", "");
  expect_error([&] { read_libsvm(empty); }, empty.string(), "the file has none");
  const fs::path comments = write_file("comments.libsvm", "# only\n\n  # comments\n");
  expect_error([&] { read_libsvm(comments); }, comments.string(), "the file has none");
  expect_error([&] { read_dense_labeled(comments); }, comments.string(), "the file has none");
  const fs::path missing = dir_ / "missing.libsvm";
  expect_error([&] { read_libsvm(missing); }, missing.string(), "cannot open file");
  expect_error([&] { read_dense_labeled(dir_); }, dir_.string(), "it is a directory");
  const fs::path missing_gz = dir_ / "missing.txt.gz";
  expect_error([&] { read_dense_labeled(missing_gz); }, missing_gz.string(), "cannot open file");
}

TEST_F(LibsvmTest, DenseLabeled) {
  const fs::path p = write_file("d.txt", "# header\n-1 1 2 3\n\n+1.0 4 5 6e0\n");
  LabeledData d = read_dense_labeled(p);
  sdprl::Matrix expected(2, 3);
  expected << 1, 2, 3, 4, 5, 6;
  EXPECT_EQ(d.samples, expected);
  EXPECT_EQ(d.labels, (std::vector<double>{-1.0, 1.0}));

  const fs::path shorter = write_file("short.txt", "1 1 2 3\n\n2 1 2\n");
  expect_error([&] { read_dense_labeled(shorter); }, format_location(shorter.string(), 3),
               "expected 3 values after the label (as on line 1), got 2");
  const fs::path longer = write_file("long.txt", "1 1 2 3\n2 1 2 3 4\n");
  expect_error([&] { read_dense_labeled(longer); }, format_location(longer.string(), 2, 9),
               "expected 3 values after the label (as on line 1), got 4");
  const fs::path bad = write_file("bad.txt", "1 1 2 3\n2 1 x 3\n");
  expect_error([&] { read_dense_labeled(bad); }, format_location(bad.string(), 2, 5),
               "expected a real value, got 'x'");
  const fs::path bad_label = write_file("bad_label.txt", "inf 1 2\n");
  expect_error([&] { read_dense_labeled(bad_label); }, format_location(bad_label.string(), 1, 1),
               "label is NaN/Inf");
  const fs::path label_only = write_file("label_only.txt", "1\n");
  expect_error([&] { read_dense_labeled(label_only); }, format_location(label_only.string(), 1),
               "at least one value");
}

TEST_F(LibsvmTest, CompressedInput) {
  const std::string sparse = "1 1:0.5 3:2\n-1 2:1\n";
  const std::string dense = "1 0.5 0 2\n-1 0 1 0\n";
  sdprl::Matrix expected(2, 3);
  expected << 0.5, 0, 2, 0, 1, 0;
  const std::vector<double> labels = {1.0, -1.0};

  for (const std::string ext : {".gz", ".bz2", ".GZ"}) {
    SCOPED_TRACE(ext);
    LabeledData s = read_libsvm(write_compressed("s.libsvm" + ext, sparse));
    EXPECT_EQ(s.samples, expected);
    EXPECT_EQ(s.labels, labels);
    LabeledData d = read_dense_labeled(write_compressed("d.txt" + ext, dense));
    EXPECT_EQ(d.samples, expected);
    EXPECT_EQ(d.labels, labels);
  }

  // Errors inside a compressed file still name its line and column.
  const fs::path bad = write_compressed("bad.libsvm.gz", "1 1:1\n1 1:1 1:2\n");
  expect_error([&] { read_libsvm(bad); }, format_location(bad.string(), 2, 7),
               "strictly increasing");

  // Data that is not compressed is reported as such.
  const fs::path fake = write_file("fake.libsvm.gz", sparse);
  expect_error([&] { read_libsvm(fake); }, fake.string(),
               "cannot decompress gzip data: not gzip data (bad header)");
  const fs::path fake_bz2 = write_file("fake.libsvm.bz2", sparse);
  expect_error([&] { read_libsvm(fake_bz2); }, fake_bz2.string(),
               "cannot decompress bzip2 data: not bzip2 data (bad header)");
}

TEST_F(LibsvmTest, TruncatedCompressedFile) {
  std::string content;
  for (int i = 0; i < 2000; ++i) {
    content += std::to_string(i % 2 ? 1 : -1) + " 1:" + std::to_string(i) + " 7:0.25\n";
  }
  for (const std::string ext : {".gz", ".bz2"}) {
    SCOPED_TRACE(ext);
    const fs::path full = write_compressed("full.libsvm" + ext, content);
    EXPECT_EQ(read_libsvm(full).samples.rows(), 2000);
    const auto size = fs::file_size(full);
    const fs::path cut = dir_ / ("cut.libsvm" + ext);
    fs::copy_file(full, cut);
    fs::resize_file(cut, size / 2);
    try {
      read_libsvm(cut);
      ADD_FAILURE() << "a truncated " << ext << " file was read without error";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("cannot decompress"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("ends too early (truncated file?)"), std::string::npos)
          << e.what();
    }
  }
}

TEST(LibsvmData, A1a) {
  const fs::path p = kData / "a1a.libsvm";
  LabeledData d = read_libsvm(p, 123);
  EXPECT_EQ(d.samples.rows(), 1605);
  EXPECT_EQ(d.samples.cols(), 123);
  const auto counts = label_counts(d);
  EXPECT_EQ(counts, (std::map<double, int>{{-1.0, 1210}, {1.0, 395}}));
  // Binary features.
  EXPECT_TRUE((d.samples.array() == 0.0 || d.samples.array() == 1.0).all());
  // Without the declaration, d is the highest index that occurs (119).
  EXPECT_EQ(read_libsvm(p).samples.cols(), 119);
}

TEST(LibsvmData, UspsTest) {
  LabeledData d = read_libsvm(kData / "usps-test.libsvm.bz2", 256);
  EXPECT_EQ(d.samples.rows(), 2007);
  EXPECT_EQ(d.samples.cols(), 256);
  const std::vector<int> expected = {359, 264, 198, 166, 200, 160, 170, 147, 166, 177};
  const auto counts = label_counts(d);
  ASSERT_EQ(counts.size(), 10u);
  for (int label = 1; label <= 10; ++label) {
    EXPECT_EQ(counts.at(label), expected[static_cast<std::size_t>(label - 1)]) << label;
  }
  EXPECT_GE(d.samples.minCoeff(), -1.0);
  EXPECT_LE(d.samples.maxCoeff(), 1.0);
}

TEST(LibsvmData, ColonCancer) {
  LabeledData d = read_dense_labeled(kData / "colon-cancer.dense.txt.gz");
  EXPECT_EQ(d.samples.rows(), 62);
  EXPECT_EQ(d.samples.cols(), 2000);
  EXPECT_EQ(label_counts(d), (std::map<double, int>{{-1.0, 40}, {1.0, 22}}));
  EXPECT_TRUE(d.samples.allFinite());
  EXPECT_GT(d.samples.norm(), 0.0);
}

}  // namespace
