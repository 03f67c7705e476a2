"""report.crash: `asyncdac report` on a kernel core of targets/dotnet/crash (--mode unhandled): the
sections in order, each exactly what the command it stands for prints of the same core:
  == Findings        "crash: thread #N (tid T): signal SIGABRT" for the signalled thread only
  == Runtime         `runtime`
  == Threads that stopped for a reason   `bt --thread T` (its stop reason, exception, frames)
  == Blocked threads "none": no thread waits on a lock, a Condition or a task (the locks, starved and
                     syncwait samples' tests check the lines)
  == Thread pool     (the threadpool test checks its lines; --json: as `threadpool --json`)
  == Thread stacks, merged where they share frames   `pstacks` (--json: as `pstacks --json`)
  == Async stacks, grouped by what they await   `ps --coalesce`
  == Top frames      `ps --stats`
and on a createdump core of targets/dotnet/mixed (nothing crashed, no cycle): "none: ..." findings
and "none (see `bt` for every thread)"; the same in lldb-22, on that core and attached to the process
before it (LLDB's SIGSTOP, of the attach or for a core that records no signal, is no crash).
--json on both: the same sections as members, each what the command it stands for gives as JSON
(findings [{"kind": "crash", "text": ...}], runtime --json, bt --json's threads, ps --coalesce --json
and ps --stats --json); on mixed, no finding, crashed or blocked thread, or warning.
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

NONE = ("none: no crash, no await cycle, no completed task whose awaiter has not resumed, no object several chains "
        "await, no lock threads wait for\n")
TITLES = ["Findings", "Runtime", "Threads that stopped for a reason", "Blocked threads", "Thread pool",
          "Thread stacks, merged where they share frames", "Async stacks, grouped by what they await", "Top frames"]
POOL = ("started", "cpu_utilization", "workers", "queued", "summary")


def sections(text):
    found, cur = {}, None
    for line in text.splitlines(keepends=True):
        m = re.match(r"== (.*)\n", line)
        if m:
            cur = m.group(1)
            found[cur] = ""
        elif cur is not None:
            found[cur] += line
    return {k: v.rstrip("\n") + "\n" for k, v in found.items()}


def cli_text(args, what):
    rc, out, err = b.cli(args)
    t.check_eq((rc, err), (0, ""), f"{what}: exit code and stderr")
    return out.rstrip("\n") + "\n"


def main():
    d = t.dotnet_env()
    tmp = t.tmpdir()
    try:
        app = os.path.join(d["DN_APPS"], "11", "Debug", "crash", "crash.dll")
        core = tl.kernel_core([d["DN_HOST"], d["DN_RUNTIME11"], app, "--mode", "unhandled"], tmp, timeout=120)
        if core is None:
            print("SKIP: no kernel core")
            t.finish()
        text = cli_text(["report", core], "report (crash)")
        sec = sections(text)
        t.check_eq(list(sec), TITLES, "report (crash): the sections, in order")
        marked = [hd for hd, *_ in b.bt_sections(cli_text(["bt", core], "bt")) if hd.startswith("*")]
        tid = re.search(r"tid = (\d+)", marked[0]).group(1) if marked else "?"
        index = re.search(r"thread #(\d+)", marked[0]).group(1) if marked else "?"
        t.check_eq(sec.get("Findings"), f"crash: thread #{index} (tid {tid}): signal SIGABRT\n", "report (crash): findings")
        t.check_eq(sec.get("Runtime"), cli_text(["runtime", core], "runtime"), "report (crash): runtime")
        bt = re.sub(r"\n\nnote: [^\n]*\n$", "\n", cli_text(["bt", core, "--thread", tid], "bt --thread"))
        t.check_eq(sec.get(TITLES[2]), bt, "report (crash): threads (bt's, without its note on pending stacks)")
        t.check_eq(sec.get(TITLES[3]), "none\n", "report (crash): no blocked thread")
        t.check_eq(sec.get(TITLES[5]), cli_text(["pstacks", core], "pstacks"), "report (crash): the threads' stacks")
        t.check_eq(sec.get(TITLES[6]), cli_text(["ps", core, "--coalesce"], "ps --coalesce"), "report (crash): stacks")
        t.check_eq(sec.get(TITLES[7]), cli_text(["ps", core, "--stats"], "ps --stats"), "report (crash): top frames")
        t.check("awaiting" in sec.get(TITLES[6], ""), f"report (crash): the parked chain is listed:\n{text}")
        # --json: the same sections, each what the command it stands for gives as JSON.
        j = b.cli_json(["report", core], "report --json (crash)") or {}
        t.check_eq(list(j), ["findings", "runtime", "crashed_threads", "blocked_threads", "thread_pool", "thread_stacks",
                            "stacks", "warnings"],
                   "report --json (crash): the members, in order")
        t.check_eq(j.get("findings"), [{"kind": "crash", "text": f"thread #{index} (tid {tid}): signal SIGABRT"}],
                   "report --json (crash): findings")
        t.check_eq(j.get("runtime"), b.cli_json(["runtime", core], "runtime --json"), "report --json (crash): runtime")
        t.check_eq(j.get("crashed_threads"), (b.cli_json(["bt", core, "--thread", tid], "bt --json") or {}).get("threads"),
                   "report --json (crash): crashed_threads, as bt --json's threads")
        t.check_eq((j.get("blocked_threads"), j.get("warnings")), ([], []), "report --json (crash): no blocked thread, no warning")
        pool = b.cli_json(["threadpool", core], "threadpool --json") or {}
        t.check_eq(j.get("thread_pool"), {k: pool.get(k) for k in POOL}, "report --json (crash): thread_pool, as threadpool --json's")
        t.check_eq(j.get("thread_stacks"), b.cli_json(["pstacks", core], "pstacks --json"),
                   "report --json (crash): thread_stacks, as pstacks --json's")
        coalesce = b.cli_json(["ps", core, "--coalesce"], "ps --coalesce --json") or {}
        stats = b.cli_json(["ps", core, "--stats"], "ps --stats --json") or {}
        t.check_eq(j.get("stacks"), dict(coalesce, stats=stats.get("stats")),
                   "report --json (crash): stacks, as ps --coalesce --json's members with ps --stats --json's stats")

        s = b.sample("mixed", "Debug")
        try:
            b.wait_parked(s.pid, s.pid)
            # lldb-22 attached: the attach's SIGSTOP is no crash.
            rc, live, err = t.lldb([f"process attach --pid {s.pid}", "async report", "process detach"])
            mcore = b.make_core(s.pid, os.path.join(tmp, "mixed.core"), "createdump")
        finally:
            s.kill()
        lsec = sections(live.split("(lldb) async report\n", 1)[-1].split("(lldb) process detach")[0])
        t.check_eq((rc, lsec.get("Findings"), lsec.get(TITLES[2])),
                   (0, NONE, "none (see `bt` for every thread)\n"),
                   f"lldb-22 attached (mixed): no crash finding, no thread stopped for a reason:\n{live}{err}")
        sec = sections(cli_text(["report", mcore], "report (mixed)"))
        t.check_eq(list(sec), TITLES, "report (mixed): the sections, in order")
        t.check_eq(sec.get("Findings"), NONE, "report (mixed): findings")
        rc, out, err = t.lldb(["target create --core " + mcore, "async report"])
        lsec = sections(out.split("(lldb) async report\n", 1)[-1])
        t.check_eq((rc, lsec.get("Findings"), lsec.get(TITLES[2])), (0, NONE, "none (see `bt` for every thread)\n"),
                   f"lldb-22 (mixed core): no crash finding (LLDB's SIGSTOP for a core that records no signal):\n{out}{err}")
        t.check_eq(sec.get(TITLES[2]), "none (see `bt` for every thread)\n", "report (mixed): threads")
        t.check_eq(sec.get(TITLES[3]), "none\n", "report (mixed): no blocked thread")
        t.check_eq(sec.get(TITLES[5]), cli_text(["pstacks", mcore], "pstacks"), "report (mixed): the threads' stacks")
        t.check_eq(sec.get(TITLES[6]), cli_text(["ps", mcore, "--coalesce"], "ps --coalesce"), "report (mixed): stacks")
        j = b.cli_json(["report", mcore], "report --json (mixed)") or {}
        t.check_eq((j.get("findings"), j.get("crashed_threads"), j.get("blocked_threads"), j.get("warnings")),
                   ([], [], [], []), "report --json (mixed): no finding, crashed thread, blocked thread or warning")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
