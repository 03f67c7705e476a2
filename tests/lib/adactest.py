"""adactest - small helpers shared by the integration tests (python3 standard library only).

Paths come from the environment CTest sets (see tests/CMakeLists.txt):
  ADAC_SOURCE_DIR, ADAC_BUILD_DIR, ADAC_CLI, ADAC_PLUGIN, ADAC_LLDB, ADAC_DOTNET_DIR (dotnet_env():
  the paths scripts/dotnet-setup wrote there).
Every test exits 0 on success, 1 on failure (printing what differed); none skips.
"""
import atexit
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SOURCE = os.environ.get("ADAC_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.environ.get("ADAC_BUILD_DIR", os.path.join(SOURCE, "build"))
CLI = os.environ.get("ADAC_CLI", os.path.join(BUILD, "bin", "asyncdac"))
PLUGIN = os.environ.get("ADAC_PLUGIN", os.path.join(BUILD, "lib", "libasyncdac-lldb.so"))
LLDB = os.environ.get("ADAC_LLDB", "lldb-22")
SYNTHETIC = os.path.join(BUILD, "targets", "synthetic")
DOTNET_DIR = os.environ.get("ADAC_DOTNET_DIR") or os.path.join(SOURCE, "build", "dotnet")

_children = []
_failures = []


def _cleanup():
    for p in _children:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            p.wait(timeout=5)
        except Exception:
            pass


atexit.register(_cleanup)


def tmpdir():
    """A scratch directory for cores and oracle output, removed when the test exits (cores are
    ~100 MB each; ADAC_KEEP_TMP=1 keeps them for a post-mortem)."""
    d = tempfile.mkdtemp(prefix="adac-test-", dir=os.environ.get("ADAC_TMP", None))
    if not os.environ.get("ADAC_KEEP_TMP"):
        atexit.register(shutil.rmtree, d, True)
    return d


def link_or_copy(src, dst):
    """dst as a hard link to the file src names (symbolic links followed), else a copy of it."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.link(os.path.realpath(src), dst)
    except OSError:
        shutil.copy(os.path.realpath(src), dst)


def copy_tree(src, dst):
    """Directory src's files under dst, as link_or_copy makes them."""
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if os.path.isdir(path):
            copy_tree(path, os.path.join(dst, name))
        else:
            link_or_copy(path, os.path.join(dst, name))


def run(argv, timeout=120, env=None, input=None):
    """Runs argv; returns (rc, stdout, stderr) as text. A timeout is a failure, never a hang."""
    e = dict(os.environ)
    if env:
        e.update(env)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e, input=input)
    except subprocess.TimeoutExpired as ex:
        fail(f"timed out after {timeout}s: {' '.join(argv)}")
        return 124, ex.stdout or "", ex.stderr or ""
    return p.returncode, p.stdout, p.stderr


def start(argv, ready="READY", timeout=60, env=None):
    """Starts a debuggee in its own process group; waits for the line starting with `ready`.
    Returns (Popen, ready_line). The process is killed when the test exits."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=e)
    _children.append(p)
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        if line.startswith(ready):
            return p, line.strip()
    raise SystemExit(f"FAIL: {' '.join(argv)} did not print {ready} within {timeout}s "
                     f"(exit {p.poll()}, stderr: {p.stderr.read() if p.poll() is not None else ''})")


def wait_stopped(pid, timeout=10):
    """Waits until /proc says the process is stopped (T)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state in ("T", "t"):
            return
        time.sleep(0.02)
    raise SystemExit(f"FAIL: process {pid} did not stop")


def proc_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def gcore(pid, path):
    """Writes a core of a live process with gdb's gcore (the process keeps running)."""
    prefix = path + ".tmp"
    rc, out, err = run(["gcore", "-o", prefix, str(pid)], timeout=300)
    produced = f"{prefix}.{pid}"
    if rc != 0 or not os.path.exists(produced):
        raise SystemExit(f"FAIL: gcore {pid} failed ({rc}): {err.strip()}")
    os.rename(produced, path)
    return path


def h(v):
    """An oracle/asyncdac hex string (or None/int) as an int."""
    if v is None:
        return None
    return int(v, 16) if isinstance(v, str) else v


_dotnet_env = None


def dotnet_env():
    """The paths scripts/dotnet-setup writes to DOTNET_DIR/env.sh (DN_HOST, DN_APPS, DN_RUNTIME11, ...),
    read once; a failure, and the end of the test, when it has not run (the `dotnet` test fixture)."""
    global _dotnet_env
    if _dotnet_env is None:
        env_sh = os.path.join(DOTNET_DIR, "env.sh")
        if not os.path.exists(env_sh):
            fail(f"{env_sh} not found: run scripts/dotnet-setup (the dotnet test fixture)")
            finish()
        env = {}
        with open(env_sh) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    k, v = line.split("=", 1)
                    env[k] = v
        _dotnet_env = env
    return _dotnet_env


ADDR = re.compile(r"0x[0-9a-f]{6,16}")


def without_plugin_echo(out):
    """lldb's stdout less the echo of `plugin load` (comparing a session with the plugin to stock)."""
    return "".join(line for line in out.splitlines(True) if not line.startswith("(lldb) plugin load "))


def without_pids(out):
    """lldb's stdout with the launched process's pid as PID: two launches of the same program differ
    only there (lldb turns ASLR off)."""
    return re.sub(r"^Process \d+ ", "Process PID ", out, flags=re.M)


def normalize(text, keep=()):
    """Replaces addresses (0x + 6..16 hex digits) by 0xADDR, except those listed in keep."""
    def repl(m):
        return m.group(0) if m.group(0) in keep else "0xADDR"
    return ADDR.sub(repl, text)


def fail(msg):
    _failures.append(msg)
    print("FAIL: " + msg, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def check_eq(actual, expected, what):
    if actual == expected:
        return True
    if isinstance(actual, str) and isinstance(expected, str):
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            "expected", "actual"))
        fail(f"{what} differs:\n{diff}")
    else:
        fail(f"{what}: expected {expected!r}, got {actual!r}")
    return False


def lldb(commands, plugin=True, timeout=120, pre=(), env=None, on_crash=()):
    """Runs lldb-22 in batch mode with -o commands (and -O pre-commands; -k commands, which lldb runs
    only once a command left the process stopped by a signal, and then instead of the rest).
    Returns (rc, out, err)."""
    argv = [LLDB, "-b", "-x"]
    # In the sanitized build the plugin carries UBSan only (its runtime comes with it): lldb-22
    # deadlocks with an ASan runtime preloaded (see adac_strict in CMakeLists.txt).
    if plugin:
        argv += ["-O", f"plugin load {PLUGIN}"]
    for c in pre:
        argv += ["-O", c]
    for c in commands:
        argv += ["-o", c]
    for c in on_crash:
        argv += ["-k", c]
    return run(argv, timeout=timeout, env=env, input="")


def finish():
    """Ends the test: exit 1 if anything failed."""
    _cleanup()
    if _failures:
        print(f"{len(_failures)} check(s) failed", flush=True)
        sys.exit(1)
    print("PASS", flush=True)
    sys.exit(0)
