#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), configures and builds sdprl, then runs a command.
#   tools/dev.sh run MODEL.toml [sdprl run options]   build, then run a model
#   tools/dev.sh test                                  build, then run the test suite (ctest)
#   tools/dev.sh build                                 build only
#   tools/dev.sh sanitize [ctest options]              clang + ASan + UBSan build in build-asan, warnings as
#                                                      errors, then ctest there
#   tools/dev.sh clang [ctest options]                 clang Release build in build-clang, warnings as errors,
#                                                      then ctest
#   tools/dev.sh <other sdprl command ...>             build, then run build/bin/sdprl <command ...>
# Environment: SDPRL_BUILD_DIR (default: build), SDPRL_BUILD_TYPE (default: Release),
# SDPRL_ASAN_BUILD_DIR (default: build-asan), SDPRL_CLANG_BUILD_DIR (default: build-clang),
# SDPRL_SANITIZE_ALL=1 (the sanitizer build runs tests/sanitizer_skips.txt's long tests too).
# With CI=true (as CI services and .ci/run set it) the build in SDPRL_BUILD_DIR treats warnings as
# errors (-DSDPRL_WERROR=ON); so do the clang builds, always.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SDPRL_BUILD_DIR:-$root/build}
type=${SDPRL_BUILD_TYPE:-Release}

# Every build and test dependency is a Debian 12 package; nothing is downloaded otherwise.
packages=(cmake ninja-build g++ pkg-config libboost-dev libboost-program-options-dev
          libboost-graph-dev libboost-iostreams-dev libeigen3-dev libtomlplusplus-dev libspectra-dev liblbfgspp-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev gzip bzip2)  # the last two: tests compress files
# The interior-point SDP solver that the global-optimality test (tests/sdpa_global_test.cc) compares with.
packages+=(sdpa)
# The MPI backend (`mpirun -np P sdprl run`, tests labelled mpi): Boost.MPI over Open MPI.
packages+=(libboost-mpi-dev libopenmpi-dev openmpi-bin)
command=${1:-build}
[ $# -gt 0 ] && shift
# The clang builds: the compiler, its OpenMP runtime (gcc's libgomp comes with g++) and, for the
# sanitizer build, its sanitizer runtimes.
[ "$command" = clang ] && packages+=(clang libomp-dev)
[ "$command" = sanitize ] && packages+=(clang libomp-dev libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "dev.sh: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# The project's own builds are native (-march=native, off by default for installs): the shipped
# models' reference results and the performance figures are those of a native build.
cmake_args=(-DSDPRL_NATIVE=ON)
if [ "$command" = sanitize ]; then
  # clang, as CI's second compiler (its warnings are errors here) and because it builds the
  # instrumented code in less than half of gcc's time (row_kernel.cc: 90 s against 170 s at -O1);
  # -O1 with line tables for readable reports (-O2 doubles the build); -O1 does not vectorise, so
  # the `omp simd` loops' "loop not vectorized" notes are not warnings here. Assertions (Eigen's
  # bounds checks) stay on.
  build=${SDPRL_ASAN_BUILD_DIR:-$root/build-asan}
  type=RelWithDebInfo
  cmake_args+=(-DSDPRL_SANITIZE=ON -DSDPRL_WERROR=ON -DCMAKE_CXX_COMPILER=clang++
               "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -Wno-pass-failed")
elif [ "$command" = clang ]; then
  build=${SDPRL_CLANG_BUILD_DIR:-$root/build-clang}
  cmake_args+=(-DCMAKE_CXX_COMPILER=clang++ -DSDPRL_WERROR=ON)
elif [ "${CI:-}" = true ]; then
  # CI's gcc build treats warnings as errors.
  cmake_args+=(-DSDPRL_WERROR=ON)
fi

# Configure a new build directory, and again one configured with other options (a plain `cmake -S .
# -B build` leaves SDPRL_NATIVE off; CI turns SDPRL_WERROR on in whatever configured the directory).
configure=false
[ -f "$build/build.ninja" ] || configure=true
# A sanitizer directory configured by gcc (as this script once did) is rebuilt with clang from scratch:
# CMake cannot change a configured directory's compiler.
if [ "$command" = sanitize ] && [ -f "$build/CMakeCache.txt" ] &&
   ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++$' "$build/CMakeCache.txt"; then
  echo "dev.sh: $build was configured with another compiler; configuring it again with clang" >&2
  rm -rf "$build"
  configure=true
fi
for arg in "${cmake_args[@]}"; do
  case "$arg" in
    -DCMAKE_*|-D*:*) ;;  # the compiler and flags: set when the directory is first configured
    -D*=*) key=${arg#-D}; grep -q "^${key%%=*}:[A-Z]*=${key#*=}\$" "$build/CMakeCache.txt" 2>/dev/null || configure=true ;;
  esac
done
if $configure; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${cmake_args[@]}" >&2
fi
cmake --build "$build" >&2

case "$command" in
  build) ;;
  test|clang) cd "$build" && exec ctest --output-on-failure -j "$(nproc)" "$@" ;;
  sanitize)
    # Any report fails its test (the build uses -fno-sanitize-recover; halt_on_error for ASan).
    # Plugins are dlopen'ed by Boost.DLL and never unloaded, so leak reports keep their stacks.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    # The long tests of tests/sanitizer_skips.txt are left out (its header says why).
    skip=()
    if [ "${SDPRL_SANITIZE_ALL:-0}" != 1 ]; then
      names=$(grep -v '^#' "$root/tests/sanitizer_skips.txt" | grep . | sed 's/\./\\./g' | paste -sd'|')
      [ -n "$names" ] && skip=(-E "^($names)\$")
    fi
    cd "$build" && exec ctest --output-on-failure -j "$(nproc)" "${skip[@]}" "$@" ;;
  *) exec "$build/bin/sdprl" "$command" "$@" ;;
esac
