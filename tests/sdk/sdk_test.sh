#!/usr/bin/env bash
# The SDK end to end, as a user does it: install sdprl to a temporary prefix, build the arctan loss
# plugin out of tree with find_package(sdprl), run two installed models from another directory,
# run a model with the plugin from TOML, and check that the objective never rose by more than eps_k
# between MM iterations (docs/method.md check 3) and that the run converged with a sensible test RMSE.
#   sdk_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# No CMAKE_BUILD_TYPE, as a user who copies the README's lines may configure: sdprl_add_plugin
# compiles the plugin with the Release flags all the same (the host would warn about an
# unoptimised plugin when the run below loads it).
cmake -S "$source/tests/sdk/arctan" -B "$work/arctan" -G Ninja \
      -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/arctan" > "$work/build.log"
plugin=$(find "$work/arctan" -name 'sdprl-loss-arctan.so' | head -n 1)
[ -n "$plugin" ] || { echo "FAIL: the out-of-tree build produced no sdprl-loss-arctan.so"; exit 1; }

# The installed program finds its own plugins next to itself and the user's through the path.
"$work/prefix/bin/sdprl" plugins --plugin-path "$(dirname "$plugin")" > "$work/plugins.txt"
grep -q '^arctan ' "$work/plugins.txt" || { echo "FAIL: sdprl plugins does not list arctan"; cat "$work/plugins.txt"; exit 1; }
grep -q '^matrix-completion ' "$work/plugins.txt" || { echo "FAIL: installed plugins missing"; exit 1; }

# The installed models run from any directory with their installed data (a model's data paths are
# relative to its file): the quickstart (smaller, one lambda) and the SDPA example, which reads
# models/data. The licence is installed beside them.
models="$work/prefix/share/sdprl/models"
for f in "$models/quickstart.toml" "$models/data/README.md" "$models/data/sdpa_example.dat-s" \
         "$work/prefix/share/doc/sdprl/LICENSE"; do
  [ -f "$f" ] || { echo "FAIL: not installed: ${f#"$work/prefix/"}"; exit 1; }
done
mkdir "$work/elsewhere"
(cd "$work/elsewhere" && "$work/prefix/bin/sdprl" run "$models/quickstart.toml" --quiet --out quickstart \
     --set model.synthetic.m=200 --set regularizer.lambda=1.0) > "$work/quickstart.txt"
grep -q '^status = converged' "$work/quickstart.txt" || { echo "FAIL: the installed quickstart did not converge"; cat "$work/quickstart.txt"; exit 1; }
[ -f "$work/elsewhere/quickstart/X.mtx" ] || { echo "FAIL: the installed quickstart wrote no X.mtx"; exit 1; }
(cd "$work/elsewhere" && "$work/prefix/bin/sdprl" run "$models/sdpa_example.toml" --quiet --out sdpa) > "$work/sdpa.txt"
grep -q '^status = optimal' "$work/sdpa.txt" || { echo "FAIL: the installed SDPA example did not end certified optimal"; cat "$work/sdpa.txt"; exit 1; }
echo "installed models: quickstart and sdpa_example run from another directory"

SDPRL_PLUGIN_PATH="$(dirname "$plugin")" "$work/prefix/bin/sdprl" run "$source/tests/sdk/arctan/model.toml" \
    --quiet --out "$work/out" > "$work/run.txt" 2> "$work/run.err"
cat "$work/run.txt"
if grep -q "without optimisation" "$work/run.err"; then
  echo "FAIL: the plugin built without CMAKE_BUILD_TYPE is unoptimised:"; cat "$work/run.err"; exit 1
fi
grep -q '^status = converged' "$work/run.txt" || { echo "FAIL: the run did not converge"; exit 1; }
# trace.csv: lambda,mm_iteration,objective,relative_change,admm_iterations,gap,tolerance,time,curvature_scale,rho
awk -F, 'NR == 2 { prev = $3; next }
         NR > 2 { if ($3 > prev + $7) { printf "FAIL: objective rose at MM step %d: %.12g -> %.12g (eps %.3g)\n", $2, prev, $3, $7; bad = 1 }
                  prev = $3; rows++ }
         END { if (rows < 3) { print "FAIL: too few MM iterations in trace.csv"; bad = 1 }
               if (!bad) printf "objective monotone within eps_k over %d MM steps\n", rows + 1; exit bad }' "$work/out/trace.csv"
rmse=$(sed -n 's/^test_rmse = //p' "$work/run.txt")
awk -v r="$rmse" 'BEGIN { if (!(r < 0.3)) { printf "FAIL: test_rmse %s >= 0.3\n", r; exit 1 } printf "test_rmse %s < 0.3\n", r }'
echo "1 passed, 0 failed"
