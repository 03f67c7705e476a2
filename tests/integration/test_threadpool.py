"""threadpool: the managed thread pool's threads and queued work items (SOS threadpool -wi), on cores of
  starved   (--mode classic) the pool capped at 2 workers, both blocked in s_block.Wait(); 5 items in the
            global queue (the RuntimeAsyncTask of Waiter and the state machine box of ClassicWaiter, whose
            awaited TaskCompletionSource completed, then 3 Noop callbacks) and 1 in the first worker's local
            queue (Task.Run(LocalWork) from that worker)
  deadlock  a pool worker waiting for a Monitor held by a thread in Task.Wait() on that worker's task
Checked against the oracle (ClrMD through Microsoft's DAC): the worker counts and CPU sample
(ClrThreadPool), each queued item (object, type, queue and the delegate it runs, found as SOS finds them),
the blocked workers (their blocking records) and the threads' stacks (the gate thread, the idle worker);
the line an item resumes at from the source's `// @await` marker and `ps --json`; the deadlock worker's wait
chain from `report`'s blocked threads. `report` has the figures and summary (text and JSON); lldb-22's
`async threadpool --items` prints what the CLI prints.
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
from btsamples import h  # noqa: E402

APP = "AsyncdacSamples.StarvedApp"
GATE = "gate thread: adds workers when the pool starves (not a worker)"


def source_lines(sample):
    with open(os.path.join(t.SOURCE, "targets", "dotnet", sample, "Program.cs")) as f:
        return {m.group(1): i for i, line in enumerate(f, 1) for m in [re.search(r"// @await (\w+)", line)] if m}


def nested(name):
    """ClrMD's name of a generic type nested in a generic type (A<T1>+B<T2>) as asyncdac spells it, the
    type arguments together at the end as reflection lists them (A+B<T1, T2>)."""
    m = re.match(r"^([^<>]*)<([^<>]*)>\+(\w+)<(.*)>$", name)
    return f"{m.group(1)}+{m.group(3)}<{m.group(2)}, {m.group(4)}>" if m else name


def starved(tmp):
    core = b.sample_core("starved", "Debug", tmp, parked=True, mode="classic")
    tp = b.oracle_core_json("threadpool", core)
    j = b.cli_json(["threadpool", core], "threadpool")
    if not t.check(j is not None, "threadpool --json: a document"):
        return
    t.check_eq((j["portable"], j["cpu_utilization"], j["workers"]),
               (tp["portable"], tp["cpu"], {"total": tp["active"] + tp["idle"], "running": tp["active"],
                                            "idle": tp["idle"], "min": tp["min"], "max": tp["max"]}),
               "threadpool --json: portable, cpu_utilization and workers (oracle: ClrThreadPool)")
    t.check_eq(j["workers"], {"total": 2, "running": 2, "idle": 0, "min": 2, "max": 2}, "the sample's capped pool")

    # The items, as the oracle finds them (SOS's way).
    queues = {"Global": "global", "Local": "local"}
    mine = sorted((h(i["object"]), queues.get(i["queue"], i["queue"]), i["type"]) for i in j["items"])
    theirs = sorted((h(i["object"]), i["queue"], nested(b.display(i["type"]))) for i in tp["items"])
    t.check_eq(mine, theirs, "threadpool --json: items (object, queue, type) (oracle)")
    oracle_method = {h(i["object"]): i["method"] for i in tp["items"]}
    ps = b.cli_json(["ps", core], "ps")
    chain = ps["chains"][0] if ps and ps["chains"] else {}
    L = source_lines("starved")
    resumes = f"resumes {APP}.Waiter() at Program.cs:{L['Waiter']}"
    classic = f"resumes {APP}.ClassicWaiter() at Program.cs:{L['ClassicWaiter']}"
    t.check_eq(chain.get("frames", [{}])[0].get("method"), f"{APP}.Waiter()", "ps: the suspended chain")
    works = {}
    for i in j["items"]:
        obj = h(i["object"])
        works[obj] = i["work"]
        if i["type"].startswith("System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<"):
            t.check_eq((obj, i["work"]), (h(chain.get("task", {}).get("address", "0")), resumes),
                       "the queued runtime-async task is the chain's, and resumes it at its await")
            t.check(str(oracle_method.get(obj)).endswith(".DispatchContinuations()"),
                    f"oracle: the task's action is DispatchContinuations ({oracle_method.get(obj)})")
        elif "+AsyncStateMachineBox<" in i["type"]:
            t.check_eq((i["type"].endswith(f"{APP}+<ClassicWaiter>d__9>"), i["work"], oracle_method.get(obj)),
                       (True, classic, None), "the queued state machine box resumes ClassicWaiter (oracle: no delegate)")
        else:
            t.check_eq(i["work"], oracle_method.get(obj), f"item 0x{obj:x}: what it runs (oracle: its delegate)")
    t.check_eq(sorted(works.values()), sorted([f"{APP}.Noop(System.Object)"] * 3 + [f"{APP}.LocalWork()", resumes, classic]),
               "the sample's work items")
    t.check_eq([i["queue"] for i in j["items"]], ["Local", "Global", "Global", "Global", "Global", "Global"],
               "threadpool --json: local queues first, then the global queue")
    t.check_eq(j["summary"], [{"count": 3, "work": f"{APP}.Noop(System.Object)"}, {"count": 1, "work": f"{APP}.LocalWork()"},
                              {"count": 1, "work": classic}, {"count": 1, "work": resumes}], "threadpool --json: summary")

    # The threads: both workers blocked in s_block.Wait() (their blocking records), and the gate thread.
    block = b.oracle_objects(core, tmp, statics=[f"{APP}::s_block"])["statics"].get(f"{APP}::s_block", {})
    wait = f"in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x{h(block.get('address', '0')):016x}"
    pool = sorted(x["os_thread_id"] for x in b.oracle_locks(core)["blocking"] if x["threadpool_worker"])
    threads = j["worker_threads"]
    blocked = sorted(x["tid"] for x in threads if x["waits_on"] == wait and x["doing"] is None and x["then"] == [])
    t.check_eq(blocked, pool, "threadpool --json: the two workers wait in s_block.Wait() (oracle: blocking records)")
    gate = [x["tid"] for x in threads if x["doing"] == GATE]
    t.check_eq(len(gate), 1, f"threadpool --json: one gate thread in {threads}")
    t.check_eq(len(threads), 3, "threadpool --json: the pool's three threads")
    if gate:
        t.check(any(m.startswith("System.Threading.PortableThreadPool+GateThread.GateThreadStart") for m in
                    b.oracle_stack_methods(core, tmp, gate[0])), "oracle: the gate thread's stack")
    local = [i["owner_tid"] for i in j["items"] if i["queue"] == "Local"]
    t.check(len(local) == 1 and local[0] in pool, f"the local item is a blocked worker's ({local}, workers {pool})")

    # The text: SOS's figures, the threads, the summary; --items: SOS's table.
    rc, text, err = b.cli(["threadpool", core, "--items"])
    t.check_eq((rc, err), (0, ""), "threadpool --items: exit code and stderr")
    head = (f"Using the portable thread pool.\n\nCPU utilization:  {tp['cpu']}%\nWorkers Total:    2\n"
            "Workers Running:  2\nWorkers Idle:     0\nWorker Min Limit: 2\nWorker Max Limit: 2\n\nWorker threads:\n")
    t.check(text.startswith(head), f"threadpool: the figures\n{text}")
    for x in threads:
        line = f"thread tid {x['tid']} (managed thread {x['managed_id']}): {x['waits_on'] or x['doing']}"
        t.check(line in text.splitlines(), f"threadpool: {line!r} in\n{text}")
    summary = ("\nQueued work items: 6 (5 global, 1 local)\n     Count  Work item\n"
               f"         3  {APP}.Noop(System.Object)\n         1  {APP}.LocalWork()\n         1  {classic}\n"
               f"         1  {resumes}\n")
    t.check(summary in text, f"threadpool: the summary {summary!r} in\n{text}")
    table = "\n".join(f"{'[Local tid %d]' % i['owner_tid'] if i['queue'] == 'Local' else '[Global]':<17} "
                      f"0x{h(i['object']):016x} {i['type']}\n    => {i['work']}" for i in j["items"])
    t.check(text.endswith("\nQueue             Object             Type\n" + table + "\n"),
            f"threadpool --items: the table\n{table}\nat the end of\n{text}")
    rc, plain, err = b.cli(["threadpool", core])
    t.check_eq(plain, text.split("\nQueue             Object")[0], "threadpool without --items: no table")
    # report: the section "== Thread pool" and its JSON member, the same figures and summary.
    rc, rep, err = b.cli(["report", core])
    t.check_eq((rc, err), (0, ""), "report: exit code and stderr")
    section = rep.split("\n== Thread pool\n")[-1].split("\n\n== ")[0]
    t.check_eq(section, f"2 of 2 workers busy (at most 2), CPU {tp['cpu']}%; 6 work items queued (5 global, 1 local), "
                        "by what they run:" + summary.split("local)")[1].rstrip("\n"), "report: == Thread pool")
    rj = b.cli_json(["report", core], "report")
    t.check_eq(rj and rj.get("thread_pool"), {k: j[k] for k in ("started", "cpu_utilization", "workers", "queued", "summary")},
               "report --json: thread_pool, as threadpool --json's")
    t.check_eq(j["queued"], {"global": 5, "local": 1}, "threadpool --json: queued")
    # A local queue that cannot be read (its m_array patched to an unmapped address in a copy of the
    # core): the others are listed, and a warning says which failed.
    rc, heap, err = b.cli(["dumpheap", core, "--type", "System.Threading.ThreadPoolWorkQueue+WorkStealingQueue", "--json"])
    d = json.loads(heap)["dumpheap"] if rc == 0 else {"statistics": [], "objects": []}
    mts = {s["mt"] for s in d["statistics"] if s["name"] == "System.Threading.ThreadPoolWorkQueue+WorkStealingQueue"}
    queues = [h(o["address"]) for o in d["objects"] if o["mt"] in mts]
    t.check_eq(len(queues), 2, "the two workers' local queues")
    fields = b.oracle_objects(core, tmp, addresses=queues)["objects"]
    cut = os.path.join(tmp, "starved-cut.core")
    shutil.copyfile(core, cut)
    cc = corecore.Core(cut)
    bad = cc.unmapped_address()
    for q in queues:
        arr = h(fields.get(q, {}).get("fields", {}).get("m_array", "0"))
        off = next((k for k in range(8, 40, 8) if arr and cc.read_u64(q + k) == arr), None)
        if t.check(off is not None, f"the m_array slot of local queue 0x{q:x}"):
            cc.write_u64(q + off, bad)
    cj = b.cli_json(["threadpool", cut], "threadpool (local queues cut)") or {}
    t.check_eq(sorted(h(i["object"]) for i in cj.get("items", [])),
               sorted(h(i["object"]) for i in j["items"] if i["queue"] != "Local"),
               "threadpool, local queues unreadable: the global items are listed")
    t.check(len(cj.get("warnings", [])) == 1 and cj["warnings"][0].startswith(
            "the queues were read in part: cannot read the thread pool's local queue 0x"), f"... and why: {cj.get('warnings')}")
    # In LLDB: the same text (the front end passes the command through).
    out = b.run_lldb(b.lldb_target(core), ["async threadpool --items"], "lldb: async threadpool")
    t.check_eq(b.lldb_output(out, "async threadpool --items"), text, "lldb-22: async threadpool --items, as the CLI")


def deadlock(tmp):
    fields = {}
    core = b.sample_core("deadlock", "Debug", tmp, parked=True, fields=fields)
    rc, report, err = b.cli(["report", core])
    t.check_eq((rc, err), (0, ""), "report (deadlock): exit code and stderr")
    section = report.split("\n== Blocked threads\n")[-1].split("\n\n== ")[0].splitlines()
    rc, text, err = b.cli(["threadpool", core])
    t.check_eq((rc, err), (0, ""), "threadpool (deadlock): exit code and stderr")
    workers = text.split("\nWorker threads:\n")[-1].split("\n\n")[0].splitlines()
    pool_id = int(fields["guardpool"])
    # The pool thread that waits for the guard: report's group of it, with its wait chain round the deadlock.
    start = next((k for k, line in enumerate(workers) if f"(managed thread {pool_id}): " in line), None)
    if not t.check(start is not None, f"threadpool: the worker of managed thread {pool_id} in\n{text}"):
        return
    mine = [workers[start]] + [line for line in workers[start + 1:] if line.startswith("  then: ")][:8]
    tid = int(re.match(r"thread tid (\d+) ", mine[0]).group(1))
    k = next((k for k, line in enumerate(section) if f"thread tid {tid} (managed thread {pool_id}, thread-pool worker)"
              in line), None)
    if t.check(k is not None, f"report: thread {tid} among the blocked threads:\n{section}"):
        theirs = [section[k].replace(", thread-pool worker", "")]
        theirs += [line for line in section[k + 1:k + 1 + len(mine) - 1]]
        t.check_eq(mine, theirs, "threadpool: the blocked worker and its wait chain, as report's")
        t.check(mine[-1].endswith("again: a deadlock"), f"the wait chain comes round: {mine}")
    # The idle worker: its stack waits on the pool's semaphore (oracle).
    for line in workers:
        m = re.match(r"thread tid (\d+) \(managed thread \d+\): idle: waiting for work$", line)
        if m:
            methods = b.oracle_stack_methods(core, tmp, int(m.group(1)))
            t.check(any(x.startswith("System.Threading.LowLevelLifoSemaphore.") for x in methods),
                    f"oracle: idle worker {m.group(1)} waits on the pool's semaphore: {methods}")


def main():
    tmp = t.tmpdir()
    try:
        starved(tmp)
        deadlock(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
