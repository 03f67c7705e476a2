"""targetlib - shared by the CLI and data-target tests: the synthetic target's expected output,
/proc facts, an independent reading of core and library ELF headers, the backend probe, kernel
cores, and eu-stack's frames (python3 standard library only)."""
import atexit
import fcntl
import glob
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import time

import adactest as t

PROBE = os.path.join(t.BUILD, "bin", "adac-probe")
CHURN = os.path.join(t.BUILD, "bin", "thread-churn")
TARGET = os.path.join(t.SYNTHETIC, "synthetic-target")
NODESC_TARGET = os.path.join(t.SYNTHETIC, "synthetic-target-nodesc")
FAKE_LIB = os.path.realpath(os.path.join(t.SYNTHETIC, "fake", "libcoreclr.so"))
NODESC_LIB = os.path.realpath(os.path.join(t.SYNTHETIC, "nodesc", "libcoreclr.so"))
DESCRIPTOR_SYMBOL = "DotNetRuntimeContractDescriptor"

# `asyncdac runtime` on the synthetic target (targets/synthetic/fake_coreclr.c), addresses
# normalised: the main descriptor's 2 types, 7 globals and 3 contracts plus the GC
# sub-descriptor's 1 type, 2 globals and 1 contract.
EXPECTED_TEXT = """.NET runtime 0.0.1-synthetic (x64)
  module:     {lib}
  base:       0xADDR
  descriptor: 0xADDR (version 2, baseline "empty", 64-bit)
  sub-descriptor GC: 0xADDR
  types:      3
  globals:    9
  contracts:  4
    GC                       c1
    LegacyInteger            2
    Object                   c1
    RuntimeTypeSystem        c1
"""


def tmpdir():
    """A temporary directory removed when the test ends, unless a check failed (kept to debug)."""
    d = t.tmpdir()
    atexit.register(lambda: t._failures or shutil.rmtree(d, ignore_errors=True))
    return d


def cli(args, timeout=60):
    return t.run([t.CLI] + args, timeout=timeout)


def probe(args, timeout=60, input=None):
    return t.run([PROBE] + args, timeout=timeout, input=input)


# ---- /proc ----

def maps(pid):
    """File-backed mappings of a live process: (start, end, perms, offset, path)."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or not parts[5].startswith("/"):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            out.append((start, end, parts[1], int(parts[2], 16), parts[5].rstrip("\n")))
    return out


def module_range(mappings, path):
    """(base, end) of a file by the grouping rule: base = its offset-0 mapping, end = its highest end."""
    mine = [m for m in mappings if m[4] == path]
    if not mine:
        raise SystemExit(f"FAIL: {path} is not mapped")
    return min(m[0] for m in mine if m[3] == 0), max(m[1] for m in mine)


def status(pid, tid=None):
    path = f"/proc/{pid}/status" if tid is None else f"/proc/{pid}/task/{tid}/status"
    fields = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    return fields


def thread_states(pid):
    states = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                states[int(tid)] = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            pass
    return states


def wait_state(pid, states, timeout=10):
    """Waits until the process state is one of `states`; returns the last state seen."""
    deadline = time.time() + timeout
    st = t.proc_state(pid)
    while st not in states and time.time() < deadline:
        time.sleep(0.02)
        st = t.proc_state(pid)
    return st


def check_untouched(pid, state, label):
    """The process is in `state`, not traced, and has no signal pending (none lost or injected).
    A process that was sleeping runs for a moment after a detach (its system call restarts), so
    the state S is given a few seconds to settle; T must hold at once."""
    now = wait_state(pid, (state,), timeout=5) if state == "S" else t.proc_state(pid)
    t.check_eq(now, state, f"{label}: process state")
    st = status(pid)
    t.check_eq(st["TracerPid"], "0", f"{label}: TracerPid")
    t.check_eq(st["ShdPnd"], "0" * 16, f"{label}: shared pending signals")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            pnd = status(pid, tid)["SigPnd"]
        except OSError:
            continue
        t.check_eq(pnd, "0" * 16, f"{label}: pending signals of thread {tid}")


def wait_exec(p, needle, timeout=10):
    """Waits until process p has `needle` among its mappings (its loader finished)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(needle in m[4] for m in maps(p.pid)) and t.proc_state(p.pid) == "S":
            return
        time.sleep(0.02)
    raise SystemExit(f"FAIL: process {p.pid} never mapped {needle}")


# ---- ELF, read independently of dac/ ----

def elf_dynsym(path, name):
    """st_value of a defined dynamic symbol of an ELF64 file."""
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 11:  # SHT_DYNSYM
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            st_name, _, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", data, off)
            s = data[strtab[4] + st_name:data.index(b"\0", strtab[4] + st_name)].decode()
            if s == name and st_shndx != 0:
                return st_value
    raise SystemExit(f"FAIL: {path} does not export {name}")


def elf_type(path):
    with open(path, "rb") as f:
        return struct.unpack("<H", f.read(18)[16:18])[0]


def phdrs(path):
    """(p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align) of an ELF64 file."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        f.seek(phoff)
        raw = f.read(phentsize * phnum)
    return [struct.unpack_from("<IIQQQQQQ", raw, i * phentsize) for i in range(phnum)]


def core_loads(path):
    """PT_LOAD segments of a core: (vaddr, memsz, offset, filesz)."""
    return [(p[3], p[6], p[2], p[5]) for p in phdrs(path) if p[0] == 1]


def core_file_end(path):
    """Bytes a complete core file has: the end of its furthest segment."""
    return max(p[2] + p[5] for p in phdrs(path))


_loads_cache = {}


def core_in_file(path, addr):
    """True when the core itself holds the byte at addr."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _loads_cache:
        _loads_cache[key] = core_loads(path)
    return any(v <= addr < v + fs for v, _, _, fs in _loads_cache[key])


