"""bt.running.<mode>: a chain that is running when the process stops (scenario 5, targets/dotnet/running).

    test_bt_running.py park|sigstop|segv|failfast|throw

RunLeaf, resumed by the runtime-async dispatcher on a thread-pool thread, calls StopHere(mode); the
READY line names that thread (tid=). On that thread asyncdac must print the physical frames, then
the async frames of the chain the thread runs (AsyncDispatcherInfo.t_current -> NextContinuation):
RunMiddle -> RunTop, at the `@await` lines of expected.json, [state 0], each DiagnosticIP equal to the
oracle's (ClrMD + Microsoft's DAC reads the same dispatcher record). The physical frames contain
expected.json's "stack_contains" in order (StopHere, RunLeaf, IL_STUB_AsyncResume,
DispatchContinuations; ParkRunning in mode park), and every frame of managed code the DAC lists
on that thread (`oracle objects --stack`), in order.

  park      live (CLI --pid --thread, lldb attach + `thread select -t` + `bt async`, `async bt
            --json`), then a createdump core (CLI and lldb)
  sigstop   the process stops itself with SIGSTOP: live CLI, a gcore core (CLI and lldb), then lldb
            attached to the stopped process
  segv, failfast, throw
            the process crashes; the runtime writes a full dump (DOTNET_DbgEnableMiniDump=1,
            DOTNET_DbgMiniDumpType=4): CLI and lldb on that core
"""
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

# What LLDB prints for a `thread select` after the stop-event lines (which lldb_output drops): the
# frame's function and its disassembly. LLDB's event thread prints it when it gets to it: before a
# later command's output, after it, or between two of its lines. No line of a JSON document looks
# like these (its lines start with a space, a quote or a bracket).
SELECTION_DISASSEMBLY = re.compile(r"^(?:[^\s\"{}\[\]][^\n`]*`[^\n]*:\n)?(?:(?:->  |    )0x[0-9a-f]+(?: <\+\d+>)?: [^\n]*\n)+",
                                   re.M)

CRASH_MODES = ("segv", "failfast", "throw")
# What the crashed thread's line says (targets/dotnet/running/Program.cs): the signal the runtime
# aborts with, and the exception the runtime recorded as the thread's last thrown object.
CRASH_REASON = {"segv": "signal SIGABRT", "failfast": "signal SIGABRT", "throw": "signal SIGABRT"}
CRASH_EXCEPTION = {
    "segv": "  exception: 0x... System.ExecutionEngineException (unhandled)",
    "failfast": "  exception: 0x... System.ExecutionEngineException (unhandled)",
    "throw": '  exception: 0x... System.InvalidOperationException: "asyncdac running scenario: unhandled exception in a '
             'native callback" (last thrown)',
}


def managed_name(sig):
    """`Namespace.Type.Method` of a frame name (ClrMD's or asyncdac's): generic arguments and the
    parameter list dropped, IL stubs without ClrMD's ILStubClass."""
    name = b.display(sig.split("(", 1)[0]) if "(" in sig else sig
    name = re.sub(r"<[^<>]*>", "", re.sub(r"<[^<>]*>", "", name))  # two levels of generic arguments
    return name.replace("ILStubClass.", "")


def in_order(haystack, needles):
    """True if every needle is a substring of some element of haystack, in order."""
    i = 0
    for n in needles:
        while i < len(haystack) and n not in haystack[i]:
            i += 1
        if i == len(haystack):
            return False
        i += 1
    return True


def subsequence(seq, sub):
    it = iter(seq)
    return all(any(x == y for y in it) for x in sub)


