"""ps.completed: `ps --completed` also lists the completed async tasks still on the heap (as SOS
dumpasync --completed), on a createdump core of targets/dotnet/faulted: FaultedApp.s_faulted, the
RuntimeAsyncTask<Int32> of Fail(42), faulted after one await, is the only one (its address and type
from the oracle's statics). Text section and --json "completed"; without --completed neither;
--completed with --stats is a usage error (exit 2).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

FAULTED = "AsyncdacSamples.FaultedApp::s_faulted"
RA_TASK = "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32>"


def main():
    tmp = t.tmpdir()
    try:
        core = b.sample_core("faulted", "Debug", tmp, parked=True)
        st = b.oracle_objects(core, tmp, statics=[FAULTED])["statics"][FAULTED]
        addr = h(st["address"])
        t.check_eq(b.display(st["type"]), RA_TASK, "oracle: s_faulted's type")
        rc, out, err = b.cli(["ps", core, "--completed"])
        t.check_eq((rc, err), (0, ""), "ps --completed: exit code and stderr")
        section = ("Completed async tasks still on the heap (--completed):\n"
                   f"  task 0x{addr:016x} {RA_TASK} [Faulted]\n\n")
        t.check(section in out and out.index(section) < out.index(" chains listed;"),
                f"ps --completed: the section before the summary:\n{section}in\n{out}")
        rc, plain, err = b.cli(["ps", core])
        t.check_eq(plain, out.replace(section, ""), "ps: the same listing without the section")
        j = b.cli_json(["ps", core, "--completed"], "ps --completed --json")
        got = [(h(c["address"]), c["type"], c["status"]) for c in j["completed"]] if j else None
        t.check_eq(got, [(addr, RA_TASK, "Faulted")], "ps --completed --json: completed")
        j = b.cli_json(["ps", core], "ps --json")
        t.check("completed" not in (j or {}), "ps --json: no completed member without --completed")
        rc, out, err = b.cli(["ps", core, "--completed", "--stats"])
        t.check_eq((rc, out, err.strip()), (2, "", "asyncdac: error: --completed applies to the listing, not to --stats"),
                   "ps --completed --stats: a usage error")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
