"""ps.leaves: what each chain of targets/dotnet/leaves awaits, classified on its awaiting line
(dac/async/awaited.c), on a createdump core, checked against the source and the oracle's view of
each awaited object (ClrMD: type and fields):
  WaitDelay      Task.Delay(600000): "Task.Delay timer 0x<timer>, due 600000 ms after it started"
                 (the timer is DelayPromise._timer, its _dueTime 600000 in the oracle)
  WaitAll        Task.WhenAll of 3, 2 completed: "Task.WhenAll: 2 of 3 done"
  WaitAny        Task.WhenAny of 2 pending tasks: "Task.WhenAny: none done"
  WaitSemaphore  x3: "SemaphoreSlim.WaitAsync waiter"
  WaitGate       a TaskCompletionSource's task: "never completed: a promise, ..."
Text and --json ("what") agree.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402


def main():
    tmp = t.tmpdir()
    core = b.sample_core("leaves", "Debug", tmp, parked=True)
    try:
        j, text = b.ps_json_and_text(core)
        by_method = {}
        for st in j["chains"]:
            leaf = st["frames"][0]["method"].split("(")[0].rsplit(".", 1)[-1]
            by_method.setdefault(leaf, []).append(st)
        t.check_eq(sorted((k, len(v)) for k, v in by_method.items()),
                   [("WaitAll", 1), ("WaitAny", 1), ("WaitDelay", 1), ("WaitGate", 1), ("WaitSemaphore", 3)],
                   "ps: the chains of leaves, by innermost method")
        awaited = sorted({h(st["awaiting"]["object"]) for v in by_method.values() for st in v if st.get("awaiting")})
        objs = b.oracle_objects(core, tmp, addresses=awaited)["objects"]
        timer = h(objs[h(by_method["WaitDelay"][0]["awaiting"]["object"])]["fields"].get("_timer"))
        tobjs = b.oracle_objects(core, tmp, addresses=[timer])["objects"] if timer else {}
        t.check_eq(tobjs.get(timer, {}).get("fields", {}).get("_dueTime"), 600000, "the Delay's timer (oracle)")
        want = {
            "WaitDelay": (r"System\.Threading\.Tasks\.Task\+DelayPromise", f"Task.Delay timer 0x{timer or 0:x}, due 600000 ms after it started"),
            "WaitAll": (r"System\.Threading\.Tasks\.Task\+WhenAllPromise<.*>", "Task.WhenAll: 2 of 3 done"),
            "WaitAny": (r"System\.Threading\.Tasks\.Task\+TwoTaskWhenAnyPromise<.*>", "Task.WhenAny: none done"),
            "WaitSemaphore": (r"System\.Threading\.SemaphoreSlim\+TaskNode", "SemaphoreSlim.WaitAsync waiter"),
            "WaitGate": (r"System\.Threading\.Tasks\.Task<Int32>", b.PROMISE),
        }
        for method, stacks in by_method.items():
            typ, what = want[method]
            for st in stacks:
                aw = st["awaiting"]
                o = objs[h(aw["object"])]
                t.check(re.fullmatch(typ, aw["type"]) is not None and re.fullmatch(typ, b.display(o["type"])) is not None,
                        f"{method}: awaited type {aw['type']} (oracle {o['type']}) is {typ}")
                t.check_eq(aw.get("what"), what, f"{method}: what it awaits (--json)")
                line = f"  awaiting: 0x{h(aw['object']):016x} {aw['type']} [{aw['status']}] ({what})"
                t.check(line in text.splitlines(), f"{method}: awaiting line {line!r} in\n{text}")
        sems = {h(st["awaiting"]["object"]) for st in by_method["WaitSemaphore"]}
        t.check_eq(len(sems), 3, "WaitSemaphore: three distinct waiter nodes")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
