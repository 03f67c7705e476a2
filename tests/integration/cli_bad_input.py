"""cli.bad_input: every bad target or argument gives one exact line `asyncdac: error: ...` on
stderr, nothing on stdout and a non-zero exit, within a timeout; processes looked at are left as
they were."""
import os
import shutil
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adactest as t  # noqa: E402
import targetlib as tl  # noqa: E402

d = tl.tmpdir()
DESC_NOTE = "contract descriptor"


def expect_error(args, message, label, rc=None):
    """Runs the CLI; stderr must be exactly `asyncdac: error: <message>` (addresses normalised)."""
    got_rc, out, err = tl.cli(args)
    if rc is None:
        t.check(got_rc not in (0, 124) and got_rc > 0, f"{label}: exit code {got_rc} (want a failure, no crash)")
    else:
        t.check_eq(got_rc, rc, f"{label}: exit code")
    t.check_eq(out, "", f"{label}: stdout")
    t.check_eq(t.normalize(err), f"asyncdac: error: {message}\n", f"{label}: stderr")


def spin(argv, env=None):
    p, _ = t.start(argv, env=env)
    return p


def stop(p):
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)


# ---- live processes that are not (usable) .NET ----

p = subprocess.Popen(["sleep", "1000"], start_new_session=True)
t._children.append(p)
tl.wait_exec(p, "libc")
expect_error(["runtime", "--pid", str(p.pid)],
             "no .NET runtime in the target: no libcoreclr.so and no module exports DotNetRuntimeContractDescriptor",
             "sleep 1000")
tl.check_untouched(p.pid, "S", "sleep 1000 after the CLI")
stop(p)

p = spin([tl.NODESC_TARGET, "spin"])
expect_error(["runtime", "--pid", str(p.pid)],
             f"{tl.NODESC_LIB} at 0xADDR exports no DotNetRuntimeContractDescriptor "
             "(a .NET runtime older than 9, or a build without data contracts)", "nodesc")
tl.check_untouched(p.pid, "S", "nodesc after the CLI")
stop(p)

# ---- corrupt descriptors, live and from a gcore core ----

CORRUPT = {
    "badmagic": f'libcoreclr.so: {DESC_NOTE} at 0xADDR has a bad magic (want "DNCCDAC\\0")',
    "hugesize": f"libcoreclr.so: {DESC_NOTE} at 0xADDR claims 2147483647 bytes of JSON (limit 16777216)",
    "badjson": f"libcoreclr.so: {DESC_NOTE} JSON is invalid at line 1 column 39: string or '}}' expected near '}}'",
}
for how, message in CORRUPT.items():
    p = spin([tl.TARGET, "spin", how])
    expect_error(["runtime", "--pid", str(p.pid)], message, f"{how} (pid)")
    tl.check_untouched(p.pid, "S", f"{how} after the CLI")
    core = t.gcore(p.pid, os.path.join(d, f"{how}.core"))
    stop(p)
    expect_error(["runtime", core], message, f"{how} (core)")

# wildjson points the JSON at address 0x10; the size is the real JSON's.
p = spin([tl.TARGET, "spin", "wildjson"])
base, _ = tl.module_range(tl.maps(p.pid), tl.FAKE_LIB)
with open(f"/proc/{p.pid}/mem", "rb") as mem:
    mem.seek(base + tl.elf_dynsym(tl.FAKE_LIB, tl.DESCRIPTOR_SYMBOL) + 12)
    json_size, = struct.unpack("<I", mem.read(4))
message = f"libcoreclr.so: {DESC_NOTE} JSON: cannot read {json_size} bytes at 0x10 (got 0)"
expect_error(["runtime", "--pid", str(p.pid)], message, "wildjson (pid)")
core = t.gcore(p.pid, os.path.join(d, "wildjson.core"))
stop(p)
expect_error(["runtime", core], message, "wildjson (core)")

# ---- files that are not usable cores ----

p = spin([tl.TARGET, "spin"])
good = t.gcore(p.pid, os.path.join(d, "good.core"))
stop(p)

