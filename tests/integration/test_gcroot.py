"""gcroot.roots, gcroot.server: `gcroot <object>` on a createdump core of targets/dotnet/roots (server: run
with DOTNET_gcServer=1, server GC with dynamic heap counts: handle tables per CPU, the heaps' own
finalization queues), each object kept alive by
one kind of root, against the sample's source and the oracle (ClrMD's GC roots over Microsoft's DAC:
strong and pinned handles, each thread's precise stack roots, the finalizer queue):
  - RootsApp.s_gate, a static TaskCompletionSource<int> that WaitGate's pending chain awaits: one root,
    the strong handle holding the runtime's Object[] of statics (on the pinned object heap), then the
    TCS as one of its elements, named by the static field (RootsApp.s_gate) ClrMD says holds it;
    ClrMD reports that handle as a strong root of that array, and the array as the TCS's only referrer;
  - RootsApp.s_chain (WaitGate's task): the same handle and array;
  - RootsLocal, referenced only by a local of Main: one root, a conservative stack slot of the main
    thread holding it directly; its first slot and its number of slots are ClrMD's stack roots of it;
  - RootsStrong (a strong GCHandle) and a byte[64] (a pinned GCHandle): the handle ClrMD reports;
  - the orphan RootsOrphan and its TaskCompletionSource<string>, awaited by a chain nothing references:
    "Found 0 unique roots." (who will complete it: nobody), and ClrMD has no root holding them;
  - the pending chains (`ps`): WaitGate's continuation is kept alive by the statics' handle -> Object[]
    -> s_chain (its task) -> m_stateObject -> Next; WaitOrphan's has no root;
  - RootsValue, the value a ConditionalWeakTable maps the static s_key to: the statics' strong handle ->
    Object[] -> RootsKey -> RootsValue via the dependent handle ClrMD reports with that key and value;
  - RootsFinalizable, garbage with a finalizer the stuck finalizer thread never runs: one root, the
    finalization queue's slot ClrMD reports (FinalizerQueue) holding it;
  - each object's text is the same with the heap's graph built in one part and in four
    (ASYNCDAC_HEAP_PARTS: parts walked at once, put end to end);
  - an address where no object starts fails (exit 1) naming it;
  - a copy of the core whose pinned handles' block ring is broken still finds s_gate's root, with a
    one-line warning naming the bad block;
  - lldb `async gcroot` prints the CLI's text; on the live process (CLI --pid, lldb attached) the
    local's root is the core's.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
from btsamples import h, a16  # noqa: E402


def gcroot(core, addr):
    rc, out, err = b.cli(["gcroot", core, hex(addr)])
    t.check_eq((rc, err), (0, ""), f"gcroot 0x{addr:x}: exit code and stderr")
    # The heap's graph built in one part and in four (ASYNCDAC_HEAP_PARTS, run at once) is the same.
    for parts in ("1", "4"):
        got = t.run([t.CLI, "gcroot", core, hex(addr)], env={"ASYNCDAC_HEAP_PARTS": parts})
        t.check_eq(got, (rc, out, err), f"gcroot 0x{addr:x} in {parts} part(s) of the heap")
    doc = b.cli_json(["gcroot", core, hex(addr)], f"gcroot 0x{addr:x}")
    return out, doc


def one_of_type(core, name):
    """The one object of type AsyncdacSamples.<name> (--type matches substrings: generic types naming it too)."""
    d = b.cli_json(["dumpheap", core, "--type", name], f"dumpheap --type {name}")
    mts = {s["mt"] for s in d["statistics"] if s["name"] == "AsyncdacSamples." + name}
    objs = [h(o["address"]) for o in d["objects"] if o["mt"] in mts]
    t.check_eq(len(objs), 1, f"one {name} on the heap")
    return objs[0] if objs else 0


def main():
    server = sys.argv[1:] == ["server"]
    tmp = t.tmpdir()
    s = b.sample("roots", "Debug", env={"DOTNET_gcServer": "1"} if server else None)
    try:
        b.wait_parked(s.pid, s.pid)
        core = b.make_core(s.pid, os.path.join(tmp, "roots.core"))
        if server:
            gc = b.cli_json(["dumpheap", core, "--segments"], "dumpheap --segments")
            t.check(gc is not None and gc["server"], "server GC")
        local, strong, orphan, value, fin = (one_of_type(core, n) for n in (
            "RootsLocal", "RootsStrong", "RootsOrphan", "RootsValue", "RootsFinalizable"))
        o = b.oracle_objects(core, tmp, addresses=[orphan], roots=True,
                             statics=["AsyncdacSamples.RootsApp::s_gate", "AsyncdacSamples.RootsApp::s_chain",
                                      "AsyncdacSamples.RootsApp::s_key"])
        gate = h(o["statics"]["AsyncdacSamples.RootsApp::s_gate"]["address"])
        chain = h(o["statics"]["AsyncdacSamples.RootsApp::s_chain"]["address"])
        key_static = h(o["statics"]["AsyncdacSamples.RootsApp::s_key"]["address"])
        source = h(o["objects"][orphan]["fields"]["Source"])
        roots = [dict(r, address=h(r["address"]), object=h(r["object"])) for r in o["roots"]]
        handles = {(r["kind"], r["address"], r["object"]) for r in roots if r["kind"].endswith("Handle")}

        def stack_roots(obj):
            """What gcroot must say of the stack slots holding obj: ClrMD's precise stack roots of it (the
            first slot, and how many more), one root of the main thread."""
            slots = sorted(r["address"] for r in roots if r["kind"] == "Stack" and r["object"] == obj)
            t.check(all(r["thread"] == s.pid for r in roots if r["kind"] == "Stack" and r["object"] == obj),
                    f"0x{obj:x}: ClrMD's stack roots are the main thread's")
            return [("stack", s.pid, slots[0], len(slots) - 1, True, [obj])] if slots else []

        def got_stack(doc):
            """The stack slots holding the object itself (a conservative scan may find more that lead to
            it; ClrMD's stack roots are the direct ones)."""
            return [(r["kind"], r["os_thread_id"], h(r["address"]), r["more_slots"], r["conservative"],
                     [h(p["address"]) for p in r["path"]]) for r in (doc["roots"] if doc else [])
                    if r["kind"] in ("stack", "register") and len(r["path"]) == 1]

        # Statics: strong handle -> Object[] -> the object, as one element named by the static field
        # whose value ClrMD says it is (and s_chain's task is also in a slot of Main's frame, as ClrMD
        # says).
        statics_arr = None
        for obj, typ, field in ((gate, "System.Threading.Tasks.TaskCompletionSource<Int32>", "s_gate"),
                                (chain, "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32>", "s_chain")):
            text, doc = gcroot(core, obj)
            t.check_eq(got_stack(doc), stack_roots(obj), f"{typ}: stack roots (ClrMD):\n{text}")
            rs = [r for r in (doc["roots"] if doc else []) if r["kind"] == "handle"]
            t.check_eq(len(rs), 1, f"{typ}: one handle root:\n{text}")
            if not rs:
                continue
            r = rs[0]
            path = [(h(p["address"]), p["type"]) for p in r["path"]]
            t.check_eq(r["handle_type"], "strong", f"{typ}: a strong handle")
            t.check_eq(len(path), 2, f"{typ}: handle -> Object[] -> the object:\n{text}")
            arr = path[0][0]
            statics_arr = statics_arr or (h(r["address"]), arr)
            t.check_eq((h(r["address"]), arr), statics_arr, f"{typ}: the one handle and Object[] of the statics")
            t.check_eq(path, [(arr, "System.Object[]"), (obj, typ)], f"{typ}: the path")
            t.check_eq(r["path"][1]["via"], f"AsyncdacSamples.RootsApp.{field} (static)", f"{typ}: via the static field")
            t.check(("StrongHandle", h(r["address"]), arr) in handles, f"{typ}: ClrMD's strong handle roots hold the array")
            part = (f"HandleTable:\n    {a16(h(r['address']))} (strong handle)\n"
                    f"        -> {a16(arr)} System.Object[]\n        -> {a16(obj)} {typ}, via {r['path'][1]['via']}\n")
            if obj == gate:
                t.check_eq(text, f"{a16(obj)} {typ}\n{part}\nFound 1 unique root.\n", f"{typ}: gcroot text")
            else:
                t.check(part in text and text.endswith("\nFound 2 unique roots.\n"), f"{typ}: gcroot text:\n{text}")
        segs = b.cli_json(["dumpheap", core, "--segments"], "dumpheap --segments")
        kinds = [g["kind"] for g in (segs["segments"] if segs else [])
                 if statics_arr and h(g["start"]) <= statics_arr[1] < h(g["end"])]
        t.check_eq(kinds, ["poh"], "the statics' Object[] is on the pinned object heap")
        rc, text, _ = b.cli(["refs", core, hex(gate)])
        t.check(statics_arr is not None and f"  {a16(statics_arr[1])} System.Object[], [" in text,
                f"refs of s_gate: the statics array:\n{text}")

        # A local: a conservative stack slot of the main thread, as ClrMD's precise stack roots.
        text, doc = gcroot(core, local)
        want = stack_roots(local)
        t.check_eq(len(want), 1, "RootsLocal: ClrMD has stack roots of it")
        t.check_eq(got_stack(doc), want, f"RootsLocal: one stack root:\n{text}")
        t.check_eq([r["kind"] for r in doc["roots"]] if doc else None, ["stack"], "RootsLocal: no other root")
        if want:
            t.check_eq(text, f"{a16(local)} AsyncdacSamples.RootsLocal\nThread {s.pid} (managed 1):\n"
                             f"    stack slot {a16(want[0][2])} (conservative"
                             + (f"; {want[0][3]} more slot{'s' if want[0][3] > 1 else ''} of this thread hold{'' if want[0][3] > 1 else 's'} it"
                                if want[0][3] else "")
                             + f")\n        -> {a16(local)} AsyncdacSamples.RootsLocal\n\nFound 1 unique root.\n",
                       "RootsLocal: gcroot text")

        # GC handles: the one ClrMD reports for each object.
        pinned = [r for r in roots if r["kind"] == "PinnedHandle"]
        arrays = b.oracle_objects(core, tmp, addresses=[r["object"] for r in pinned])["objects"]
        pinned = [r for r in pinned if arrays[r["object"]]["type"] == "System.Byte[]" and arrays[r["object"]]["size"] == 88]
        t.check_eq(len(pinned), 1, "one pinned byte[64] (ClrMD)")
        for obj, kind, what in ((strong, "strong", "RootsStrong"), (pinned[0]["object"] if pinned else 0, "pinned", "byte[64]")):
            text, doc = gcroot(core, obj)
            got = [(r["handle_type"], h(r["address"]), [h(p["address"]) for p in r["path"]])
                   for r in (doc["roots"] if doc else []) if r["kind"] == "handle"]
            want = [(k.replace("Handle", "").lower(), a, [obj]) for k, a, x in sorted(handles) if x == obj]
            t.check_eq(got, want, f"{what}: its handle roots (ClrMD)")
            t.check_eq([g[0] for g in got], [kind], f"{what}: one {kind} handle:\n{text}")

        # Nothing roots the orphan chain's source.
        for obj, typ in ((orphan, "AsyncdacSamples.RootsOrphan"),
                         (source, "System.Threading.Tasks.TaskCompletionSource<System.String>")):
            text, doc = gcroot(core, obj)
            t.check_eq(text, f"{a16(obj)} {typ}\n\nFound 0 unique roots.\n", f"{typ}: no root")
            t.check_eq(doc and doc["roots"], [], f"{typ}: JSON roots")
            t.check(not any(r["object"] == obj for r in roots), f"{typ}: ClrMD has no root holding it")

        # The chains: the continuation WaitGate suspended in is kept by its task, a static; the orphan's by nothing.
        ps = b.cli_json(["ps", core], "ps")
        conts = {st["frames"][0]["method"].split("(")[0].split(".")[-1]: (h(st["task"]["address"]), h(st["frames"][0]["continuation"]))
                 for st in (ps["chains"] if ps else [])}
        t.check_eq(sorted(conts), ["WaitGate", "WaitOrphan"], "ps: the two chains")
        if "WaitGate" in conts and statics_arr:
            task, cont = conts["WaitGate"]
            t.check_eq(task, chain, "WaitGate's task is s_chain")
            text, doc = gcroot(core, cont)
            rs = [r for r in (doc["roots"] if doc else []) if r["kind"] == "handle"]
            t.check_eq([[(h(p["address"]), p["type"], p["via"]) for p in r["path"]] for r in rs],
                       [[(statics_arr[1], "System.Object[]", None),
                         (task, "System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask<Int32>",
                          "AsyncdacSamples.RootsApp.s_chain (static)"),
                         (h(rs[0]["path"][2]["address"]) if rs and len(rs[0]["path"]) > 2 else 0,
                          "System.Runtime.CompilerServices.RuntimeAsyncTaskContinuation", "m_stateObject"),
                         (cont, "System.Runtime.CompilerServices.Continuation", "Next")]],
                       f"WaitGate's continuation: statics -> s_chain -> m_stateObject -> Next:\n{text}")
        if "WaitOrphan" in conts:
            cont = conts["WaitOrphan"][1]
            text, _ = gcroot(core, cont)
            t.check_eq(text, f"{a16(cont)} System.Runtime.CompilerServices.Continuation\n\nFound 0 unique roots.\n",
                       "WaitOrphan's continuation: no root")

        # A dependent handle: the key (a static) keeps the value alive.
        text, doc = gcroot(core, value)
        t.check_eq(got_stack(doc), stack_roots(value), f"RootsValue: stack roots (ClrMD):\n{text}")
        rs = [r for r in (doc["roots"] if doc else []) if r["kind"] == "handle"]
        t.check_eq([(r["handle_type"], h(r["address"]), len(r["path"])) for r in rs],
                   [("strong", statics_arr[0] if statics_arr else 0, 3)], f"RootsValue: the statics' handle:\n{text}")
        if rs and len(rs[0]["path"]) == 3:
            p = rs[0]["path"]
            key = h(p[1]["address"])
            t.check_eq([(h(x["address"]), x["type"]) for x in p],
                       [(statics_arr[1], "System.Object[]"), (key, "AsyncdacSamples.RootsKey"), (value, "AsyncdacSamples.RootsValue")],
                       "RootsValue: Object[] -> RootsKey -> RootsValue")
            t.check_eq((key, p[1]["via"]), (key_static, "AsyncdacSamples.RootsApp.s_key (static)"),
                       "RootsValue: the key is the static s_key (ClrMD)")
            m = re.fullmatch(r"dependent handle (0x[0-9a-f]{16})", p[2]["via"] or "")
            t.check(m is not None, f"RootsValue: via a dependent handle: {p[2]['via']}")
            deps = {(h(d["address"]), h(d["object"]), h(d["dependent"])) for d in o["dependent"]}
            t.check(m is not None and (h(m.group(1)), key, value) in deps,
                    f"RootsValue: ClrMD's dependent handle from the key to the value: {sorted(deps)}")

        # The finalization queue's ready list.
        text, doc = gcroot(core, fin)
        fq = [r["address"] for r in roots if r["kind"] == "FinalizerQueue" and r["object"] == fin]
        t.check_eq(len(fq), 1, "RootsFinalizable: one FinalizerQueue root (ClrMD)")
        t.check_eq(text, f"{a16(fin)} AsyncdacSamples.RootsFinalizable\nFinalizer queue:\n"
                         f"    {a16(fq[0] if fq else 0)} (ready for finalization)\n"
                         f"        -> {a16(fin)} AsyncdacSamples.RootsFinalizable\n\nFound 1 unique root.\n",
                   "RootsFinalizable: gcroot text")

        rc, out, err = b.cli(["gcroot", core, hex(local + 1)])
        t.check_eq((rc, out, err), (1, "", f"asyncdac: error: 0x{local + 1:x} is not the start of a heap object\n"),
                   "gcroot of an address inside an object")

        # Every read can fail: a broken handle segment costs its own handles, not the search.
        if statics_arr and not server:
            seg = statics_arr[0] & ~0xFFFF  # TableSegments are HandleSegmentSize (64 KiB) aligned
            c = corecore.Core(core)
            tail = c.read(seg + 1920, 13)  # TableSegment.RgTail (11.0.0 layout)
            t.check(tail[3] != 0xFF, "the pinned handles have blocks in the statics' segment")
            bad = os.path.join(tmp, "badring.core")
            corecore.patched_copy(core, bad, [(seg + 480 + tail[3], bytes([200]))])  # RgAllocation[tail]
            rc, out, err = b.cli(["gcroot", bad, hex(gate)])
            t.check_eq((rc, err), (0, ""), "broken handle ring: exit code and stderr")
            t.check(f"    {a16(statics_arr[0])} (strong handle)\n" in out, f"broken handle ring: the strong root:\n{out}")
            t.check(out.endswith(f"\nFound 1 unique root.\nwarning: incomplete search: GC handles: handle segment "
                                 f"0x{seg:x}: block 200 out of range\n"), f"broken handle ring: the warning:\n{out}")
            os.unlink(bad)

        cmds = [f"async gcroot {hex(gate)}"]
        lo = b.run_lldb(b.lldb_target(core=core), cmds, "lldb")
        t.check_eq(b.lldb_output(lo, cmds[0]), gcroot(core, gate)[0], "lldb async gcroot: the CLI's text")

        # The live process (still parked as the core shows it): the CLI and lldb find the local's slot.
        want = gcroot(core, local)[0]
        rc, out, err = b.cli(["gcroot", "--pid", str(s.pid), hex(local)])
        t.check_eq((rc, out, err), (0, want, ""), "gcroot --pid: the core's text for RootsLocal")
        cmds = [f"async gcroot {hex(local)}"]
        lo = b.run_lldb(b.lldb_target(pid=s.pid), cmds, "lldb attach")
        t.check_eq(b.lldb_output(lo, cmds[0]), want, "lldb attached: async gcroot of RootsLocal")
    finally:
        s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
