"""bt.corrupt: broken chains in copies of a real core (nested, Debug) end in a marked error frame.

A createdump core of targets/dotnet/nested is copied and patched with tests/lib/corecore.py (bytes
at a virtual address, through the PT_LOAD segments); the continuations, their field offsets
(Continuation.Next, ResumeInfo, State) and the task come from the oracle (ClrMD + Microsoft's DAC) on
the unpatched core. The chain is head -> C -> B -> A. Each case, through the CLI and lldb:
  cycle        B.Next := C                  C, B, then "async #2: error: Next leads back to
                                            Continuation <C>: the chain is a cycle"
  wild-next    B.Next := 0xdeadbeef000      C, B, then an error frame naming 0xdeadbeef000
  resume-info  B.ResumeInfo := unmapped     C, then an error frame: B's ResumeInfo cannot be read
  state        B.State := 7                 C, B [state 7] with a note that State 7 is out of
                                            range, A: the whole chain
  unaligned    B.Next := A + 1              C, B, then an error frame naming A + 1
  not-cont     B.Next := the task           C, B, then an error frame: the task is not a Continuation
The frames before the fault are printed exactly as on the intact core; the exit code is 0 (a
partial chain is a result); --json says how the chain ended ("cycle"/"broken") and why.
And a thread's NT_PRSTATUS pid := 0 (a corrupt note): `bt --all` gives that thread one error frame
("cannot unwind thread 0: its NT_PRSTATUS pid is no thread id") and every other thread exactly as on
the intact core.
"""
import os
import re
import shutil
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
from btsamples import a16, h  # noqa: E402

WILD = 0xDEADBEEF000


def addr_re(a):
    return "0x0*%x" % a


