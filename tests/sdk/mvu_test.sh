#!/usr/bin/env bash
# The "Write your own model" walk-through end to end (README): install sdprl to a temporary prefix,
# build examples/robust-mvu out of tree with find_package(sdprl), run its own tests (the framework's
# check helpers), install the plugin into the prefix's plugin directory, check that `sdprl plugins` lists it, run the example's model.toml and
# check the embedding, recomputed here from X.mtx and the data file, independently of the plugin:
#   * neighbour squared distances preserved against the CLEAN distances (5% of the targets the
#     solver saw were multiplied by 10): relative RMSE < 0.05;
#   * Z centered: 1^T Z 1 / tr Z < 1e-4;
#   * the spiral unfolded: variance (tr of centered Z) > 2 times the input's, and the top
#     eigenvalue holds > 90% of it (the input spiral: about 50%).
#   mvu_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
example="$source/examples/robust-mvu"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# Under the sanitizer build (tools/dev.sh sanitize) libsdprl carries ASan: the example's test
# program, which links it, must then be built with the same runtime first in line: the same compiler
# (gcc's and clang's sanitizer runtimes do not mix) and the same flags.
san=()
if grep -q '^SDPRL_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  flags="-fsanitize=address,undefined -fno-sanitize-recover=all"
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  san=("-DCMAKE_CXX_COMPILER=$compiler" "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags"
       "-DCMAKE_MODULE_LINKER_FLAGS=$flags" "-DCMAKE_SHARED_LINKER_FLAGS=$flags")
fi
cmake -S "$example" -B "$work/mvu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" "${san[@]}" \
      > "$work/configure.log" || { cat "$work/configure.log"; fail "configuring the example"; }
cmake --build "$work/mvu" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the example"; }
# The example may include public headers only: nothing from the source tree is on its include path.
grep -q -- "-I$source" "$work/mvu/build.ninja" && fail "the example's build refers to the source tree"
# The example's own GoogleTest tests (robust_mvu_test.cc: the framework's check helpers).
ctest --test-dir "$work/mvu" --output-on-failure > "$work/ctest.log" 2>&1 || { cat "$work/ctest.log"; fail "the example's own tests"; }
grep -q "100% tests passed, 0 tests failed out of 2" "$work/ctest.log" || { cat "$work/ctest.log"; fail "expected the example's 2 tests"; }
cmake --install "$work/mvu" > "$work/plugin-install.log"
[ -f "$work/prefix/lib/sdprl/plugins/sdprl-application-robust-mvu.so" ] ||
    fail "cmake --install did not put the plugin into PREFIX/lib/sdprl/plugins"

# Installed into the plugin directory, it is found without any --plugin-path.
"$work/prefix/bin/sdprl" plugins > "$work/plugins.txt"
grep -q '^robust-mvu ' "$work/plugins.txt" || { cat "$work/plugins.txt"; fail "sdprl plugins does not list robust-mvu"; }

"$work/prefix/bin/sdprl" run "$example/model.toml" --quiet --out "$work/out" > "$work/run.txt"
cat "$work/run.txt"
grep -q '^status = converged' "$work/run.txt" || fail "the run did not converge"
# Too large a gamma makes F unbounded below (docs/writing-plugins.md, "gamma"): the solver proves it
# along a ray and ends with status unbounded, exit 3, naming gamma, well within 1000 MM steps.
rc=0
"$work/prefix/bin/sdprl" run "$example/model.toml" --quiet --out "$work/out-unbounded" --set regularizer.gamma=0.05 \
    > "$work/unbounded.txt" 2> "$work/unbounded.err" || rc=$?
cat "$work/unbounded.txt" "$work/unbounded.err"
[ "$rc" -eq 3 ] || fail "gamma = 0.05: exit $rc, expected 3"
grep -q '^status = unbounded' "$work/unbounded.txt" || fail "gamma = 0.05: status is not unbounded"
grep -q 'gamma = 0.05 is too large' "$work/unbounded.err" || fail "gamma = 0.05: the message does not name gamma"
steps=$(sed -n 's/^mm_iterations = //p' "$work/unbounded.txt")
[ "$steps" -le 1000 ] || fail "gamma = 0.05: unbounded only after $steps MM steps"

