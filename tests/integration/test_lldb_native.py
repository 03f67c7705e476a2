"""The plugin loaded for a process it finds no .NET runtime in (~/.lldbinit loads it in every
lldb-22): here the synthetic target linked to a libcoreclr.so without a contract descriptor.

  - Stepping it (`run` to a breakpoint, `thread step-out`, `thread step-over`, `bt`) prints
    exactly what stock lldb-22 prints: stdout (less the echo of `plugin load`), stderr, exit code.
  - No frame provider is made for its threads at any stop (ASYNCDAC_DEBUG=1 traces each one the
    adapter makes, and each stop the OS plugin finds no runtime at): a provider that passes LLDB's
    frames through still has LLDB unwind every frame at every stop of a step (`scripts/bench lldb`
    measures the step).
"""
import os

import adactest as t

NODESC = os.path.join(t.SYNTHETIC, "synthetic-target-nodesc")
COMMANDS = [f"file {NODESC}", "b stop_here", "run bp", "bt", "thread step-out", "thread step-over",
            "thread step-over", "bt"]


def main():
    rc, out, err = t.lldb(COMMANDS, plugin=False)
    rc2, out2, err2 = t.lldb(COMMANDS)
    t.check_eq((rc2, t.without_pids(t.without_plugin_echo(out2)), err2), (rc, t.without_pids(out), err),
               "stepping with the plugin: exit code, stdout and stderr as stock lldb-22")
    t.check("stop_here at synthetic_target.c" in out and "main(argc=2" in out,
            f"the session stopped in stop_here, then stepped into main:\n{out}")

    rc3, _, trace = t.lldb(COMMANDS, env=dict(os.environ, ASYNCDAC_DEBUG="1"))
    t.check_eq(rc3, 0, "stepping with ASYNCDAC_DEBUG=1: exit code")
    lines = [line for line in trace.splitlines() if line.startswith("asyncdac_lldb: ")]
    t.check(any(line.endswith("has no .NET runtime: no provider for its threads") for line in lines),
            f"the OS plugin found no runtime at a stop:\n{trace}")
    t.check_eq([line for line in lines if line.startswith("asyncdac_lldb: provider for")], [],
               "frame providers made for the process's threads")
    t.finish()


if __name__ == "__main__":
    main()
