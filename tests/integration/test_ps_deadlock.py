"""ps.deadlock: an await cycle printed as one line (view/pending_view.c adac_pending_cycle_text), on a
createdump core of targets/dotnet/deadlock: DeadA awaits s_b (the task of DeadB -> DeadBOuter), DeadB
awaits s_c (DeadC's task), DeadC awaits s_a (DeadA's task); Bystander awaits s_a too, outside the
cycle. Task addresses from the oracle (ClrMD: the statics s_a, s_b, s_c), lines from the source:
  ps           the cycle's stack ends in "  deadlock: <the line>"; --json: chains[].cycle and .deadlock
               on that stack only
  report       the findings are exactly "deadlock: <the line>" (Bystander and DeadC share s_a, but
               the stacks' innermost chain, DeadA, is one: nothing "shared")
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

SRC = os.path.join(t.SOURCE, "targets", "dotnet", "deadlock", "Program.cs")
APP = "AsyncdacSamples.DeadlockApp"


def main():
    tmp = t.tmpdir()
    try:
        core = b.sample_core("deadlock", "Debug", tmp, parked=True)
        names = [f"{APP}::s_{x}" for x in "abc"]
        st = b.oracle_objects(core, tmp, statics=names)["statics"]
        a, bb, c = (f"0x{h(st[n]['address']):016x}" for n in names)
        with open(SRC) as f:
            L = {m.group(1): i for i, line in enumerate(f, 1) for m in [re.search(r"// @await (\w+)", line)] if m}

        def at(m):
            return f"{APP}.{m}() at Program.cs:{L[m]}"
        cycle = (f"{at('DeadA')} awaits task {bb} of {at('DeadB')}, which awaits task {c} of {at('DeadC')}, "
                 f"which awaits task {a} of {at('DeadA')}")

        j = b.cli_json(["ps", core], "ps")
        chains = j["chains"] if j else []
        shapes = sorted(tuple(f["method"].split("(")[0].rsplit(".", 1)[-1] for f in ch["frames"]) for ch in chains)
        t.check_eq(shapes, [("DeadA", "Bystander"), ("DeadA", "DeadC", "DeadB", "DeadBOuter")], "ps: the stacks")
        t.check_eq([(ch["cycle"], ch.get("deadlock")) for ch in sorted(chains, key=lambda ch: len(ch["frames"]))],
                   [(False, None), (True, cycle)], "ps --json: cycle and deadlock")
        rc, out, err = b.cli(["ps", core])
        t.check_eq((rc, err), (0, ""), "ps: exit code and stderr")
        t.check_eq(out.count("deadlock: "), 1, f"ps: one deadlock line:\n{out}")
        t.check(f"[state 0]\n  deadlock: {cycle}\n\n" in out, f"ps: the deadlock line ends its stack:\n{out}")
        rc, out, err = b.cli(["report", core])
        t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
        t.check_eq(out.split("\n\n== Runtime")[0], f"== Findings\ndeadlock: {cycle}", "report: findings")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
