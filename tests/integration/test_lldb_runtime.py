"""`async runtime` in lldb-22 on the synthetic target: exact output, live and from a core.

  test_lldb_runtime.py launch     launched under lldb, stopped at `b stop_here`
  test_lldb_runtime.py attach     `process attach -p` to a spinning target (then the CLI --pid)
  test_lldb_runtime.py core       a gcore core (`target create --core`), text and --json, and the
                                  CLI's output on the same core
  test_lldb_runtime.py process    the plugin follows the process: relaunch, a core next to a live
                                  process, back again, and an `expr` that changes memory (stop id)

The expected text is derived from targets/synthetic/fake_coreclr.c: its descriptor names
"0.0.1-synthetic" for x64, has 3 types (Object, FakeObject and GCHeap from the GC sub-descriptor),
9 globals (7 + 2) and 4 contracts. Addresses are checked, not normalised: the module base comes
from /proc/<pid>/maps (or lldb's image list for a launched process) and the descriptors' offsets
from the library's symbol table.
"""
import json
import os
import re
import shutil
import sys

import adactest as t

TARGET = os.path.join(t.SYNTHETIC, "synthetic-target")
FAKE_CORECLR = os.path.join(t.SYNTHETIC, "fake", "libcoreclr.so")


def symbol_offsets():
    """Offsets of the main and GC descriptors in the fake libcoreclr.so (from its symtab)."""
    rc, out, err = t.run(["nm", "--defined-only", FAKE_CORECLR])
    if rc != 0:
        raise SystemExit(f"FAIL: nm {FAKE_CORECLR}: {err}")
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms["DotNetRuntimeContractDescriptor"], syms["gc_descriptor"]


def expected_text(module, base):
    desc, gc = symbol_offsets()
    return (".NET runtime 0.0.1-synthetic (x64)\n"
            f"  module:     {module}\n"
            f"  base:       0x{base:016x}\n"
            f"  descriptor: 0x{base + desc:016x} (version 2, baseline \"empty\", 64-bit)\n"
            f"  sub-descriptor GC: 0x{base + gc:016x}\n"
            "  types:      3\n"
            "  globals:    9\n"
            "  contracts:  4\n"
            "    GC                       c1\n"
            "    LegacyInteger            2\n"
            "    Object                   c1\n"
            "    RuntimeTypeSystem        c1\n")


def expected_json(module, base):
    desc, gc = symbol_offsets()
    return {"schema": 1, "runtime": {
        "module": module, "base": f"0x{base:016x}", "descriptor": f"0x{base + desc:016x}",
        "version": 2, "baseline": "empty", "pointer_size": 8,
        "product_version": "0.0.1-synthetic", "architecture": "x64",
        "contracts": {"GC": "c1", "LegacyInteger": "2", "Object": "c1", "RuntimeTypeSystem": "c1"},
        "types": 3, "globals": 9, "sub_descriptors": ["GC"]}}


def maps_base(pid, basename="libcoreclr.so"):
    """Start of the file-offset-0 mapping of the named library, and its path, from /proc."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.basename(parts[5]) == basename and int(parts[2], 16) == 0:
                return int(parts[0].split("-")[0], 16), parts[5]
    raise SystemExit(f"FAIL: {basename} not mapped in process {pid}")


def sections(out):
    """lldb -b stdout split per echoed command: [(command, output), ...] in order."""
    result = []
    for chunk in re.split(r"^\(lldb\) ", out, flags=re.M)[1:]:
        cmd, _, text = chunk.partition("\n")
        result.append((cmd, text))
    return result


def output_of(out, command, nth=0):
    found = [text for cmd, text in sections(out) if cmd == command]
    if len(found) <= nth:
        t.fail(f"no output section for {command!r} (#{nth}) in:\n{out}")
        return ""
    return found[nth]


def lldb_image_base(out, command, basename="libcoreclr.so"):
    """Header address of a module as lldb's `image list` printed it."""
    for line in output_of(out, command).splitlines():
        m = re.match(r"\[\s*\d+\]\s+\S+\s+0x([0-9a-f]+)\s+(\S+)", line)
        if m and os.path.basename(m.group(2)) == basename:
            return int(m.group(1), 16), m.group(2)
    raise SystemExit(f"FAIL: {basename} not in lldb's image list:\n{out}")


def cli(args):
    """The CLI's output for the same target."""
    rc, out, err = t.run([t.CLI] + args)
    t.check_eq((rc, err), (0, ""), f"asyncdac {' '.join(args)}: exit code and stderr")
    return out