def check_thread_text(text, tid, want_async, stack_contains, dac_stack, what, want_other=()):
    threads = [th for th in b.bt_sections(text) if re.search(r", tid = %d(,|$)" % tid, th[0])]
    if not t.check_eq(len(threads), 1, f"{what}: sections for thread {tid} in\n{text}"):
        return
    header, frames, asyncs, other = threads[0]
    t.check_eq([re.sub(r"0x[0-9a-f]{16} ", "0x... ", l) for l in other], list(want_other),
               f"{what}: other lines (the exception, errors) in thread {tid}")
    t.check(frames, f"{what}: physical frames")
    t.check(text.rstrip("\n").endswith("".join(want_async).rstrip("\n")),
            f"{what}: the async frames come last")
    t.check_eq("\n".join(asyncs) + "\n", "".join(want_async), f"{what}: async frames of thread {tid}")
    t.check(in_order(frames, stack_contains),
            f"{what}: physical frames contain {stack_contains} in order:\n" + "\n".join(frames))
    names = [managed_name(m.group(1)) for m in (re.search(r"\.dll`(.*) \+ 0x", f) for f in frames) if m]
    t.check(subsequence(names, dac_stack),
            f"{what}: every managed frame the DAC lists, in order:\n  DAC:      {dac_stack}\n  asyncdac: {names}")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "park"
    exp = b.expected("running")["running"]
    # Only `park` is sure to be in ParkRunning: with sigstop the thread stops wherever the group stop
    # catches it (in the kill() call or already parked); the crash modes never get there.
    stack_contains = [x for x in exp["stack_contains"] if mode == "park" or x != "RunningApp.ParkRunning"]
    tmp = t.tmpdir()
    core = os.path.join(tmp, f"running-{mode}.core")
    env = None
    if mode in CRASH_MODES:
        env = {"DOTNET_DbgEnableMiniDump": "1", "DOTNET_DbgMiniDumpType": "4", "DOTNET_DbgMiniDumpName": core}
    s = b.sample("running", "Debug", mode=mode, env=env)
    tid = s.tid
    try:
        live = []  # (name, cli target, lldb setup) to check while the process is there
        if mode == "park":
            b.wait_parked(s.pid, tid)
            live.append(("live", ["--pid", str(s.pid)], b.lldb_target(pid=s.pid)))
            b.make_core(s.pid, core, "createdump")
        elif mode == "sigstop":
            t.wait_stopped(s.pid, timeout=30)
            b.make_core(s.pid, core, "gcore")
            live.append(("live (stopped)", ["--pid", str(s.pid)], b.lldb_target(pid=s.pid)))
        elif mode in CRASH_MODES:
            deadline = time.time() + 120
            while s.proc.poll() is None and time.time() < deadline:
                time.sleep(0.1)
            if not t.check(s.proc.poll() is not None, f"--mode {mode} did not end the process"):
                t.finish()
            if not t.check(os.path.exists(core) and os.path.getsize(core) > 0, f"the runtime wrote no dump for {mode}"):
                t.finish()
        else:
            raise SystemExit(f"unknown mode {mode}")

        o = b.oracle(core, tmp)
        th = o.dispatcher_thread(tid)
        if not t.check(th is not None, f"the oracle has no dispatcher record on thread {tid}"):
            t.finish()
        records = [r for r in th["records"] if h(r["next_continuation"])]
        if not t.check_eq(len(records), 1, "dispatcher records with a NextContinuation (oracle)"):
            t.finish()
        rec = records[0]
        frames = [b.frame_facts(o, f) for f in rec["frames"] if h(f.get("diagnostic_ip"))]
        want_frames = exp["dispatcher_frames"]
        t.check_eq([(f["method"], f["line"], f["state"]) for f in frames],
                   [(f"{e['type']}.{e['method']}()", e["await_line"], 0) for e in want_frames],
                   "the oracle's running chain agrees with expected.json")
        want_async = [b.expected_frame_line(i, f) for i, f in enumerate(frames)]
        # The DAC's frames of managed code on that thread (not the runtime's explicit Frames, which
        # can name a method that is not running yet, e.g. one the prestub is compiling).
        stack = b.oracle_objects(core, tmp, stacks=[tid])["stacks"].get(str(tid))
        if not t.check(isinstance(stack, list), f"the oracle's stack of thread {tid}: {stack}"):
            t.finish()
        dac_stack = [managed_name(f["method"]) for f in stack if f["kind"] == "ManagedMethod" and f["method"]]

        targets = live + [("core", [core], b.lldb_target(core=core))]
        for name, target, setup in targets:
            rc, out, err = b.cli(["bt"] + target + ["--thread", str(tid)])
            t.check_eq((rc, err), (0, ""), f"{name}: CLI bt --thread {tid}: exit code and stderr")
            crashed = name == "core" and mode in CRASH_MODES
            want_other = [CRASH_EXCEPTION[mode]] if crashed else []
            check_thread_text(out, tid, want_async, stack_contains, dac_stack, f"{name}: CLI bt --thread", want_other)
            j = b.cli_json(["bt"] + target + ["--thread", str(tid)], f"{name}: CLI")
            if j:
                check_json(j, tid, rec, frames, stack_contains, f"{name}: CLI --json")
            # All threads: the chain only under its thread, no errors anywhere.
            rc, out, err = b.cli(["bt"] + target)
            t.check_eq((rc, err), (0, ""), f"{name}: CLI bt (all threads): exit code and stderr")
            sections = b.bt_sections(out)
            for header, _, asyncs, other in sections:
                mine = re.search(rf", tid = {tid}(,|$)", header) is not None
                t.check_eq(asyncs + [re.sub(r"0x[0-9a-f]{16} ", "0x... ", l) for l in other],
                           ([l.rstrip("\n") for l in want_async] if mine else []) + (want_other if mine else []),
                           f"{name}: CLI bt (all threads): {header}")
                # Only a crashed core's signalled thread says why it stopped.
                want_reason = f", stop reason = {CRASH_REASON[mode]}" if mine and crashed else ""
                t.check_eq(header[header.find(", tid = "):], f", tid = {header.split(', tid = ')[1].split(',')[0]}{want_reason}",
                           f"{name}: CLI bt (all threads): stop reason of {header}")
            # As LLDB marks its selected thread: a crashed core's signalled thread (the one running the
            # chain), else the first one, only.
            marked = [re.search(r"tid = (\d+)", hd).group(1) for hd, *_ in sections if hd.startswith("*")]
            first = re.search(r"tid = (\d+)", sections[0][0]).group(1) if sections else None
            t.check_eq(marked, [str(tid) if crashed else first],
                       f"{name}: CLI bt (all threads): the '*' marks the signalled (or the first) thread only")

            # LLDB, in one session (a live process may move, and LLDB renumber its threads, between
            # two attaches): select the thread by its OS id, bt async; its index from `thread list`.
            cmds = ["thread list", f"thread select -t {tid}", "bt async", "async bt --json", "bt async all"]
            out = b.run_lldb(setup, cmds, f"{name}: lldb")
            index = b.lldb_thread_index(b.lldb_output(out, cmds[0]), tid)
            if not t.check(index is not None, f"{name}: lldb lists no thread with tid {tid}:\n{out}"):
                continue
            check_thread_text(b.lldb_output(out, "bt async"), tid, want_async, stack_contains, dac_stack,
                              f"{name}: lldb bt async (thread #{index} selected)", want_other)
            # The thread line keeps LLDB's stop reason (LLDB's words: "SIGABRT: sent by tkill ...").
            headers = [hd for hd, *_ in b.bt_sections(b.lldb_output(out, "bt async")) if f", tid = {tid}" in hd]
            if crashed:
                t.check(len(headers) == 1 and ", stop reason = SIGABRT" in headers[0],
                        f"{name}: lldb bt async: the thread line says it stopped for SIGABRT: {headers}")
            j = None
            try:
                j = selected_document(out, cmds[3], f"{name}: lldb {cmds[3]}")
                check_json(j, tid, rec, frames, stack_contains, f"{name}: lldb --json")
                t.check_eq(j["threads"][0]["index"] if j.get("threads") else None, index, f"{name}: lldb thread index")
            except ValueError as e:
                t.fail(f"{name}: lldb --json: not JSON: {e}:\n{out}")
            marked = [hd for hd, *_ in b.bt_sections(b.lldb_output(out, "bt async all")) if hd.startswith("*")]
            t.check_eq([re.match(r"\* thread #(\d+)", hd).group(1) for hd in marked], [str(index)],
                       f"{name}: lldb bt async all: '*' marks the selected thread #{index} only")
            if name == "core" and j is not None:
                # A core's thread indexes are stable: --thread <index> names the same thread.
                # (After `thread select`, as above: LLDB's unwinder is better once the plugin has
                # loaded its symbol file, which it does before LLDB's frame commands.)
                cmd = f"async bt --thread {index} --json"
                out = b.run_lldb(setup, [f"thread select -t {tid}", cmd], f"{name}: lldb --thread")
                try:
                    t.check_eq(selected_document(out, cmd, f"{name}: lldb {cmd}"), j,
                               f"{name}: lldb {cmd} equals the selected thread's")
                except ValueError as e:
                    t.fail(f"{name}: lldb {cmd}: not JSON: {e}:\n{out}")
    finally:
        if mode == "sigstop":
            try:
                os.kill(s.pid, 18)  # SIGCONT, so that the kill is not left pending
            except OSError:
                pass
        s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"running ({mode}): thread {tid}", flush=True)
    t.finish()