def main():
    tmp = t.tmpdir()
    core = b.sample_core("nested", "Debug", tmp)
    try:
        o = b.oracle(core, tmp)
        task = next(iter(o.tasks))
        task_mt = h(o.tasks[task]["method_table"])
        chain = o.chain_of_task(task)
        head = h(chain["head"])
        frames = [b.frame_facts(o, f) for f in o.user_frames(chain)]
        if not t.check_eq(len(frames), 3, "C -> B -> A in the oracle"):
            t.finish()
        c, bb, a = (f["continuation"] for f in frames)
        off = o.fields
        for name in ("Next", "ResumeInfo", "State"):
            if not t.check(name in off, f"the oracle gives Continuation.{name}'s offset"):
                t.finish()
        objs = b.oracle_objects(core, tmp, [head], ["AsyncdacSamples.NestedApp::s_gate._task"])
        gate = h(objs["objects"][head]["fields"]["Task"])
        awaiting_line, _ = b.expected_awaiting(gate, objs["statics"]["AsyncdacSamples.NestedApp::s_gate._task"], "Task")
        intact = corecore.Core(core)
        t.check_eq(intact.read_u64(bb + off["Next"]), a, "the core holds B.Next = A (corecore agrees with the oracle)")
        t.check_eq(intact.read_u32(bb + off["State"]), 0, "the core holds B.State = 0")
        unmapped = intact.unmapped_address(0xDEAD0000)
        t.check(not intact.mapped(WILD), f"{hex(WILD)} is not in the core")

        header = (f"async chain of task {a16(task)} ({b.display(o.tasks[task]['type'])}), Continuation {a16(head)}\n"
                  + awaiting_line)
        line = [b.expected_frame_line(i, f) for i, f in enumerate(frames)]
        b7 = dict(frames[1], state=7)
        cases = [
            ("cycle", [(bb + off["Next"], struct.pack("<Q", c))], header + line[0] + line[1],
             rf"  async #2: error: Next leads back to Continuation {addr_re(c)}: the chain is a cycle", "cycle", 2),
            ("wild-next", [(bb + off["Next"], struct.pack("<Q", WILD))], header + line[0] + line[1],
             rf"  async #2: error: .*Next of Continuation {addr_re(bb)}: .*cannot read .*{addr_re(WILD)}\b.*", "broken", 2),
            ("resume-info", [(bb + off["ResumeInfo"], struct.pack("<Q", unmapped))], header + line[0],
             rf"  async #1: error: .*Continuation {addr_re(bb)}: ResumeInfo: cannot read .*{addr_re(unmapped)}\b.*",
             "broken", 1),
            ("state", [(bb + off["State"], struct.pack("<I", 7))],
             header + line[0] + b.expected_frame_line(1, b7), r"      note: State 7 is out of range\b.*", "complete", 3),
            ("unaligned", [(bb + off["Next"], struct.pack("<Q", a + 1))], header + line[0] + line[1],
             rf"  async #2: error: .*Next of Continuation {addr_re(bb)}: .*{addr_re(a + 1)}\b.*", "broken", 2),
            ("not-cont", [(bb + off["Next"], struct.pack("<Q", task))], header + line[0] + line[1],
             rf"  async #2: error: .*Next of Continuation {addr_re(bb)}: .*{addr_re(task)} \(MethodTable "
             rf"{addr_re(task_mt)}\) is not a Continuation", "broken", 2),
        ]
        for name, patches, before, fault_re, end, nframes in cases:
            path = os.path.join(tmp, f"{name}.core")
            corecore.patched_copy(core, path, patches)
            rc, out, err = b.cli(["bt", path, "--address", hex(task)])
            t.check_eq((rc, err), (0, ""), f"{name}: CLI exit code and stderr")
            t.check(out.startswith(before), f"{name}: the frames before the fault, exactly:\n--- want\n{before}--- got\n{out}")
            rest = out[len(before):] if out.startswith(before) else ""
            rest_lines = rest.splitlines()
            want_after = {"state": [fault_re, line[2].rstrip("\n")]}.get(name, [fault_re])
            t.check(len(rest_lines) == len(want_after) and all(re.fullmatch(r, l) or r == l
                                                                for r, l in zip(want_after, rest_lines)),
                    f"{name}: after those frames want {want_after}, got {rest_lines}")
            j = b.cli_json(["bt", path, "--address", hex(task)], f"{name}: CLI")
            if j:
                ch = j["chains"][0]
                t.check_eq(ch.get("end"), end, f"{name}: --json end")
                t.check_eq(len(ch.get("frames", [])), nframes, f"{name}: --json frames")
                for i, (g, w) in enumerate(zip(ch.get("frames", []), frames)):
                    if name == "state" and i == 1:
                        t.check_eq(g.get("state"), 7, f"{name}: frame 1 state")
                        t.check(re.match(r"State 7 is out of range\b", g.get("note") or ""),
                                f"{name}: frame 1 note: {g.get('note')!r}")
                        t.check_eq(h(g.get("method_desc")), w["method_desc"], f"{name}: frame 1 MethodDesc")
                    else:
                        b.check_frame_json(g, w, f"{name}: --json frame {i}")
                if end != "complete":
                    msg = fault_re.split("error: ", 1)[1]
                    t.check(re.fullmatch(msg, ch.get("error") or ""), f"{name}: --json error {ch.get('error')!r}")
            lo = b.run_lldb(b.lldb_target(core=path), [f"async bt --address {hex(task)}"], f"{name}: lldb")
            t.check_eq(b.lldb_output(lo, f"async bt --address {hex(task)}"), out, f"{name}: lldb output = CLI output")
            os.unlink(path)

        # A thread's NT_PRSTATUS pid := 0: that thread has one error frame; the others unwind as on
        # the intact core (libdwfl's own core thread walk stopped at such a note, for every thread).
        rc, want, err = b.cli(["bt", core, "--all"])
        t.check_eq((rc, err), (0, ""), "thread-pid: the intact core's bt --all")
        blocks = re.split(r"(?m)^(?=[* ] thread #)", want)
        k = next((i for i in range(2, len(blocks) - 1)
                  if blocks[i].startswith("  thread #") and "async" not in blocks[i]), None)
        if t.check(k is not None, f"thread-pid: a thread without async frames, not the last:\n{want}"):
            off, pid = intact.prstatus_pids()[k - 1]
            t.check(f", tid = {pid}" in blocks[k].splitlines()[0], f"thread-pid: note {k - 1} is {blocks[k].splitlines()[0]!r}")
            path = os.path.join(tmp, "thread-pid.core")
            shutil.copyfile(core, path)
            with open(path, "r+b") as f:
                f.seek(off)
                f.write(struct.pack("<I", 0))
            header = blocks[k].splitlines()[0].replace(f", tid = {pid}", ", tid = 0")
            blocks[k] = (f"{header}\n  frame #0: error: {path}: cannot unwind thread 0: its NT_PRSTATUS pid is no "
                         "thread id\n\n")
            t.check_eq(b.cli(["bt", path, "--all"]), (0, "".join(blocks), ""),
                       "thread-pid: one error frame for that thread, every other thread as on the intact core")
            os.unlink(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
