// Labelled data sets: the LIBSVM sparse text format and a dense "label v1 ... vd" text format.
// Files ending in ".gz" or ".bz2" are decompressed while they are read. Errors name
// file:line:column and say what was expected and what was found.
#pragma once

#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::io {

struct LabeledData {
  Matrix samples;               // n x d, one sample per row (dense, row-major)
  std::vector<double> labels;   // n labels, in file order
};

// Reads LIBSVM lines "label index:value index:value ..." (indices 1-based and strictly increasing;
// absent features are 0). `features` > 0 declares d, and an index above it is an error; 0 takes d
// as the largest index seen (which may be smaller than the data set's true dimension: LIBSVM's a1a
// has 123 features but no sample uses the last ones). Blank lines and '#' comments (a whole line,
// or the rest of a line) are skipped. A file without samples is an error.
SDPRL_API LabeledData read_libsvm(const std::filesystem::path& file, Index features = 0);

// Reads dense lines "label v1 v2 ... vd" (whitespace separated; every line has the same d >= 1).
// Blank lines and '#' comments are skipped. A file without samples is an error.
SDPRL_API LabeledData read_dense_labeled(const std::filesystem::path& file);

// The same formats read from a stream (uncompressed); `name` stands for the file in messages.
SDPRL_API LabeledData read_libsvm(std::istream& in, const std::string& name, Index features = 0);
SDPRL_API LabeledData read_dense_labeled(std::istream& in, const std::string& name);

}  // namespace sdprl::io