def core_nt_file(path):
    """The NT_FILE note of a core: [(start, end, file offset in bytes, path)]."""
    with open(path, "rb") as f:
        data = f.read()
    for p in phdrs(path):
        if p[0] != 4:  # PT_NOTE
            continue
        off, end = p[2], p[2] + p[5]
        while off + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, off)
            name = data[off + 12:off + 12 + namesz]
            desc = off + 12 + ((namesz + 3) & ~3)
            if ntype == 0x46494c45 and name == b"CORE\0":  # NT_FILE
                count, page = struct.unpack_from("<QQ", data, desc)
                paths = data[desc + 16 + 24 * count:desc + descsz].split(b"\0")
                return [(*struct.unpack_from("<QQQ", data, desc + 16 + 24 * i)[:2],
                         struct.unpack_from("<Q", data, desc + 16 + 24 * i + 16)[0] * page, paths[i].decode())
                        for i in range(count)]
            off = desc + ((descsz + 3) & ~3)
    raise SystemExit(f"FAIL: {path} has no NT_FILE note")


def core_module_range(path, lib):
    return module_range([(s, e, "", o, p) for s, e, o, p in core_nt_file(path)], lib)


# ---- the runtime command ----

def check_runtime_text(out, lib, base, label):
    t.check_eq(t.normalize(out), EXPECTED_TEXT.format(lib=lib), f"{label}: text output")
    t.check(f"  base:       0x{base:016x}\n" in out, f"{label}: base is not 0x{base:x}:\n{out}")


def check_runtime_json(out, lib, base, label):
    try:
        doc = json.loads(out)
    except ValueError as e:
        t.fail(f"{label}: --json output is not JSON ({e}):\n{out}")
        return
    rt = doc.get("runtime", {})
    t.check_eq(list(doc), ["schema", "runtime"], f"{label}: top-level keys")
    t.check_eq(doc.get("schema"), 1, f"{label}: schema")
    expected = {
        "module": lib,
        "base": f"0x{base:016x}",
        "descriptor": f"0x{base + elf_dynsym(lib, DESCRIPTOR_SYMBOL):016x}",
        "version": 2,
        "baseline": "empty",
        "pointer_size": 8,
        "product_version": "0.0.1-synthetic",
        "architecture": "x64",
        "contracts": {"GC": "c1", "LegacyInteger": "2", "Object": "c1", "RuntimeTypeSystem": "c1"},
        "types": 3,
        "globals": 9,
        "sub_descriptors": ["GC"],
    }
    t.check_eq(sorted(rt), sorted(expected), f"{label}: JSON keys")
    for key, value in expected.items():
        t.check_eq(rt.get(key), value, f"{label}: JSON {key}")
    t.check(rt.get("module", "").endswith("fake/libcoreclr.so"), f"{label}: module path")


def check_runtime(target_args, lib, base, label):
    """`asyncdac runtime <target>` in text and JSON."""
    rc, out, err = cli(["runtime"] + target_args)
    t.check_eq((rc, err), (0, ""), f"{label}: exit code and stderr")
    check_runtime_text(out, lib, base, label)
    rc, out, err = cli(["runtime"] + target_args + ["--json"])
    t.check_eq((rc, err), (0, ""), f"{label} --json: exit code and stderr")
    check_runtime_json(out, lib, base, f"{label} --json")


# ---- kernel cores ----

CORE_PATTERN = "/proc/sys/kernel/core_pattern"


def _unlimited_core():
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def kernel_core(argv, workdir, timeout=60):
    """Runs argv, which must die of a signal, with core_pattern pointed into workdir (restored
    afterwards). Returns the core's path, or None after printing why there is none. Tests that
    change core_pattern serialise on a lock file."""
    with open(os.path.join("/tmp", "asyncdac-core-pattern.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(CORE_PATTERN) as f:
                old = f.read().rstrip("\n")
            with open(CORE_PATTERN, "w") as f:
                f.write(os.path.join(workdir, "core.%e.%p"))
        except OSError as e:
            print(f"NOTE: no kernel core: cannot point {CORE_PATTERN} into a temporary directory ({e})")
            return None
        try:
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_unlimited_core,
                                 start_new_session=True)
            try:
                p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                raise SystemExit(f"FAIL: {' '.join(argv)} did not die within {timeout}s")
        finally:
            with open(CORE_PATTERN, "w") as f:
                f.write(old)
    cores = glob.glob(os.path.join(workdir, f"core.*.{p.pid}"))
    if p.returncode >= 0 or not cores:
        print(f"NOTE: no kernel core: {' '.join(argv)} exited with {p.returncode} and wrote no core "
              f"(RLIMIT_CORE {resource.getrlimit(resource.RLIMIT_CORE)})")
        return None
    return cores[0]


def eu_stack(argv):
    """[(pc, symbol)] of the first thread eu-stack prints, or None without eu-stack."""
    if not shutil.which("eu-stack"):
        print("NOTE: eu-stack not found; frames are not compared with it")
        return None
    rc, out, err = t.run(["eu-stack"] + argv, timeout=60)
    frames = []
    for line in out.splitlines():
        m = re.match(r"#\d+\s+0x([0-9a-f]+)(?: - 1)?\s*(\S*)", line)
        if m:
            frames.append((int(m.group(1), 16), m.group(2)))
        elif frames and line.startswith("TID"):
            break
    return frames
