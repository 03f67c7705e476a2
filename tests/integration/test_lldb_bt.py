"""The plugin's `bt` override: every form but `bt async` must behave exactly as stock lldb-22.

  test_lldb_bt.py core    on a gcore core of the synthetic target (deterministic)
  test_lldb_bt.py live    launched under lldb and stopped at `b stop_here` (ASLR is off under lldb)

Each form is run twice on the same process state, with and without the plugin loaded; stdout
(less the echo of `plugin load`), stderr and the exit code must be byte-identical. That includes
the forms stock `bt` rejects, whose error text must be LLDB's own.
"""
import os
import re
import shutil
import sys

import adactest as t

TARGET = os.path.join(t.SYNTHETIC, "synthetic-target")

# Forms that work run in one lldb session; each rejected form needs its own (the batch stops).
# (LLDB 22's _regexp-bt passes options to `thread backtrace`, so `bt --extended true` works there.)
GOOD_FORMS = ["bt", "bt 2", "bt all", "bt -c 1", "bt -c 3", "bt 100", "bt   1", "bt --extended true"]
BAD_FORMS = ["bt foo", "bt -c"]


def compare(setup, forms):
    form = " / ".join(forms)
    stock = t.lldb(setup + forms, plugin=False)
    ours = t.lldb(setup + forms, plugin=True)
    t.check_eq(t.without_pids(t.without_plugin_echo(ours[1])), t.without_pids(stock[1]),
               f"{form!r}: stdout with the plugin")
    t.check_eq(ours[2], stock[2], f"{form!r}: stderr with the plugin")
    t.check_eq(ours[0], stock[0], f"{form!r}: exit code with the plugin")
    return stock


def check_bt_async(setup):
    """`bt async` is `async bt`; until that command exists it says so."""
    rc, out, err = t.lldb(["help async"])
    has_async_bt = any(line.split()[:2] == ["bt", "--"] for line in out.splitlines())
    rc, out, err = t.lldb(setup + ["bt async"])
    if has_async_bt:
        rc2, out2, err2 = t.lldb(setup + ["async bt"])
        # A launched target gets a new pid per run: compare with process and thread ids normalised.
        ids = lambda text: re.sub(r"(Process |tid = |pid = )\d+", r"\1N", text)
        t.check_eq((rc, ids(out.replace("(lldb) bt async\n", "(lldb) async bt\n")), err), (rc2, ids(out2), err2),
                   "bt async vs async bt")
    else:
        t.check_eq((rc, err), (1, "error: 'async bt' is not available yet\n"), "bt async before async bt exists")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "core"
    tmp = t.tmpdir()
    try:
        if mode == "core":
            proc, _ = t.start([TARGET, "spin"])
            core = t.gcore(proc.pid, os.path.join(tmp, "spin.core"))
            proc.kill()
            setup = [f"target create --core {core}"]
        elif mode == "live":
            setup = [f"file {TARGET}", "b stop_here", "run bp"]
        else:
            raise SystemExit(f"unknown mode {mode}")
        rc, out, err = compare(setup, GOOD_FORMS)
        t.check(rc == 0 and out.count("frame #0") >= len(GOOD_FORMS), f"every form printed frames (rc {rc}, "
                f"stderr {err!r}):\n{out}")
        for form in BAD_FORMS:
            rc, out, err = compare(setup, [form])
            t.check(rc == 1 and err.startswith("error: "), f"{form!r} is rejected as stock lldb does")
        check_bt_async(setup)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
