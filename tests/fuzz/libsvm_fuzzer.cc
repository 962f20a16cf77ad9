// Fuzz target: the LIBSVM reader (sdprl::io::read_libsvm).
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "sdprl/io/libsvm.h"

// A dense matrix above 1 MB is refused (with the index's place) instead of allocated: the
// refusal is what is under test, and zeroing large matrices would only slow the fuzzer down.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("SDPRL_MAX_DENSE_MB", "1", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sdprl::fuzz::expect_clean_refusal([&] {
    sdprl::fuzz::InputStream in(data, size);
    const sdprl::io::LabeledData d = sdprl::io::read_libsvm(in, "input");
    if (d.samples.rows() != static_cast<sdprl::Index>(d.labels.size()) || d.labels.empty() ||
        !d.samples.allFinite()) {
      std::abort();
    }
  });
  return 0;
}
