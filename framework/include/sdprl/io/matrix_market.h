// MatrixMarket files (https://math.nist.gov/MatrixMarket/formats.html): the coordinate format for
// observations and the array format for the factor X. Errors name the file, line and what was
// expected.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <istream>
#include <string>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::io {

struct Triplet {
  std::int64_t row = 0;  // 0-based
  std::int64_t col = 0;  // 0-based
  double value = 0.0;
  long line = 0;         // source line, for messages about this entry
};

struct CoordinateMatrix {
  std::int64_t rows = 0, cols = 0;
  bool symmetric = false;         // "symmetric" in the banner: only one triangle is listed
  std::vector<Triplet> entries;   // as listed (not mirrored)
};

// Reads "%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric". Rejects other
// formats, out-of-range indices, NaN/Inf values and a wrong entry count, with file:line.
SDPRL_API CoordinateMatrix read_matrix_market_coordinate(const std::filesystem::path& file);

// Reads "%%MatrixMarket matrix array real general" (column-major values).
SDPRL_API Matrix read_matrix_market_array(const std::filesystem::path& file);

// Writes X as "%%MatrixMarket matrix array real general", each value in the fewest digits
// that read back as the same double, atomically.
SDPRL_API void write_matrix_market_array(const std::filesystem::path& file, const Matrix& X,
                                         const std::string& comment = {});
// The same text into a stream (no check of the values: see check_writable_values()).
SDPRL_API void write_matrix_market_array(std::ostream& out, const Matrix& X, const std::string& comment = {});
// Throws Error naming `file` when X holds a NaN or an infinity (which the array format cannot hold).
SDPRL_API void check_writable_values(const std::filesystem::path& file, const Matrix& X);

// Reads CSV triplets "i,j,value" (one per line; an optional header line none of whose fields is a
// number; '#' comments; indices `index_base`-based). rows/cols are the largest indices seen.
SDPRL_API CoordinateMatrix read_csv_triplets(const std::filesystem::path& file, int index_base = 1);

// The same formats read from a stream; `name` stands for the file in messages.
SDPRL_API CoordinateMatrix read_matrix_market_coordinate(std::istream& in, const std::string& name);
SDPRL_API Matrix read_matrix_market_array(std::istream& in, const std::string& name);
SDPRL_API CoordinateMatrix read_csv_triplets(std::istream& in, const std::string& name,
                                             int index_base = 1);

}  // namespace sdprl::io
