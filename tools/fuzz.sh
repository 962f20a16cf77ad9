#!/usr/bin/env bash
# Builds the libFuzzer targets of the readers (tests/fuzz/*_fuzzer.cc, clang with ASan + UBSan)
# and runs each for a given time on a copy of its seed corpus (tests/fuzz/corpus/<target>/).
#   tools/fuzz.sh [SECONDS] [TARGET ...]     default: 60 s each, every target
# Prints per target the executions, the time and the rate, and a final table. Exits non-zero when
# a target crashes; the input is left in $SDPRL_FUZZ_BUILD_DIR/artifacts/<target>/ (reproduce
# with: build-fuzz/bin/<target>_fuzzer FILE). A crash input, once the reader is fixed, belongs
# in tests/fuzz/corpus/<target>/ so that ctest replays it (fuzz_corpus.<target>).
# Environment: SDPRL_FUZZ_BUILD_DIR (default: build-fuzz), FUZZ_FLAGS (extra libFuzzer flags, e.g.
# -runs=10000000), SDPRL_FUZZ_SANITIZERS (default address,undefined; "undefined" is ~10x faster for
# long runs and builds in build-fuzz-undefined).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitizers=${SDPRL_FUZZ_SANITIZERS:-address,undefined}
default_build=$root/build-fuzz
[ "$sanitizers" = address,undefined ] || default_build=$root/build-fuzz-${sanitizers//,/-}
build=${SDPRL_FUZZ_BUILD_DIR:-$default_build}
seconds=${1:-60}
[ $# -gt 0 ] && shift

# clang and libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) come from Debian 12; the
# rest of the build's packages are those of tools/dev.sh.
packages=(clang libclang-rt-14-dev cmake ninja-build pkg-config libboost-dev libboost-iostreams-dev
          libboost-program-options-dev libboost-graph-dev libeigen3-dev libtomlplusplus-dev
          libspectra-dev liblbfgspp-dev nlohmann-json3-dev libgtest-dev libgmock-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "fuzz.sh: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSDPRL_FUZZ=ON "-DSDPRL_FUZZ_SANITIZERS=$sanitizers" -DSDPRL_NATIVE=ON >&2
fi
cmake --build "$build" --target sdprl_fuzzers >&2

if [ $# -eq 0 ]; then
  set -- $(cd "$root/tests/fuzz" && ls ./*_fuzzer.cc | sed 's|^\./||; s|_fuzzer\.cc$||')
fi

status=0
summary=()
for target in "$@"; do
  program=$build/bin/${target}_fuzzer
  seeds=$root/tests/fuzz/corpus/$target
  [ -x "$program" ] || { echo "fuzz.sh: no fuzz target '$target' ($program)" >&2; exit 2; }
  [ -d "$seeds" ] || { echo "fuzz.sh: no seed corpus $seeds" >&2; exit 2; }
  # New inputs go to a working corpus in the build tree; the seeds in the source tree stay as
  # they are.
  corpus=$build/corpus/$target
  artifacts=$build/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [ -f "$root/tests/fuzz/$target.dict" ] && dict=(-dict="$root/tests/fuzz/$target.dict")
  log=$build/fuzz-$target.log
  echo "fuzz.sh: $target for $seconds s" >&2
  set +e
  # shellcheck disable=SC2086
  ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:max_malloc_fill_size=0} \
  "$program" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_funcs=0 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" ${FUZZ_FLAGS:-} \
    "$corpus" "$seeds" > "$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  took=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz.sh: $target FAILED (exit $rc); log: $log; inputs: $artifacts" >&2
    grep -m 5 -E 'ERROR|SUMMARY|runtime error|uncaught|deadly' "$log" >&2 || tail -n 20 "$log" >&2
    summary+=("$(printf '%-16s FAILED   see %s' "$target" "$log")")
  else
    rate=$(( ${runs:-0} / (${took:-1} > 0 ? ${took:-1} : 1) ))
    summary+=("$(printf '%-16s %12s runs in %6s s  (%s/s)  corpus %s' "$target" "${runs:-?}" "${took:-?}" "$rate" "$(ls "$corpus" | wc -l)")")
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
