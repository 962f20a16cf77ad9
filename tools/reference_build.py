"""Builds of sdprl to compare: another revision built beside this checkout, configured like this one.

Shared by tools/compare_reference (results, bit for bit) and tools/bench/perf_report --baseline-ref
(speed, side by side). A comparison only means something between builds configured alike, so both
builds get the same configuration (CONFIGURE_ARGS: Release, -march=native stated explicitly rather
than left to an option's default, which differs between revisions) and config_differences() tells
when two existing build directories were configured otherwise.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_REF = "e04123d"
CONFIGURE_ARGS = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DSDPRL_NATIVE=ON", "-DSDPRL_BUILD_TESTS=ON"]
# CMake cache entries that change the generated code; the others (paths, the launcher) do not.
CODE_CACHE_KEYS = ("CMAKE_BUILD_TYPE", "SDPRL_NATIVE", "SDPRL_SANITIZE", "CMAKE_CXX_COMPILER", "CMAKE_CXX_FLAGS",
                   "CMAKE_CXX_FLAGS_RELEASE", "CMAKE_SHARED_LINKER_FLAGS", "CMAKE_EXE_LINKER_FLAGS")


def log(message):
    print("{}: {}".format(os.path.basename(sys.argv[0]), message), file=sys.stderr)


def run(cmd, **kwargs):
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, **kwargs)


def configure_args():
    args = list(CONFIGURE_ARGS)
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    return args


def temporary_parent():
    """Where a temporary worktree goes: under ccache's base_dir when one is set (paths below it are
    hashed relative to the build, so the reference's objects come from the cache), else /tmp."""
    if shutil.which("ccache"):
        base = subprocess.run(["ccache", "--get-config", "base_dir"], text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL).stdout.strip()
        if base and os.path.isdir(base) and os.access(base, os.W_OK):
            return base
    return None


def cache_entries(build_dir):
    """CMakeCache.txt of build_dir as {name: value} ({} when there is none)."""
    entries = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                line = line.strip()
                if not line or line[0] in "#/" or "=" not in line or ":" not in line.split("=", 1)[0]:
                    continue
                key, value = line.split("=", 1)
                entries[key.split(":", 1)[0]] = value
    except FileNotFoundError:
        pass
    return entries


def config_differences(build_a, build_b):
    """[(key, value in a, value in b)] for the cache entries that change the code and differ."""
    a, b = cache_entries(build_a), cache_entries(build_b)
    return [(k, a.get(k, "(unset)"), b.get(k, "(unset)")) for k in CODE_CACHE_KEYS if a.get(k) != b.get(k)]


def source_dir(build_dir):
    return cache_entries(build_dir).get("CMAKE_HOME_DIRECTORY")


def describe(build_dir):
    """'<short commit>' of the source tree build_dir was configured from, '+changes' when the tree
    has uncommitted changes outside build directories, or the directory when it is not a git tree."""
    src = source_dir(build_dir)
    if not src:
        return build_dir
    try:
        head = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], check=True, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
        status = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"], check=True,
                                text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return src
    return head + ("+changes" if status.strip() else "")


def needed_targets(build_dir, bench):
    """The program, every plugin module and (bench) admm_bench: what the comparisons run, without the
    tests. ['all'] when the targets cannot be listed (not a Ninja build)."""
    try:
        listing = subprocess.run(["ninja", "-C", build_dir, "-t", "targets", "all"], check=True, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return ["all"]
    outputs = [line.split(":", 1)[0] for line in listing.splitlines()]
    wanted = ["bin/sdprl"] + (["bin/admm_bench"] if bench else [])
    targets = [t for t in wanted if t in outputs]
    targets += [t for t in outputs if t.startswith("lib/sdprl/plugins/") and t.endswith(".so")]
    return targets if "bin/sdprl" in targets else ["all"]


def build(build_dir, source=None, bench=False):
    """Configures build_dir from source (when it has no build system yet) and builds what the
    comparisons need. Returns build_dir."""
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        if source is None:
            raise SystemExit("{}: {} is not a configured build directory".format(os.path.basename(sys.argv[0]),
                                                                                build_dir))
        run(["cmake", "-S", source, "-B", build_dir] + configure_args(), stdout=sys.stderr)
    run(["cmake", "--build", build_dir, "--target"] + needed_targets(build_dir, bench), stdout=sys.stderr)
    return build_dir


def resolve_commit(rev):
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", rev + "^{commit}"], check=True, text=True,
                              stdout=subprocess.PIPE).stdout.strip()
    except subprocess.CalledProcessError:
        raise SystemExit("{}: {} is not a commit of {}".format(os.path.basename(sys.argv[0]), rev, ROOT))


def reference_build(rev, keep_dir=None, bench=False):
    """A build of revision rev in a git worktree: keep_dir if given (created there, or reused when it
    is already a worktree at rev), else a temporary one removed when the program exits. Returns its
    build directory (<worktree>/build)."""
    commit = resolve_commit(rev)
    if keep_dir:
        worktree = os.path.abspath(keep_dir)
        if os.path.exists(worktree):
            head = subprocess.run(["git", "-C", worktree, "rev-parse", "HEAD"], text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL).stdout.strip()
            if head != commit:
                raise SystemExit("{}: {} exists and is not a worktree at {} ({})".format(
                    os.path.basename(sys.argv[0]), worktree, rev, head or "not a git tree"))
        else:
            run(["git", "-C", ROOT, "worktree", "add", "--detach", worktree, commit], stdout=sys.stderr)
    else:
        parent = tempfile.mkdtemp(prefix="sdprl-ref-", dir=temporary_parent())
        worktree = os.path.join(parent, "src")
        run(["git", "-C", ROOT, "worktree", "add", "--detach", worktree, commit], stdout=sys.stderr)

        def remove():
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", worktree],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.rmtree(parent, ignore_errors=True)
            subprocess.run(["git", "-C", ROOT, "worktree", "prune"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        atexit.register(remove)
    return build(os.path.join(worktree, "build"), source=worktree, bench=bench)


def check_same_configuration(reference, current, fatal):
    """Logs the code-changing configuration differences of two builds; exits when fatal."""
    diffs = config_differences(reference, current)
    for key, a, b in diffs:
        log("configuration differs: {} = {} (reference) vs {} (current)".format(key, a, b))
    if diffs and fatal:
        raise SystemExit("{}: the builds are configured differently; reconfigure one (cmake -S SRC -B BUILD {}) "
                         "or pass --allow-config-diff".format(os.path.basename(sys.argv[0]), " ".join(CONFIGURE_ARGS)))
    return diffs


def program_environment():
    """The environment of a comparison run: each build loads the plugins next to its own program."""
    env = dict(os.environ)
    env.pop("SDPRL_PLUGIN_PATH", None)
    return env
