"""pe.faulted, dumpobj: a faulted task's exceptions and an exception object, on a createdump core of
targets/dotnet/faulted (FaultedApp.s_faulted = Fail(42), which threw InvalidOperationException
"faulted: order 42 failed" with the ArgumentException "inner: order must be positive" inside), against
the oracle (ClrMD: the exception's type, message, inner exception, HResult and stack trace IPs; the
object's type, MethodTable and size) and the source (the `@throw` lines):
  - `pe <task>`: "Task 0x... <type> [Faulted]: 1 exception", then the exception, then its inner one,
    each with its type, message, inner address, decoded stack trace (the first frame at its
    `@throw` line) and HResult;
  - `pe <exception>` prints the same blocks without the task line;
  - `dumpobj <exception>`: Name, MethodTable, Size equal to the oracle's, and the field lines of
    _message, _innerException and _HResult;
  - lldb `async pe` and `async dumpobj` print what the CLI prints;
  - bad input: `pe` of a string, `dumpobj 0x1`: one exact error line.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

FAULTED = "AsyncdacSamples.FaultedApp::s_faulted"
SOURCE = os.path.join(t.SOURCE, "targets", "dotnet", "faulted", "Program.cs")


def marker_line(marker):
    with open(SOURCE) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith(marker):
                return n
    raise SystemExit(f"FAIL: no '{marker}' in {SOURCE}")


def exception_blocks(text):
    """{address: {label: value, "stack": [frame lines]}} of pe's exception blocks."""
    blocks, cur, in_stack = {}, None, False
    for line in text.splitlines():
        m = re.match(r"Exception object: 0x([0-9a-f]{16})$", line)
        if m:
            cur = blocks.setdefault(int(m.group(1), 16), {"stack": []})
            in_stack = False
        elif cur is None:
            continue
        elif line.startswith("StackTrace (generated):"):
            in_stack = True
        elif in_stack and line.startswith("    "):
            cur["stack"].append(line.strip())
        else:
            in_stack = False
            if ":" in line:
                k, v = line.split(":", 1)
                cur[k] = v.strip()
    return blocks


def main():
    tmp = t.tmpdir()
    s = b.sample("faulted", "Debug")
    try:
        b.wait_parked(s.pid, s.pid)
        core = b.make_core(s.pid, os.path.join(tmp, "faulted.core"), "createdump")
    finally:
        s.kill()
    try:
        objs = b.oracle_objects(core, tmp, statics=[FAULTED, "System.String::Empty"])
        task = h(objs["statics"][FAULTED]["address"])
        empty = h(objs["statics"]["System.String::Empty"]["address"])
        rc, out, err = b.cli(["pe", core, hex(task)])
        t.check_eq((rc, err), (0, ""), "pe <task>: exit code and stderr")
        lines = out.splitlines()
        t.check_eq(lines[0] if lines else None,
                   f"Task 0x{task:016x} System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32> [Faulted]: "
                   "1 exception", "pe <task>: the task line")
        blocks = exception_blocks(out)
        if not t.check_eq(len(blocks), 2, f"pe <task>: two exceptions:\n{out}"):
            t.finish()
        outer, inner = list(blocks)
        o = b.oracle_objects(core, tmp, addresses=[outer, inner])["objects"]
        want = {
            outer: ("System.InvalidOperationException", "faulted: order 42 failed", marker_line("// @throw Fail")),
            inner: ("System.ArgumentException", "inner: order must be positive", marker_line("// @throw Check")),
        }
        for addr, (typ, msg, line) in want.items():
            blk, ox = blocks[addr], o[addr].get("exception", {})
            what = f"pe: exception 0x{addr:x}"
            t.check_eq((blk.get("Exception type"), blk.get("Message")), (typ, f'"{msg}"'), f"{what}: type and message")
            t.check_eq((ox.get("type"), ox.get("message")), (typ, msg), f"{what}: the oracle agrees with the source")
            want_inner = (f"{o[h(ox['inner'])]['type']}, use pe 0x{h(ox['inner']):016x} to see more (below)"
                          if ox.get("inner") else "<none>")
            t.check_eq(blk.get("InnerException"), want_inner, f"{what}: inner exception (oracle)")
            t.check_eq(blk.get("HResult"), format(ox.get("hresult", 0) & 0xFFFFFFFF, "x"), f"{what}: HResult (oracle)")
            ips = [int(f.split()[0], 16) for f in blk["stack"]]
            t.check_eq(ips, [h(f["ip"]) for f in ox.get("stack", [])], f"{what}: stack trace IPs (oracle)")
            t.check(blk["stack"] and blk["stack"][0].endswith(f" at Program.cs:{line}"),
                    f"{what}: the first frame is at the throw (Program.cs:{line}): {blk['stack']}")
        t.check_eq(blocks[inner]["stack"][1:2] and blocks[inner]["stack"][1].split("`")[1].split(" + ")[0],
                   "AsyncdacSamples.FaultedApp.Fail(Int32)", "pe: the inner exception was thrown from Fail's call")

        rc, out2, err = b.cli(["pe", core, hex(outer)])
        t.check_eq((rc, err), (0, ""), "pe <exception>: exit code and stderr")
        t.check_eq(out2, out.split("\n", 2)[2], "pe <exception>: the task's blocks without the task line")

        rc, dump, err = b.cli(["dumpobj", core, hex(outer)])
        t.check_eq((rc, err), (0, ""), "dumpobj: exit code and stderr")
        d = dump.splitlines()
        ob = o[outer]
        t.check_eq(d[:4], [f"Name:        {ob['type']}", f"MethodTable: 0x{h(ob['method_table']):016x}",
                           f"Size:        {ob['size']} (0x{ob['size']:x}) bytes", "Module:      System.Private.CoreLib.dll"],
                   "dumpobj: header (oracle)")
        t.check('  (string) _message = "faulted: order 42 failed"' in d, f"dumpobj: _message:\n{dump}")
        t.check(f"  (System.Exception) _innerException = 0x{inner:016x} System.ArgumentException {{...}}" in d,
                f"dumpobj: _innerException:\n{dump}")
        t.check("  (int) _HResult = -2146233079" in d, f"dumpobj: _HResult:\n{dump}")

        cmds = [f"async pe {hex(task)}", f"async dumpobj {hex(outer)}"]
        lo = b.run_lldb(b.lldb_target(core=core), cmds, "lldb")
        t.check_eq(b.lldb_output(lo, cmds[0]), out, "lldb async pe: the CLI's text")
        t.check_eq(b.lldb_output(lo, cmds[1]), dump, "lldb async dumpobj: the CLI's text")

        for args, msg in ((["pe", core, hex(empty)], f"{hex(empty)} (System.String) is not an exception"),
                          (["dumpobj", core, "0x1"], "0x1 is not an object: 0x1 is not an object address")):
            rc, o2, e2 = b.cli(args)
            t.check_eq((rc, o2, e2), (1, "", f"asyncdac: error: {msg}\n"), f"{args[0]} bad input")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