truncated = os.path.join(d, "truncated.core")
shutil.copy(good, truncated)
half = os.path.getsize(good) // 2
os.truncate(truncated, half)
expect_error(["runtime", "--strict", truncated],
             f"{truncated}: core file is truncated ({half} of {tl.core_file_end(good)} bytes)", "truncated core, --strict")
# Best effort: gcore writes its notes last, so half a core has no threads and no file mappings; the
# warning says what is missing, then the command fails for want of modules.
rc, out, err = tl.cli(["runtime", truncated])
warning = err.splitlines()[0] if err else ""
t.check_eq((rc, out, err.splitlines()[1:]), (1, "", ["asyncdac: error: the target has no modules (is it a process or "
                                                      "a core file?)"]), "truncated core: exit code, stdout, error")
t.check(warning.startswith(f"asyncdac: warning: {truncated}: core file is truncated ({half} of "
                           f"{tl.core_file_end(good)} bytes): ") and warning.endswith(", the notes are cut; reads there fail"),
        f"truncated core: the warning line: {warning}")

missing = os.path.join(d, "nosuch.core")
expect_error(["runtime", missing], f"{missing}: cannot open: No such file or directory", "missing core")
expect_error(["runtime", "/etc/passwd"], "/etc/passwd: not an ELF file", "/etc/passwd")
# An address before the core file: taken for the core, and said so (addresses normalised to 0xADDR).
expect_error(["dumpobj", "0x7f0010", good], "0xADDR: cannot open: No such file or directory (the core file comes "
             "first: 'asyncdac dumpobj <core-file> <object address> [--depth <n>]')", "address before the core")
etype = {1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN"}[tl.elf_type(tl.TARGET)]
expect_error(["runtime", tl.TARGET], f"{tl.TARGET}: not an ELF core file ({etype})", "executable")
expect_error(["runtime", tl.FAKE_LIB], f"{tl.FAKE_LIB}: not an ELF core file (ET_DYN)", "shared library")
empty = os.path.join(d, "empty.core")
open(empty, "wb").close()
expect_error(["runtime", empty], f"{empty}: not an ELF file", "empty file")
expect_error(["runtime", d], f"{d}: not a regular file", "directory")

# An ELF core header for another machine (AArch64), no program headers.
arm = os.path.join(d, "aarch64.core")
with open(arm, "wb") as f:
    f.write(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 4, 183, 1, 0, 64, 0, 0, 64, 56, 0, 64, 0, 0))
expect_error(["runtime", arm], f"{arm}: not an x86-64 core file (class 2, machine 183)", "aarch64 core")

# A core whose NT_FILE note claims an absurd number of mappings.
absurd = os.path.join(d, "absurd-nt-file.core")
shutil.copy(good, absurd)
with open(absurd, "r+b") as f:
    data = f.read()
    for ph in tl.phdrs(absurd):
        off = ph[2]
        while ph[0] == 4 and off + 12 <= ph[2] + ph[5]:
            namesz, descsz, ntype = struct.unpack_from("<III", data, off)
            desc = off + 12 + ((namesz + 3) & ~3)
            if ntype == 0x46494c45:
                f.seek(desc)
                f.write(struct.pack("<Q", 0x7fffffffffffffff))
            off = desc + ((descsz + 3) & ~3)
expect_error(["runtime", absurd],
             f"{absurd}: NT_FILE lists 9223372036854775807 mappings, more than ADAC_MAX_MAPPINGS (1000000)",
             "absurd NT_FILE")

# ---- processes that do not exist ----

pid = 999999
while os.path.exists(f"/proc/{pid}"):
    pid -= 1
expect_error(["runtime", "--pid", str(pid)], f"process {pid}: no such process", "missing pid")
# A command's options are checked before its target is opened: a mistyped option does not stop
# (or, with --release, copy) a live process. The missing process shows it: its error never comes.
expect_error(["ps", "--pid", str(pid), "--release", "--stats", "--bogus"], "unknown option '--bogus' for 'ps'",
             "unknown option before the process is opened", rc=2)
expect_error(["ps", "--pid", str(pid), "--method"], "option --method of 'ps' requires a value",
             "option without its value before the process is opened", rc=2)
