"""The LLDB data target against the standalone backends, on the same process state.

  test_lldb_backend.py core   a gcore core: `async-probe` in lldb (target create --core) vs
                              `adac-probe core`; the descriptor's JSON, which lives in a read-only
                              page the core does not contain, must come through the file fallback
  test_lldb_backend.py live   a spinning target: `async-probe` over `process attach` vs `adac-probe pid`;
                              the descriptor read with a breakpoint set on it (the trap hidden)

`async-probe` exists only in the test build of the plugin (plugin/lldb/probe.c,
libasyncdac-lldb-probe.so) and prints what tests/integration/adac_probe.c prints. Compared:
modules (LLDB also lists the [vdso], the file-based backends do not), threads (index and tid),
registers rip/rsp/rbp/fs_base, frames (pc, module, symbol, source basename and line), the descriptor's
address and the bytes of its JSON; LLDB's selected thread. (LLDB 22 has fs_base on x86-64 Linux;
LLDB 16 had none.)
"""
import os
import shutil
import struct
import sys

import adactest as t

TARGET = os.path.join(t.SYNTHETIC, "synthetic-target")
PROBE_PLUGIN = os.environ.get("ADAC_LLDB_PROBE_PLUGIN",
                              os.path.join(t.BUILD, "plugin", "lldb", "libasyncdac-lldb-probe.so"))
ADAC_PROBE = os.environ.get("ADAC_PROBE", os.path.join(t.BUILD, "bin", "adac-probe"))


def lldb_probe(setup, actions):
    rc, out, err = t.lldb(setup + ["async-probe " + " ".join(actions)], plugin=False,
                          pre=[f"plugin load {PROBE_PLUGIN}"])
    t.check_eq((rc, err), (0, ""), f"async-probe {' '.join(actions)}: exit code and stderr")
    return out.split("(lldb) async-probe ", 1)[-1].split("\n", 1)[-1]


def file_probe(kind, where, actions):
    """adac-probe's output."""
    rc, out, err = t.run([ADAC_PROBE, kind, where] + actions)
    t.check_eq((rc, err), (0, ""), f"adac-probe {kind}: exit code and stderr")
    return out


def parse(out):
    """Splits probe output into its parts: modules, threads, regs, frames, and the rest."""
    lines = out.splitlines()
    t.check(lines and lines[0].startswith("kind "), f"probe output starts with its kind:\n{out}")
    return lines[1:]


def modules(lines):
    """(base, end, path) of each module line, without the [vdso] only LLDB lists."""
    return [tuple(p) for p in (l.split(" ", 2) for l in lines)
            if len(p) == 3 and p[0].startswith("0x") and p[1].startswith("0x") and p[2] != "[vdso]"]


def frames(lines, tid):
    """(pc, module, symbol, file basename:line) of each frame line."""
    result = []
    for l in lines:
        parts = l.split(" ")
        if len(parts) >= 3 and parts[0].startswith("0x") and not parts[1].startswith("0x"):
            loc = os.path.basename(parts[3]) if len(parts) > 3 else ""
            result.append((parts[0], parts[1], parts[2], loc))
    return result


def regs_line(lines):
    found = [l for l in lines if l.startswith("rip ")]
    return found[0] if found else None


def threads(lines, tid):
    return [tuple(l.split(" ")[:2]) for l in lines if l.split(" ")[1:2] == [str(tid)]]


def compare(ours, theirs, tid, what):
    a, b = parse(ours), parse(theirs)
    t.check(len(modules(a)) >= 4 and threads(a, tid) and regs_line(a) and len(frames(a, tid)) >= 3,
            f"{what}: the LLDB probe printed too little:\n{ours}")
    t.check_eq(modules(a), modules(b), f"{what}: modules")
    t.check_eq(threads(a, tid), threads(b, tid), f"{what}: threads")
    t.check_eq(regs_line(a), regs_line(b), f"{what}: rip, rsp, rbp, fs_base")
    t.check_eq(frames(a, tid), frames(b, tid), f"{what}: frames")


