// Fuzz target: the MatrixMarket readers (coordinate and array; each refuses the other's banner
// at once, so one input exercises both).
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "sdprl/io/matrix_market.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sdprl::fuzz::expect_clean_refusal([&] {
    sdprl::fuzz::InputStream in(data, size);
    const sdprl::io::CoordinateMatrix m = sdprl::io::read_matrix_market_coordinate(in, "input");
    for (const sdprl::io::Triplet& t : m.entries) {
      if (t.row < 0 || t.row >= m.rows || t.col < 0 || t.col >= m.cols || !std::isfinite(t.value) ||
          (m.symmetric && t.row < t.col)) {
        std::abort();
      }
    }
  });
  sdprl::fuzz::expect_clean_refusal([&] {
    sdprl::fuzz::InputStream in(data, size);
    const sdprl::Matrix X = sdprl::io::read_matrix_market_array(in, "input");
    if (!X.allFinite()) std::abort();
  });
  return 0;
}
