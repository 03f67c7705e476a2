"""bt.crash.<mode>: a kernel core of a .NET process that died of SIGABRT on a worker thread
(targets/dotnet/crash; the kernel writes the dumping thread first, with the core's NT_SIGINFO).

    test_bt_crash.py failfast|unhandled

CLI `bt <core>` (text and --json):
  - the '*' marks the signalled thread only, and only its line says why it stopped:
    "stop reason = signal SIGABRT"; it is the only thread running CrashApp.<Worker> (the crasher);
  - under it, the exception the runtime recorded as the thread's last thrown object:
      failfast:  Environment.FailFast records a System.ExecutionEngineException, marked unhandled
                 (its argument, InvalidOperationException "order -7 is negative", is only a local);
      unhandled: InvalidOperationException "order -9 is negative" (Program.cs Validate(-9));
  - --json: the same thread carries "stop_reason" and "exception" {type, message, unhandled}.
"""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import targetlib as tl  # noqa: E402

WORKER = {"failfast": "AsyncdacSamples.CrashApp.FailFastWorker()", "unhandled": "AsyncdacSamples.CrashApp.UnhandledWorker()"}
EXCEPTION = {
    "failfast": ("System.ExecutionEngineException", None, True),
    "unhandled": ("System.InvalidOperationException", "order -9 is negative", False),
}


def exception_line(mode):
    typ, msg, unhandled = EXCEPTION[mode]
    text = typ + (f': "{msg}"' if msg else "")
    return f"  exception: 0x... {text} ({'unhandled' if unhandled else 'last thrown'})"


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "failfast"
    config = "Debug"
    d = t.dotnet_env()
    tmp = t.tmpdir()
    try:
        app = os.path.join(d["DN_APPS"], "11", config, "crash", "crash.dll")
        core = tl.kernel_core([d["DN_HOST"], d["DN_RUNTIME11"], app, "--mode", mode], tmp, timeout=120)
        if core is None:
            print("SKIP: no kernel core")
            t.finish()

        rc, out, err = b.cli(["bt", core])
        t.check_eq((rc, err), (0, ""), "CLI bt: exit code and stderr")
        sections = b.bt_sections(out)
        marked = [s for s in sections if s[0].startswith("* ")]
        if not t.check_eq(len(marked), 1, f"CLI bt: one marked thread in\n{out}"):
            t.finish()
        header, frames, _, other = marked[0]
        tid = re.search(r"tid = (\d+)", header).group(1)
        t.check_eq(re.sub(r"#\d+", "#N", header), f"* thread #N, tid = {tid}, stop reason = signal SIGABRT",
                   "CLI bt: the signalled thread's line")
        t.check_eq([re.sub(r"0x[0-9a-f]{16} ", "0x... ", l) for l in other], [exception_line(mode)],
                   "CLI bt: the signalled thread's exception")
        crashers = [s[0] for s in sections if any(f"crash.dll`{WORKER[mode]}" in f for f in s[1])]
        t.check_eq(crashers, [header], f"CLI bt: the marked thread is the only one running {WORKER[mode]}")
        for hd, _, _, oth in sections:
            if hd is not header:
                t.check("stop reason" not in hd and not oth, f"CLI bt: {hd}: no stop reason, nothing else: {oth}")

        j = b.cli_json(["bt", core], "CLI")
        if j:
            th = [x for x in j["threads"] if str(x["tid"]) == tid]
            if t.check_eq(len(th), 1, f"--json: thread {tid}"):
                typ, msg, unhandled = EXCEPTION[mode]
                exc = dict(th[0].get("exception") or {})
                exc.pop("address", None)
                t.check_eq((th[0].get("stop_reason"), exc),
                           ("signal SIGABRT", {"type": typ, "message": msg, "unhandled": unhandled}),
                           "--json: stop_reason and exception")
            t.check_eq([x["tid"] for x in j["threads"] if "stop_reason" in x or "exception" in x], [int(tid)],
                       "--json: no other thread has a stop reason or an exception")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"crash ({mode}): thread {tid}", flush=True)
    t.finish()


if __name__ == "__main__":
    main()