def test_launch():
    rc, out, err = t.lldb([f"file {TARGET}", "b stop_here", "run bp", "async runtime",
                           "async runtime --json", "image list libcoreclr.so"])
    t.check_eq((rc, err), (0, ""), "lldb exit code and stderr")
    base, path = lldb_image_base(out, "image list libcoreclr.so")
    t.check_eq(path, FAKE_CORECLR, "libcoreclr.so path in lldb")
    t.check_eq(output_of(out, "async runtime"), expected_text(FAKE_CORECLR, base), "async runtime (launched)")
    try:
        t.check_eq(json.loads(output_of(out, "async runtime --json")), expected_json(FAKE_CORECLR, base),
                   "async runtime --json (launched)")
    except ValueError as e:
        t.fail(f"async runtime --json is not JSON: {e}")


def test_attach():
    proc, _ = t.start([TARGET, "spin"])
    base, path = maps_base(proc.pid)
    rc, out, err = t.lldb([f"process attach -p {proc.pid}", "async runtime"])
    t.check_eq((rc, err), (0, ""), "lldb exit code and stderr")
    text = output_of(out, "async runtime")
    t.check_eq(text, expected_text(path, base), "async runtime (attached)")
    t.check(t.proc_state(proc.pid) in ("S", "R"), "the process runs on after lldb detached")
    t.check_eq(text, cli(["runtime", "--pid", str(proc.pid)]), "async runtime vs asyncdac runtime --pid")


def make_core(tmp, *args):
    proc, _ = t.start([TARGET, "spin"] + list(args))
    base, path = maps_base(proc.pid)
    core = t.gcore(proc.pid, os.path.join(tmp, "spin.core"))
    proc.kill()
    proc.wait()
    return core, base, path


def test_core(tmp):
    core, base, path = make_core(tmp)
    rc, out, err = t.lldb([f"target create --core {core}", "async runtime", "async runtime --json",
                           "async runtime -j"])
    t.check_eq((rc, err), (0, ""), "lldb exit code and stderr")
    text = output_of(out, "async runtime")
    t.check_eq(text, expected_text(path, base), "async runtime (core)")
    try:
        t.check_eq(json.loads(output_of(out, "async runtime --json")), expected_json(path, base),
                   "async runtime --json (core)")
    except ValueError as e:
        t.fail(f"async runtime --json is not JSON: {e}")
    t.check_eq(output_of(out, "async runtime -j"), output_of(out, "async runtime --json"), "-j is --json")
    t.check_eq(text, cli(["runtime", core]), "async runtime vs asyncdac runtime <core>")
    t.check_eq(output_of(out, "async runtime --json"), cli(["runtime", core, "--json"]),
               "async runtime --json vs the CLI's")


def test_process(tmp):
    core, core_base, core_path = make_core(tmp)
    rc, out, err = t.lldb([
        f"file {TARGET}", "b stop_here", "run bp", "image list libcoreclr.so", "async runtime",
        # A new process in the same target: a stale data target would fail to read.
        "process kill", "run bp", "async runtime",
        # A second target (a core) is selected: its own addresses, not the live process's.
        f"target create --core {core}", "async runtime",
        "target select 0", "async runtime",
        # Running code in the process changes its memory and its stop id: the block cache must
        # be dropped, so the damaged magic is seen (this command fails and ends the batch).
        'expr (void)fake_coreclr_corrupt("badmagic")', "async runtime"])
    live_base, _ = lldb_image_base(out, "image list libcoreclr.so")
    live = expected_text(FAKE_CORECLR, live_base)
    t.check_eq(output_of(out, "async runtime", 0), live, "first process")
    t.check_eq(output_of(out, "async runtime", 1), live, "relaunched process")
    t.check_eq(output_of(out, "async runtime", 2), expected_text(core_path, core_base), "core next to it")
    t.check_eq(output_of(out, "async runtime", 3), live, "back to the live process")
    desc, _ = symbol_offsets()
    t.check_eq((rc, err), (1, f"error: libcoreclr.so: contract descriptor at 0x{live_base + desc:x} has a bad "
                              "magic (want \"DNCCDAC\\0\")\n"), "after expr: exit code and stderr")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "core"
    tmp = t.tmpdir()
    try:
        if mode == "launch":
            test_launch()
        elif mode == "attach":
            test_attach()
        elif mode == "core":
            test_core(tmp)
        elif mode == "process":
            test_process(tmp)
        else:
            raise SystemExit(f"unknown mode {mode}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
