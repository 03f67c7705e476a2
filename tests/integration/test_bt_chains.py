"""bt.shapes.<config>, bt.fanout: `bt --address` on many chains against the oracle.

    test_bt_chains.py shapes Debug|Release   every chain of targets/dotnet/shapes (ValueTask, custom
                                             awaitable, ConfigureAwait(false), await in try/catch/
                                             finally, a loop, generic methods and classes, an async
                                             lambda and local function)
    test_bt_chains.py fanout [Release]       64 of the 10,000 chains of targets/dotnet/fanout, spread
                                             over the heap and covering Alpha, Beta and Gamma

From a createdump core and live (CLI; lldb on the core), for every chosen task the oracle (ClrMD +
Microsoft's DAC) reports: the exact text (header with the task and its type, the awaiting line,
each frame's DiagnosticIP, module, method, offset, source line and State) and the --json frames
(MethodDesc, DiagnosticIP, code start, IL offset, token, ...). The awaiting line is what the head
infrastructure continuation holds per the oracle: RuntimeAsyncTaskContinuation.Task, or
ValueTaskSourceContinuation.Source with its Token; chains whose head is a user frame (a custom
awaiter holds the continuation) have none. Every chain's (method, line) sequence is one of
expected.json's chains.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import a16, h  # noqa: E402

FANOUT_PICK = 64       # the CLI takes at most 64 --address options
LLDB_PICK = 8          # chains also checked through lldb


def expected_shapes(exp):
    """{(method name, line) tuple per chain} from expected.json (method names as `Type.Method`)."""
    result = set()
    for c in exp["chains"]:
        result.add(tuple((f["method"], f["await_line"]) for f in c["frames"]))
    return result


def short_method(m):
    """`Method` of a display name `Namespace.Type.Method<...>(...)`; compiler-generated names kept whole."""
    name = m.split("(", 1)[0]
    if "+<>c" in name:  # lambdas and local functions: expected.json names no method
        return None
    while True:  # drop generic arguments, innermost first
        shorter = re.sub(r"<[^<>]*>", "", name)
        if shorter == name:
            return name.rsplit(".", 1)[-1]
        name = shorter


def main():
    scenario = sys.argv[1] if len(sys.argv) > 1 else "shapes"
    config = sys.argv[2] if len(sys.argv) > 2 else "Release"
    exp = b.expected(scenario)
    tmp = t.tmpdir()
    s = b.sample(scenario, config)
    try:
        core = b.make_core(s.pid, os.path.join(tmp, f"{scenario}.core"))
        o = b.oracle(core, tmp)
        tasks = sorted(o.tasks)
        t.check_eq(len(tasks), sum(c["count"] for c in exp["chains"]), "tasks owning a chain (oracle) vs expected.json")
        if scenario == "fanout":
            step = max(1, len(tasks) // FANOUT_PICK)
            picked = tasks[::step][:FANOUT_PICK]
        else:
            picked = tasks
        chains = {task: o.chain_of_task(task) for task in picked}
        heads = {task: h(c["head"]) for task, c in chains.items()}
        objs = b.oracle_objects(core, tmp, heads.values())["objects"]

        # What each head awaits (per the oracle), then the awaited objects' types.
        awaited = {}
        for task, head in heads.items():
            fields = objs[head].get("fields", {})
            if not h(o.conts[head].get("diagnostic_ip")) and ("Task" in fields or "Source" in fields):
                via = "Task" if "Task" in fields else "Source"
                awaited[task] = (h(fields[via]), via, fields.get("Token") if via == "Source" else None)
        types = b.oracle_objects(core, tmp, {a for a, _, _ in awaited.values()})["objects"]

        shapes = expected_shapes(exp)
        want_text, want_json, frames_of = {}, {}, {}
        for task in picked:
            chain, head = chains[task], heads[task]
            frames = [b.frame_facts(o, f) for f in o.user_frames(chain)]
            frames_of[task] = frames
            seq = tuple((short_method(f["method"]), f["line"]) for f in frames)
            t.check(any(len(e) == len(seq) and all(m is None or m == em for (m, _), (em, _) in zip(seq, e))
                        and [ln for _, ln in seq] == [ln for _, ln in e] for e in shapes),
                    f"chain of task {hex(task)}: {seq} is one of expected.json's chains")
            text = f"async chain of task {a16(task)} ({b.display(o.tasks[task]['type'])}), Continuation {a16(head)}\n"
            aw = None
            if task in awaited:
                obj, via, token = awaited[task]
                line, aw = b.expected_awaiting(obj, types[obj], via, token)
                text += line
            text += "".join(b.expected_frame_line(i, f) for i, f in enumerate(frames))
            want_text[task] = text
            want_json[task] = aw
        kinds = {tuple(f["method"] for f in fr) for fr in frames_of.values()}
        print(f"{scenario} ({config}): {len(picked)} chains, {len(kinds)} distinct method sequences, "
              f"{len(awaited)} with an awaiting line", flush=True)
        if scenario == "fanout":
            t.check_eq(len(kinds), 3, "the picked fanout chains cover Alpha, Beta and Gamma")

        addr_args = sum((["--address", hex(task)] for task in picked), [])
        for name, target in (("core", [core]), ("live", ["--pid", str(s.pid)])):
            rc, out, err = b.cli(["bt"] + target + addr_args)
            t.check_eq((rc, err), (0, ""), f"{name}: CLI bt --address x{len(picked)}: exit code and stderr")
            t.check_eq(out, "\n".join(want_text[task] for task in picked), f"{name}: CLI bt --address x{len(picked)}")
            j = b.cli_json(["bt"] + target + addr_args, f"{name}: CLI")
            if j and t.check_eq(len(j["chains"]), len(picked), f"{name}: CLI --json chains"):
                for task, c in zip(picked, j["chains"]):
                    b.check_chain_json(c, frames_of[task], f"{name}: CLI --json task {hex(task)}", head=heads[task],
                                       task=task, awaiting=want_json[task])

        some = picked if len(picked) <= LLDB_PICK else picked[::len(picked) // LLDB_PICK][:LLDB_PICK]
        cmds = [f"async bt --address {hex(task)}" for task in some]
        out = b.run_lldb(b.lldb_target(core=core), cmds, "core: lldb")
        for task, cmd in zip(some, cmds):
            t.check_eq(b.lldb_output(out, cmd), want_text[task], f"core: lldb {cmd}")
    finally:
        s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
