"""bt.deep: the 1,000-deep chain (targets/dotnet/deep, Release) is complete and in order.

Starts the sample, takes a createdump core, runs the oracle (ClrMD + Microsoft's DAC). Live (CLI
`--pid`, lldb `process attach -p`) and on the core (CLI, lldb):
  - `bt --address <task>` prints all 1,000 user frames (DeepApp.Recurse(Int32)), in chain order,
    with no truncation line: frame 0 at the `@await Recurse.leaf` line [state 0], frames 1..999 at the
    `@await Recurse.inner` line [state 1] (expected.json), each frame's DiagnosticIP, offset, line
    and State equal to the oracle's; the awaiting line names DeepApp.s_gate.Task; `-c 0` is the same;
  - `--json`: the ips array and every frame (MethodDesc, DiagnosticIP, code start, IL offset, ...);
  - `-c 10`: exactly the first 10 frames, then "(shown max number of frames (10), use -c 0 for all)";
  - `--depth N` walks N links of the chain (the head RuntimeAsyncTaskContinuation is one):
    `--depth 5` shows 4 frames and then names the Continuation that follows (the oracle's 6th
    link); `--depth 1000` stops one frame short; `--depth 1001` is complete.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import a16, h  # noqa: E402

GATE = "AsyncdacSamples.DeepApp::s_gate._task"
DEPTH = 1000


def main():
    exp = b.expected("deep")
    tmp = t.tmpdir()
    s = b.sample("deep", "Release")
    try:
        core = b.make_core(s.pid, os.path.join(tmp, "deep.core"))
        o = b.oracle(core, tmp)
        if not t.check_eq(len(o.tasks), 1, "tasks owning a chain (oracle)"):
            t.finish()
        task = next(iter(o.tasks))
        chain = o.chain_of_task(task)
        head = h(chain["head"])
        links = [h(f["address"]) for f in chain["frames"]]  # head first
        frames = [b.frame_facts(o, f) for f in o.user_frames(chain)]
        objs = b.oracle_objects(core, tmp, [head], [GATE])
        gate = h(objs["statics"][GATE].get("address"))
        t.check_eq(h(objs["objects"][head]["fields"].get("Task")), gate, "head Task field is s_gate.Task (oracle)")

        # The oracle agrees with expected.json: 1,000 Recurse frames, the leaf first.
        ef = exp["chains"][0]["frames"]
        want_lines = [ef[0]["await_line"]] * ef[0]["repeat"] + [ef[1]["await_line"]] * ef[1]["repeat"]
        t.check_eq(exp["chains"][0]["total_frames"], DEPTH, "expected.json total_frames")
        t.check_eq(len(frames), DEPTH, "user frames in the oracle's chain")
        t.check_eq([f["line"] for f in frames], want_lines, "oracle source lines, in chain order")
        t.check_eq({f["method"] for f in frames}, {"AsyncdacSamples.DeepApp.Recurse(Int32)"}, "oracle methods")
        t.check_eq([f["state"] for f in frames], [0] + [1] * (DEPTH - 1), "oracle States")

        header = f"async chain of task {a16(task)} ({b.display(o.tasks[task]['type'])}), Continuation {a16(head)}\n"
        awaiting, want_awaiting = b.expected_awaiting(gate, objs["statics"][GATE], "Task")
        t.check_eq(want_awaiting.get("status"), "WaitingForActivation", "s_gate.Task is pending (oracle)")
        lines = [b.expected_frame_line(i, f) for i, f in enumerate(frames)]
        want_full = header + awaiting + "".join(lines)
        want_c10 = header + awaiting + "".join(lines[:10]) + "  (shown max number of frames (10), use -c 0 for all)\n"

        def want_depth(n):
            if n >= len(links):
                return want_full
            return (header + awaiting + "".join(lines[:n - 1])
                    + f"  (stopped at the chain depth limit; Continuation {a16(links[n])} follows)\n")

        cases = [([], want_full), (["-c", "0"], want_full), (["-c", "10"], want_c10),
                 (["--depth", "5"], want_depth(5)), (["--depth", "1000"], want_depth(1000)),
                 (["--depth", "1001"], want_depth(1001))]
        for name, target, setup in (("live", ["--pid", str(s.pid)], b.lldb_target(pid=s.pid)),
                                    ("core", [core], b.lldb_target(core=core))):
            for opts, want in cases:
                args = ["bt"] + target + ["--address", hex(task)] + opts
                rc, out, err = b.cli(args)
                t.check_eq((rc, err), (0, ""), f"{name}: CLI {' '.join(opts)}: exit code and stderr")
                t.check_eq(out, want, f"{name}: CLI bt --address {' '.join(opts)}")
            j = b.cli_json(["bt"] + target + ["--address", hex(task)], f"{name}: CLI")
            if j and t.check_eq(len(j["chains"]), 1, f"{name}: CLI --json chains"):
                b.check_chain_json(j["chains"][0], frames, f"{name}: CLI --json", head=head, task=task,
                                   awaiting=want_awaiting)
            cmds = [f"async bt --address {hex(task)}", f"bt async --address {hex(task)} -c 10",
                    f"async bt --address {hex(task)} --depth 5", f"async bt --address {hex(task)} --json"]
            out = b.run_lldb(setup, cmds, f"{name}: lldb")
            t.check_eq(b.lldb_output(out, cmds[0]), want_full, f"{name}: lldb {cmds[0]}")
            t.check_eq(b.lldb_output(out, cmds[1]), want_c10, f"{name}: lldb {cmds[1]}")
            t.check_eq(b.lldb_output(out, cmds[2]), want_depth(5), f"{name}: lldb {cmds[2]}")
            try:
                j = b.document(b.lldb_output(out, cmds[3]), "bt")
                if t.check_eq(len(j["chains"]), 1, f"{name}: lldb --json chains"):
                    b.check_chain_json(j["chains"][0], frames, f"{name}: lldb --json", head=head, task=task,
                                       awaiting=want_awaiting)
            except ValueError as e:
                t.fail(f"{name}: lldb --json: not JSON: {e}")
    finally:
        s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"deep: {DEPTH} frames, live and createdump core, CLI and lldb", flush=True)
    t.finish()


main()