corrupted=$(grep -o '"corrupted_pairs": *[0-9.]*' "$work/out/summary.json" | sed 's/.*: *//')
awk -v c="${corrupted:-0}" 'BEGIN { exit !(c >= 5) }' || fail "only '${corrupted}' corrupted pairs: robustness not exercised"
echo "corrupted neighbour targets: $corrupted"

# Independent check: kNN pairs of the data (k from model.toml), X from X.mtx (column-major array).
k=$(sed -n 's/^neighbours *= *\([0-9]*\).*/\1/p' "$example/model.toml")
awk -v k="$k" '
  FNR == 1 { file++ }
  file == 1 && !/^#/ && NF { n++; for (c = 2; c <= NF; c++) P[n, c - 1] = $c; d = NF - 1 }
  file == 2 && /^%/ { next }
  file == 2 && !dims { rows = $1; cols = $2; dims = 1; idx = 0; next }
  file == 2 { X[idx % rows + 1, int(idx / rows) + 1] = $1; idx++ }
  END {
    if (rows != n) { printf "FAIL: X.mtx has %d rows, the data %d points\n", rows, n; exit 1 }
    for (i = 1; i <= n; i++) {                 # k nearest of i by repeated selection (ties: smaller index)
      for (j = 1; j <= n; j++) { D[j] = 0; for (c = 1; c <= d; c++) D[j] += (P[i, c] - P[j, c]) ^ 2; used[j] = (j == i) }
      for (q = 1; q <= k; q++) {
        best = 0; for (j = 1; j <= n; j++) if (!used[j] && (!best || D[j] < D[best])) best = j
        used[best] = 1; a = i < best ? i : best; b = i < best ? best : i; pair[a, b] = D[best]
      }
    }
    for (ab in pair) {
      split(ab, e, SUBSEP); z = 0; for (c = 1; c <= cols; c++) z += (X[e[1], c] - X[e[2], c]) ^ 2
      err += (z - pair[ab]) ^ 2; ref += pair[ab] ^ 2; m++
    }
    for (c = 1; c <= cols; c++) { s = 0; for (i = 1; i <= n; i++) { s += X[i, c]; tr += X[i, c] ^ 2 }; sum2 += s * s; mean[c] = s / n }
    for (c = 1; c <= cols; c++) for (i = 1; i <= n; i++) var += (X[i, c] - mean[c]) ^ 2
    for (c = 1; c <= d; c++) { s = 0; for (i = 1; i <= n; i++) s += P[i, c]; for (i = 1; i <= n; i++) var0 += (P[i, c] - s / n) ^ 2 }
    rel = sqrt(err / ref); centering = sum2 / tr; ratio = var / var0
    printf "recomputed: %d pairs, distance relative RMSE %.4g, centering %.3g, variance ratio %.4g\n", m, rel, centering, ratio
    bad = 0
    if (!(rel < 0.05)) { printf "FAIL: neighbour distances not preserved (relative RMSE %.4g >= 0.05)\n", rel; bad = 1 }
    if (!(centering < 1e-4)) { printf "FAIL: Z not centered (1^T Z 1 / tr Z = %.3g >= 1e-4)\n", centering; bad = 1 }
    if (!(ratio > 2)) { printf "FAIL: no unfolding (variance ratio %.4g <= 2)\n", ratio; bad = 1 }
    exit bad
  }' "$example/data/spiral.txt" "$work/out/X.mtx"

share=$(sed -n 's/^top_eigenvalue_share = //p' "$work/run.txt")
awk -v s="$share" 'BEGIN { if (!(s > 0.9)) { printf "FAIL: top eigenvalue share %s <= 0.9: the curve is not unrolled\n", s; exit 1 } }'
echo "1 passed, 0 failed"
