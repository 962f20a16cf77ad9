// Fuzz target: the dense "label v1 ... vd" reader (sdprl::io::read_dense_labeled).
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "sdprl/io/libsvm.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sdprl::fuzz::expect_clean_refusal([&] {
    sdprl::fuzz::InputStream in(data, size);
    const sdprl::io::LabeledData d = sdprl::io::read_dense_labeled(in, "input");
    if (d.samples.rows() != static_cast<sdprl::Index>(d.labels.size()) || d.labels.empty() ||
        d.samples.cols() < 1 || !d.samples.allFinite()) {
      std::abort();
    }
  });
  return 0;
}
