// SDPA sparse format (.dat-s; the format of SDPA, CSDP, DSDP and the SDPLIB collection), and the
// export of a model's convex l1 problem in that format.
//
// SDPA's problem pair (its manual's notation; the file stores c and F_0 .. F_m):
//   (P)  min c^T x   s.t. X = sum_i x_i F_i - F_0 PSD
//   (D)  max tr(F_0 Y)  s.t. tr(F_i Y) = c_i (i = 1..m), Y PSD
// F_i are symmetric block-diagonal matrices with the same block structure: a positive size is a
// dense symmetric (SDP) block, a negative size -k a k x k diagonal (LP) block.
//
// The file, as SDPA and SDPLIB document it:
//   * comment lines, whose first non-blank character is '"' or '*' (accepted anywhere here);
//   * m (the number of constraint matrices), first number of its line; the rest of the line is
//     ignored (SDPLIB writes "3 = mDIM");
//   * nBLOCK, likewise;
//   * the nBLOCK block sizes (text after them on their last line is ignored);
//   * the m numbers of c;
//   * entries "matno blkno i j value", one per line: matrix 0..m (0 is F_0), block 1..nBLOCK, row
//     and column 1-based within the block. Only the upper triangle is given (i > j is read as the
//     same symmetric entry j, i); LP blocks have i = j.
// The characters , ( ) { } are separators like blanks, so "{1, -2}" reads as two numbers.
// Every error names file:line:column and says what was expected; a duplicate entry names both
// lines. .gz and .bz2 files are decompressed while read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"

namespace sdprl::io {

struct SdpaEntry {
  std::int32_t matrix = 0;  // 0 = F_0, 1..m = F_i
  std::int32_t block = 0;   // 0-based block
  std::int32_t row = 0;     // 0-based within the block, row <= col
  std::int32_t col = 0;
  double value = 0.0;       // F_i(row, col) = F_i(col, row); never zero (zeros are dropped)
  long line = 0;            // source line (0 for entries not read from a file)
};

struct SdpaProblem {
  std::int64_t m = 0;
  std::vector<std::int64_t> blocks;  // > 0: SDP block of that size; < 0: diagonal block of -size
  Vector c;                          // length m
  std::vector<SdpaEntry> entries;    // in file order
  long blocks_line = 0;              // line of the block sizes (for messages about them)
};

// Reads a .dat-s file; throws sdprl::Error("file:line:column", what was expected) on any problem.
SDPRL_API SdpaProblem read_sdpa(const std::filesystem::path& file);
// The same from a stream (read as it is, no decompression), named `name` in messages: for tests
// and the fuzz target (tests/fuzz/sdpa_fuzzer.cc).
SDPRL_API SdpaProblem read_sdpa(std::istream& in, const std::string& name);

// Writes `problem` in the sparse format (17 significant digits, so values round-trip exactly),
// atomically; `comment` lines (split at '\n') go first, each behind '"'.
SDPRL_API void write_sdpa(const std::filesystem::path& file, const SdpaProblem& problem,
                          const std::string& comment = {});

// The convex l1 problem of `model` in Z = X X^T,
//   min_Z  sum_tau |tr(Z Q_tau) - t_tau| + (gamma/2) tr(Z A) + (lambda/2) tr(Z),   Z PSD,
// as the SDPA dual form over Y = blockdiag(Z, diag(p, q)) with slack pairs p, q >= 0 (length m):
//   F_tau = blockdiag(sym Q_tau, diag(-e_tau, +e_tau)),  c_tau = t_tau
//     i.e. tr(Z Q_tau) - p_tau + q_tau = t_tau, so p_tau + q_tau >= |tr(Z Q_tau) - t_tau|, with
//     equality at an optimum;
//   F_0 = blockdiag(-(gamma/2 A + lambda/2 I), -I_2m),
// so that SDPA's optimum tr(F_0 Y) is minus the l1 objective. Block 1 is Z (n x n), block 2 the
// 2m slacks (p first, then q).
//
// The model's interfaces do not expose Q_tau or A, so they are probed: sym(Q_tau) =
// apply_adjoint_sym(e_tau, I_n) and A = apply(I_n) (one n x n matrix at a time). The cost is an
// O(n^2) scan for nonzeros per term, O(m n^2), plus m adjoint applications to n columns, whose
// cost is the family's (entry, distance, sparse matrix terms: O(m n) each, so O(m^2 n) in all;
// dense terms O(m n^3) each). An interior-point solver of the result costs O(m^2 n^2 + m^3) per
// iteration, so the probe is not the bottleneck of an export-and-solve. Refused (sdprl::Error):
// n > max_dimension; m^2 n + m n^2 > 2e10 (e.g. models/quickstart.toml, m = 31,000 terms on
// n = 500: hours of probing, and no SDP solver could take the result); a model with a constraint
// on X (X >= 0 makes Z completely positive, which is not an SDP constraint).
SDPRL_API SdpaProblem l1_problem_as_sdpa(const Model& model, const RegularizationWeights& weights,
                                         Index max_dimension = 2000);

}  // namespace sdprl::io