expect_error(["frame", "--pid", str(pid), "info", "-I", "--bogus"], "unknown option '--bogus' for 'frame'",
             "frame's -I is an option of its list", rc=2)
expect_error(["diff", "a.core", "--pid", str(pid), "--bogus"], "unknown option '--bogus' for 'diff'",
             "unknown option of diff before its targets are opened", rc=2)

# A process asyncdac may not trace: as user nobody, a root process is off limits...
try:
    import pwd
    nobody = pwd.getpwnam("nobody")
except (ImportError, KeyError):
    nobody = None


def as_nobody():
    os.setgroups([])
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)


p = spin([tl.TARGET, "spin"])
# The suite runs as root (scripts/test installs packages); the CLI runs as nobody here.
if t.check(os.getuid() == 0 and nobody is not None, "the permission case needs root and the user nobody"):
    # nobody may not be able to reach the build tree (a clone under a 0700 mktemp directory): run
    # a copy of the CLI from a directory everyone can enter.
    shared = os.path.join(t.tmpdir(), "bin")
    os.mkdir(shared)
    for d in (os.path.dirname(shared), shared):
        os.chmod(d, 0o755)
    cli_copy = shutil.copy(t.CLI, os.path.join(shared, "asyncdac"))
    os.chmod(cli_copy, 0o755)
    try:
        r = subprocess.run([cli_copy, "runtime", "--pid", str(p.pid)], capture_output=True, text=True, timeout=60,
                           preexec_fn=as_nobody)
    except (OSError, subprocess.SubprocessError) as e:
        t.check(False, f"cannot run the CLI as nobody: {e}")
    else:
        t.check_eq((r.returncode, r.stdout, r.stderr),
                   (1, "", f"asyncdac: error: process {p.pid}: ptrace attach failed: Operation not permitted\n"),
                   "not permitted")
tl.check_untouched(p.pid, "S", "not permitted: target after the CLI")

# ...and so is a process another tracer holds (here adac-probe, waiting on its stdin).
q = subprocess.Popen([tl.PROBE, "pid", str(p.pid), "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
t.check_eq([q.stdout.readline().strip(), q.stdout.readline().strip()], ["kind pid", "waiting"], "probe holds the target")
expect_error(["runtime", "--pid", str(p.pid)],
             f"process {p.pid}: ptrace attach failed: Operation not permitted (already traced by process {q.pid})",
             "already traced", rc=1)
q.communicate("\n", timeout=60)
tl.check_untouched(p.pid, "S", "already traced: target after the probe")
stop(p)

# ---- bad arguments ----

expect_error(["runtime"], "'runtime' needs a core file or --pid <pid>", "no target", rc=2)
expect_error(["runtime", "--pid", "abc"], "invalid process id 'abc'", "--pid abc", rc=2)
expect_error(["runtime", "--pid", "0"], "invalid process id '0'", "--pid 0", rc=2)
expect_error(["runtime", "--pid"], "option --pid requires a process id", "--pid without a value", rc=2)
expect_error(["nosuch"], "'nosuch' is not a command (see 'asyncdac --help')", "unknown command", rc=2)
expect_error([good, "ps"], f"'{good}' is not a command; the command comes first: 'asyncdac ps {good} ...'",
             "the core file before the command", rc=2)
expect_error(["runtime", good, "--bogus"], "unknown option '--bogus' for 'runtime'", "unknown option (core)", rc=2)
expect_error(["dumpobj", good, "zz"], "invalid value 'zz' for <object address> of 'dumpobj'", "bad address argument",
             rc=2)
p = spin([tl.TARGET, "spin"])
expect_error(["runtime", "--pid", str(p.pid), "--bogus"], "unknown option '--bogus' for 'runtime'",
             "unknown option (pid)", rc=2)
tl.check_untouched(p.pid, "S", "unknown option: target after the CLI")
expect_error(["runtime", good, "--pid", str(p.pid)], "give either a core file or --pid, not both", "core and pid",
             rc=2)
stop(p)

t.finish()
