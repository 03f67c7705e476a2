"""bt.nested.<config>: scenario 1 (C -> B -> A) on the real .NET 11.0.0 runtime, every front end.

    test_bt_nested.py Debug|Release

Starts targets/dotnet/nested, takes a createdump and a gcore core of it, and runs the oracle
(tests/oracle: ClrMD over Microsoft's DAC) on the createdump core. Then, live (`--pid`, lldb
`process attach -p`) and on both cores (CLI and lldb `target create --core`):
  - `bt --address <task>` prints exactly C -> B -> A: the expected text is built from the oracle
    (task, head Continuation, each frame's DiagnosticIP, method, offset, source line, State) and
    checked against targets/dotnet/nested/expected.json (methods, `@await` lines, state 0);
  - the awaiting line names the TaskCompletionSource's task (NestedApp.s_gate._task, which the
    oracle also reads as the head RuntimeAsyncTaskContinuation's Task field), System.Threading.Tasks.Task<Int32>;
  - `--address <head Continuation>` (no task in the header) and `--address <C's Continuation>`
    (no awaiting line either);
  - `--json`: per frame MethodDesc, DiagnosticIP, code start, offset, IL offset, file, line, token,
    State, Resume equal to the oracle's; the ips array; head, task, awaiting;
  - `bt` over all threads (CLI default; lldb `bt async all`): every thread, the main thread's
    managed frames named, and no async frames and no errors (no chain is running), then the note
    that one async stack is suspended (see `ps`).
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import a16, h  # noqa: E402

GATE = "AsyncdacSamples.NestedApp::s_gate._task"
CHAIN = "AsyncdacSamples.NestedApp::s_chain"


def expected_prefixes(exp):
    """`Namespace.Type.Method` (+ method instantiation) of each frame, from expected.json: shared
    generic code (C<System.__Canon>) is named by the instantiation it runs for (C<System.String>)."""
    chain = exp["chains"][0]
    result = []
    for f in chain["frames"]:
        name = b.display(f["type"]) + "." + f["method"]
        if f.get("generic") and "<" not in f["type"]:  # a generic method, not a method of a generic type
            args = [b.display(v) for v in f["generic"].values()]
            name += "<" + ", ".join(args) + ">"
        result.append(name + "(")
    return result


def main():
    config = sys.argv[1] if len(sys.argv) > 1 else "Debug"
    exp = b.expected("nested")
    tmp = t.tmpdir()
    s = b.sample("nested", config)
    try:
        b.wait_parked(s.pid, s.pid)  # the main thread in Sample.ParkForever
        cd = b.make_core(s.pid, os.path.join(tmp, "nested.createdump"), "createdump")
        gc = b.make_core(s.pid, os.path.join(tmp, "nested.gcore"), "gcore")
        o = b.oracle(cd, tmp)

        # ---- ground truth
        if not t.check_eq(len(o.tasks), 1, "tasks owning a chain (oracle)"):
            t.finish()
        task = next(iter(o.tasks))
        chain = o.chain_of_task(task)
        head = h(chain["head"])
        objs = b.oracle_objects(cd, tmp, [head], [GATE, CHAIN])
        gate = h(objs["statics"][GATE].get("address"))
        t.check_eq(h(objs["statics"][CHAIN].get("address")), task, "the task is NestedApp.s_chain (oracle)")
        head_obj = objs["objects"][head]
        t.check_eq(head_obj.get("type"), exp["chains"][0]["head"], "head continuation type (oracle)")
        t.check_eq(h(head_obj["fields"].get("Task")), gate,
                   "the head RuntimeAsyncTaskContinuation's Task is s_gate.Task (oracle)")
        gate_type = b.display(objs["statics"][GATE].get("type"))
        t.check_eq(gate_type, "System.Threading.Tasks.Task<Int32>", "s_gate.Task's type (oracle)")
        task_type = b.display(o.tasks[task]["type"])
        frames = [b.frame_facts(o, f) for f in o.user_frames(chain)]
        prefixes = expected_prefixes(exp)
        want_lines = [f["await_line"] for f in exp["chains"][0]["frames"]]
        if not t.check_eq(len(frames), 3, "user frames in the oracle's chain"):
            t.finish()
        for f, prefix, line, ef in zip(frames, prefixes, want_lines, exp["chains"][0]["frames"]):
            t.check(f["method"].startswith(prefix), f"oracle frame {f['method']} is {prefix}...")
            t.check_eq(f["line"], line, f"oracle line of {prefix}")
            t.check(f["file"] and f["file"].endswith("/" + ef["source"]), f"oracle file of {prefix}: {f['file']}")
            t.check_eq(f["state"], 0, f"oracle State of {prefix}")

        frame_text = "".join(b.expected_frame_line(i, f) for i, f in enumerate(frames))
        awaiting_line, want_awaiting = b.expected_awaiting(gate, objs["statics"][GATE], "Task")
        t.check_eq(want_awaiting.get("status"), "WaitingForActivation", "s_gate.Task is pending (oracle)")
        want_task = (f"async chain of task {a16(task)} ({task_type}), Continuation {a16(head)}\n"
                     + awaiting_line + frame_text)
        want_head = f"async chain of Continuation {a16(head)}\n" + awaiting_line + frame_text
        c_cont = frames[0]["continuation"]
        want_c = f"async chain of Continuation {a16(c_cont)}\n" + frame_text
        texts = {task: want_task, head: want_head, c_cont: want_c}

        targets = [("live", ["--pid", str(s.pid)], b.lldb_target(pid=s.pid)),
                   ("createdump core", [cd], b.lldb_target(core=cd)),
                   ("gcore core", [gc], b.lldb_target(core=gc))]
        for name, cli_target, lldb_setup in targets:
            # ---- CLI
            for addr, want in texts.items():
                rc, out, err = b.cli(["bt"] + cli_target + ["--address", hex(addr)])
                t.check_eq((rc, err), (0, ""), f"{name}: CLI bt --address {hex(addr)}: exit code and stderr")
                t.check_eq(out, want, f"{name}: CLI bt --address {hex(addr)}")
                t.check_eq(t.normalize(out), t.normalize(want), f"{name}: CLI bt --address {hex(addr)} (addresses normalised)")
            j = b.cli_json(["bt"] + cli_target + ["--address", hex(task)], f"{name}: CLI")
            if j is not None:
                t.check_eq(j.get("threads"), [], f"{name}: CLI --json threads")
                if t.check_eq(len(j.get("chains", [])), 1, f"{name}: CLI --json chains"):
                    b.check_chain_json(j["chains"][0], frames, f"{name}: CLI --json", head=head, task=task,
                                       awaiting=want_awaiting)
            rc, out, err = b.cli(["bt"] + cli_target)
            t.check_eq((rc, err), (0, ""), f"{name}: CLI bt (all threads): exit code and stderr")
            check_all_threads(out, f"{name}: CLI bt (all threads)")

            # ---- LLDB
            cmds = [f"async bt --address {hex(task)}", f"async bt --address {hex(head)}",
                    f"bt async --address {hex(c_cont)}", f"async bt --address {hex(task)} --json", "bt async all"]
            out = b.run_lldb(lldb_setup, cmds, f"{name}: lldb")
            t.check_eq(b.lldb_output(out, cmds[0]), want_task, f"{name}: lldb {cmds[0]}")
            t.check_eq(b.lldb_output(out, cmds[1]), want_head, f"{name}: lldb {cmds[1]}")
            t.check_eq(b.lldb_output(out, cmds[2]), want_c, f"{name}: lldb {cmds[2]}")
            try:
                j = b.document(b.lldb_output(out, cmds[3]), "bt")
                if t.check_eq(len(j.get("chains", [])), 1, f"{name}: lldb --json chains"):
                    b.check_chain_json(j["chains"][0], frames, f"{name}: lldb --json", head=head, task=task,
                                       awaiting=want_awaiting)
            except ValueError as e:
                t.fail(f"{name}: lldb {cmds[3]}: not JSON: {e}")
            check_all_threads(b.lldb_output(out, cmds[4]), f"{name}: lldb bt async all")
        if t.check(os.path.exists(f"/proc/{s.pid}"), "the process survived"):
            t.check(t.proc_state(s.pid) in ("S", "R"), f"the process runs on (state {t.proc_state(s.pid)})")
    finally:
        s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"nested ({config}): live, createdump and gcore cores, CLI and lldb", flush=True)
    t.finish()


def check_all_threads(text, what):
    """Every thread with its frames; the main thread's managed frames named; nothing running, so no
    async frame and no error."""
    threads = b.bt_sections(text)
    if not t.check(len(threads) >= 2, f"{what}: want every thread, got {len(threads)}:\n{text}"):
        return
    extra = [f"{header}: {line}" for header, frames, asyncs, other in threads for line in asyncs + other]
    t.check_eq("\n".join(extra), "", f"{what}: lines after the physical frames")
    t.check(all(frames for _, frames, _, _ in threads), f"{what}: a thread without frames:\n{text}")
    # Nothing runs: bt says where the one pending stack is.
    t.check_eq(text.rstrip("\n").splitlines()[-1],
               "note: no async chain is running on any thread; 1 async stack is suspended: `ps` lists it, "
               "`bt --address <task>` shows one", f"{what}: the note on the pending stack")
    main_frames = "\n".join(threads[0][1])
    for name in ("AsyncdacSamples.Sample.ParkForever()", "AsyncdacSamples.NestedApp.Main(System.String[])"):
        t.check(f"nested.dll`{name} + 0x" in main_frames, f"{what}: thread #1 shows {name}:\n{main_frames}")


main()
