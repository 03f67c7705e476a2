"""bt.address: every object address `ps` prints is accepted by `bt --address`, which shows the same
logical stack as `ps` for it (targets/dotnet/mixed: three stacks where runtime-async chains and
classic state machines await each other, on a createdump core).

For each stack of `ps --json` and each object it names (its task, the awaited object, each
segment's task or box, chain heads and every Continuation link):
  - `bt --address A --json`: "chains" is exactly [that stack] as `ps` has it (its index aside);
  - `bt --address A` (text): that stack's `ps` block, numbered #0;
  - in lldb, `async bt --address <box>` prints the same block as the CLI.
An address no stack holds that is neither a Continuation nor a task gets one exact error line.
`ps` filters on the same core: --mt <a box's MethodTable> lists the stacks holding such a box,
--status (any case), --type and --method ignoring case, an unknown status's exact error.
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402


def objects(stack):
    """Every object address a ps stack names (not code addresses: those are ip2md's)."""
    found = [stack["task"]["address"]] if stack.get("task") else []
    if stack.get("awaiting") and stack["awaiting"].get("object"):
        found.append(stack["awaiting"]["object"])
    for seg in stack["segments"]:
        if seg.get("task"):
            found.append(seg["task"]["address"])
        if seg.get("head"):
            found.append(seg["head"])
        found += seg.get("links", [])
    for f in stack["frames"]:
        if f.get("box"):
            found.append(f["box"])
    return sorted(set(h(a) for a in found if a))


def blocks(text):
    """`ps`/`bt` text: the blocks starting at "chain #N:" lines, numbering dropped."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith("chain #"):
            cur = [re.sub(r"^chain #\d+:", "chain #N:", line)]
            out.append(cur)
        elif cur is not None and line.startswith("  "):
            cur.append(line)
        else:
            cur = None
    return ["\n".join(x) for x in out]


def without_index(stack):
    s = dict(stack)
    s.pop("index", None)
    return s


def main():
    tmp = t.tmpdir()
    core = b.sample_core("mixed", "Debug", tmp, parked=True)
    try:
        ps = b.cli_json(["ps", core], "ps")
        rc, ps_text, err = b.cli(["ps", core])
        t.check_eq((rc, err), (0, ""), "ps: exit code and stderr")
        stacks = ps["chains"]
        texts = blocks(ps_text)
        if not t.check_eq(len(stacks), 3, "ps: three stacks (mixed)") or not t.check_eq(len(texts), 3, "ps text blocks"):
            t.finish()
        tried = 0
        for k, st in enumerate(stacks):
            for a in objects(st):
                tried += 1
                addr = f"0x{a:016x}"
                j = b.cli_json(["bt", core, "--address", addr, "--json"], f"bt --address {addr}")
                if j is not None:
                    t.check_eq([without_index(c) for c in j.get("chains", [])], [without_index(st)],
                               f"bt --address {addr} --json: the stack ps lists it in (#{k})")
                rc, out, err = b.cli(["bt", core, "--address", addr])
                t.check_eq((rc, err), (0, ""), f"bt --address {addr}: exit code and stderr")
                t.check_eq(blocks(out), [texts[k]], f"bt --address {addr}: ps's block #{k}")
        t.check(tried >= 20, f"addresses tried: {tried}")

        # ps's own filters on the same stacks: --mt, --status, case-insensitive --type and --method.
        def listed(args):
            j = b.cli_json(["ps", core] + args, f"ps {' '.join(args)}")
            return [h(c["task"]["address"]) for c in j["chains"]] if j else None

        owners = [h(st["task"]["address"]) for st in stacks]
        for k, st in enumerate(stacks):
            for f in st["frames"]:
                if f.get("box"):
                    want = [owners[i] for i, other in enumerate(stacks)
                            if any(g.get("method_table") == f["method_table"] for g in other["frames"])]
                    t.check_eq(listed(["--mt", f["method_table"]]), want, f"ps --mt {f['method_table']} (a box's)")
        t.check_eq(listed(["--status", "waitingforactivation"]), owners, "ps --status waitingforactivation")
        t.check_eq(listed(["--status", "Faulted"]), [], "ps --status Faulted")
        t.check_eq(listed(["--type", "classic+<classicmiddle>"]), listed(["--type", "Classic+<ClassicMiddle>"]),
                   "ps --type ignores case")
        t.check_eq(listed(["--method", "RALEAF2"]), [owners[2]], "ps --method ignores case")
        rc, out, err = b.cli(["ps", core, "--status", "Stuck"])
        t.check_eq((rc, out, err), (1, "", "asyncdac: error: unknown task status 'Stuck' (want one of Created, "
                                           "WaitingForActivation, WaitingToRun, Running, WaitingForChildrenToComplete, "
                                           "RanToCompletion, Canceled, Faulted)\n"), "ps --status Stuck")

        box = next(f["box"] for f in stacks[0]["frames"] if f.get("box"))
        cmd = f"async bt --address {box}"
        out = b.run_lldb(b.lldb_target(core=core), [cmd], "lldb")
        t.check_eq(blocks(b.lldb_output(out, cmd)), [texts[0]], f"lldb {cmd}: ps's block #0")

        # A string is no chain and in no stack.
        empty = None
        o = b.oracle_objects(core, tmp, statics=["System.String::Empty"])
        empty = h(o["statics"]["System.String::Empty"]["address"]) if o else None
        if empty:
            rc, out, err = b.cli(["bt", core, "--address", hex(empty)])
            t.check_eq((rc, out, err), (1, "", f"asyncdac: error: {hex(empty)} (System.String) is neither a Continuation "
                                               "nor a task whose state object is a Continuation, and no pending async "
                                               "stack holds it (see `ps`)\n"), "bt --address <string>")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
