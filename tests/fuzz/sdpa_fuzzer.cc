// Fuzz target: the SDPA sparse reader (sdprl::io::read_sdpa, .dat-s). An accepted problem must be
// consistent: m >= 1, c of length m and finite, every block size nonzero, every entry inside its
// matrix and block, upper triangle (row <= col), diagonal blocks only on the diagonal, finite and
// nonzero.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "sdprl/io/sdpa.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sdprl::fuzz::expect_clean_refusal([&] {
    sdprl::fuzz::InputStream in(data, size);
    const sdprl::io::SdpaProblem p = sdprl::io::read_sdpa(in, "input");
    if (p.m < 1 || p.c.size() != p.m || !p.c.allFinite() || p.blocks.empty()) std::abort();
    for (const std::int64_t b : p.blocks)
      if (b == 0) std::abort();
    for (const sdprl::io::SdpaEntry& e : p.entries) {
      if (e.matrix < 0 || e.matrix > p.m || e.block < 0 || e.block >= static_cast<std::int64_t>(p.blocks.size()))
        std::abort();
      const std::int64_t size = p.blocks[e.block];
      const std::int64_t dim = size < 0 ? -size : size;
      if (e.row < 0 || e.row > e.col || e.col >= dim || (size < 0 && e.row != e.col)) std::abort();
      if (!std::isfinite(e.value) || e.value == 0.0) std::abort();
    }
  });
  return 0;
}
