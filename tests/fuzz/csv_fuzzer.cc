// Fuzz target: the CSV triplet reader (sdprl::io::read_csv_triplets), 1-based as the applications
// use it, and 0-based.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "sdprl/io/matrix_market.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const int base : {1, 0}) {
    sdprl::fuzz::expect_clean_refusal([&] {
      sdprl::fuzz::InputStream in(data, size);
      const sdprl::io::CoordinateMatrix m = sdprl::io::read_csv_triplets(in, "input", base);
      for (const sdprl::io::Triplet& t : m.entries) {
        if (t.row < 0 || t.row >= m.rows || t.col < 0 || t.col >= m.cols || !std::isfinite(t.value)) {
          std::abort();
        }
      }
    });
  }
  return 0;
}