def core_has(core, addr):
    """True when a PT_LOAD of the core holds file bytes for addr."""
    with open(core, "rb") as f:
        ehdr = f.read(64)
        phoff, = struct.unpack_from("<Q", ehdr, 32)
        phentsize, phnum = struct.unpack_from("<HH", ehdr, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _, _, p_vaddr, _, p_filesz = struct.unpack("<IIQQQQ", f.read(40))
            if p_type == 1 and p_vaddr <= addr < p_vaddr + p_filesz:
                return True
    return False


def check_descriptor(setup, core=None):
    """The descriptor struct, then its JSON, read through the LLDB target."""
    out = lldb_probe(setup, ["sym", "libcoreclr.so", "DotNetRuntimeContractDescriptor"])
    desc = int(parse(out)[0], 16)
    out = parse(lldb_probe(setup, ["read", hex(desc), "40"]))
    t.check_eq(out[0], "read 40", "descriptor struct read")
    raw = bytes.fromhex(out[1])
    magic, flags, size, json_addr = struct.unpack_from("<QIIQ", raw)
    t.check_eq(magic, 0x0043414443434e44, "descriptor magic")
    if core:
        t.check(not core_has(core, json_addr),
                f"the JSON at {json_addr:#x} is in the core: the file fallback is not exercised")
    out = lldb_probe(setup, ["text", hex(json_addr), str(size)])
    lines = out.split("\n", 2)
    t.check_eq(lines[1], f"read {size}", "JSON read length")
    t.check(lines[2].startswith('{"version":2,"baseline":"empty","types":{"Object"'),
            f"JSON text read through lldb: {lines[2][:80]!r}")
    return desc, json_addr, size


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "core"
    if not os.path.exists(PROBE_PLUGIN):
        raise SystemExit(f"FAIL: no {PROBE_PLUGIN} (built with the plugin)")
    tmp = t.tmpdir()
    actions = lambda tid: ["modules", "threads", "regs", str(tid), "frames", str(tid)]
    try:
        proc, _ = t.start([TARGET, "spin"])
        tid = proc.pid
        if mode == "core":
            core = t.gcore(proc.pid, os.path.join(tmp, "spin.core"))
            proc.kill()
            setup = [f"target create --core {core}"]
            ours = lldb_probe(setup, actions(tid))
            desc, json_addr, size = check_descriptor(setup, core)
            theirs = file_probe("core", core, actions(tid) + ["sym", "libcoreclr.so",
                                "DotNetRuntimeContractDescriptor", "text", hex(json_addr), str(size)])
            compare(ours, theirs, tid, "lldb vs core backend")
            t.check(hex(desc) in theirs, f"the core backend finds the descriptor at {desc:#x}")
        elif mode == "live":
            setup = [f"process attach -p {proc.pid}"]
            ours = lldb_probe(setup, actions(tid))
            desc, _, _ = check_descriptor(setup)
            # A live local process is read from /proc/<pid>/mem, which shows the trap LLDB writes
            # for a breakpoint; LLDB's reads hide it. With a breakpoint on the descriptor's first
            # byte, the plugin must still read the magic.
            out = parse(lldb_probe(setup + [f"breakpoint set -a {desc:#x}"], ["read", hex(desc), "8"]))
            t.check_eq(out, ["read 8", struct.pack("<Q", 0x0043414443434e44).hex()],
                       "the descriptor's magic read under a breakpoint")
            theirs = file_probe("pid", str(proc.pid), actions(tid))
            compare(ours, theirs, tid, "lldb vs pid backend")
        else:
            raise SystemExit(f"unknown mode {mode}")
        out = lldb_probe(setup, ["selected"])
        t.check_eq(parse(out), [f"selected {tid}"], "the selected thread")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