def selected_document(out, cmd, what):
    """The JSON document cmd printed in an LLDB session that selected a thread before it: LLDB's
    event thread may print the selection's disassembly (its stop-event lines go, lldb_output) into
    a later command's output, anywhere, at most once; without it, the document alone."""
    text = b.lldb_output(out, cmd)
    t.check(len(SELECTION_DISASSEMBLY.findall(text)) <= 1, f"{what}: the selection's print at most once:\n{text}")
    return b.document(SELECTION_DISASSEMBLY.sub("", text).strip(), "bt")


def check_json(j, tid, rec, frames, stack_contains, what):
    threads = j.get("threads", [])
    if not t.check_eq(len(threads), 1, f"{what}: threads"):
        return
    th = threads[0]
    t.check_eq(th.get("tid"), tid, f"{what}: tid")
    t.check_eq(th.get("error"), None, f"{what}: error")
    syms = [f.get("symbol") or "" for f in th.get("frames", [])]
    t.check(in_order(syms, stack_contains), f"{what}: frames contain {stack_contains} in order: {syms}")
    chains = th.get("chains", [])
    if t.check_eq(len(chains), 1, f"{what}: chains"):
        t.check_eq(h(chains[0].get("dispatcher")), h(rec["address"]), f"{what}: dispatcher record")
        b.check_chain_json(chains[0], frames, what, head=rec["next_continuation"],
                           task=h(rec.get("current_task")) or None, awaiting=None)


main()
