"""lldb.frames.<scenario>.<mode>: asyncdac's frames and threads in LLDB itself (issue 11), through
the real lldb-22 on real .NET 11 samples (targets/dotnet), on createdump cores and live processes.

    test_lldb_frames.py running core|live   the running chain, spliced into its thread's frames
    test_lldb_frames.py nested core|live    a pending chain as a thread (async threads enable)
    test_lldb_frames.py deep core           a 1,000-deep recursion as a thread
    test_lldb_frames.py fanout core         10,000 pending chains as threads
    test_lldb_frames.py segv launch         the running chain's thread stopped in managed code
    test_lldb_frames.py break launch        ... stopped by Debugger.Break, then stepped

What LLDB shows through the plugin's frame provider is checked against what the plugin's own
commands print on the same process (`async bt`, `async ps`, `async frame variable`), and against
the samples' sources and expected.json (await lines, locals):
  - plain `bt` / `thread backtrace`: LLDB's frames, with every managed frame `async bt` names
    named the same method (LLDB's own frames, named from the plugin's symbol file, with their
    source lines and arguments), the resume stub and the dispatch loop, and the async frames
    of the running chain right after the loop's frame at the pcs `async bt` gives them, named by
    LLDB at their await lines (a pending chain's thread, whose methods the symbol file does not
    cover, has the provider's names: module`method + offset at file:line [async]; the file has the
    types of its variables);
  - `frame select`, `up`, `down`, `frame info` on async frames; `frame variable NAME`, `v`, `p`
    give the values `async frame variable` prints: primitives, strings and arrays of primitives
    as LLDB's types; enums, structs and objects with the symbol file's types, from the
    continuation's memory (`v -P 1`, `v -T` expand their fields); arrays of references as their
    elements; an object of another class than its static type as asyncdac's text;
  - pending chains are threads named "async: <innermost method> [<task status>]" whose frames are
    the chain's (`async ps`), selectable like any thread;
  - `bt async` still prints what it printed before;
  - live: after the process ran and was interrupted, the same frames and values (the plugin
    refreshed its runtime and kept the symbol file);
  - stopped in managed code (LLDB launches the sample, which faults in StopHere): the innermost
    frame is managed, so C unwinds it from the registers of the provider's input frames; the
    frames, their lines and the locals are the same as when the thread is parked;
  - stepped (Debugger.Break, then `thread step-inst-over`): no provider is made for a step's stop,
    which LLDB builds while the step's command holds the target (the provider could only pass
    LLDB's frames through, having them all unwound); `bt` after the steps has the async frames,
    and prints that thread alone.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from lldbframes import QUIET, frames_of, raw_section, section, selected_index  # noqa: E402

ASYNC = re.compile(r"^\s*async #(\d+): (0x[0-9a-f]+) (.*) \[state \d+\]$")
PHYS = re.compile(r"^\s*frame #(\d+): (0x[0-9a-f]+) ?(.*)$")


def made_frames(frames):
    """(index, pc, text of the frames asyncdac made): LLDB shows a native frame's arguments as far as
    it has evaluated them, which varies."""
    return [(i, pc, text if "[synthetic]" in text else None) for i, pc, text in frames]


def async_bt(text):
    """(physical [(pc, text)], async [(pc, text)]) of `async bt` for one thread."""
    phys, asyncs = [], []
    for line in text.splitlines():
        m = ASYNC.match(line)
        if m:
            asyncs.append((int(m.group(2), 16), m.group(3)))
            continue
        m = PHYS.match(line)
        if m:
            phys.append((int(m.group(2), 16), m.group(3)))
    return phys, asyncs


def source_line(scenario, text):
    """The 1-based line of the sample's Program.cs that contains text (exactly one)."""
    path = os.path.join(t.SOURCE, "targets", "dotnet", scenario, "Program.cs")
    with open(path) as f:
        hits = [i + 1 for i, line in enumerate(f) if text in line]
    t.check_eq(len(hits), 1, f"{scenario}/Program.cs lines containing {text!r}")
    return hits[0] if hits else None


def lldb(setup, commands, threads=False, timeout=300):
    pre = QUIET + (["async threads enable"] if threads else [])
    rc, out, err = t.lldb(setup + commands, pre=pre, timeout=timeout)
    t.check_eq((rc, b.LLDB_NOISE.sub("", err)), (0, ""), f"lldb {commands[:3]}...: exit code and stderr")
    return out


# ---- the running chain, spliced into its thread's frames ------------------------------------

# Lets the live process run for 0.5 s and stops it again (asynchronous mode, as an IDE does).
RESTOP = ["script lldb.debugger.SetAsync(True)", "process continue", "script import time; time.sleep(0.5)",
          "process interrupt", "script time.sleep(0.5); lldb.debugger.SetAsync(False)"]


def check_later_stop(setup, tid, plain, k):
    """A live process stopped again: the plugin refreshes its runtime (keeping the modules' metadata
    and PDBs), rebuilds the symbol file (the same bytes: LLDB keeps the one it has) and reads the
    process again; the parked thread's frames and the async frame's local come out the same. The
    commands share that runtime: run first at the later stop (`async ps` walks the whole heap), they
    see the process of that stop, and leave nothing that changes the frames LLDB then builds."""
    sel = f"thread select -t {tid}"
    out = lldb(setup, [sel, "async bt", "bt"] + RESTOP +
               [sel, "async ps", "async bt", "async frame select 0", "async frame variable midLocal", "bt",
                f"frame select {k}", "v midLocal", "image list"])
    idx = selected_index(out, sel)
    reason = re.compile(r", stop reason = .*")  # the attach's stop, then the interrupt's
    t.check_eq(reason.sub("", section(out, "async bt", 1)), reason.sub("", section(out, "async bt", 0)),
               "async bt at a later stop: the same")
    t.check_eq(section(out, "async frame variable midLocal"), "(long) midLocal = 909\n",
               "async frame variable midLocal at a later stop")
    t.check_eq(made_frames(frames_of(raw_section(out, "bt", 1), idx)), made_frames(plain),
               "bt at a later stop (process continued and interrupted): the same frames")
    t.check_eq(section(out, "v midLocal"), "(long) midLocal = 909\n", "v midLocal at a later stop")
    t.check_eq(len(re.findall(r"/asyncdac-symbols-\S*/managed", section(out, "image list"))), 1,
               "one symbol file loaded after the later stop")


def check_running(setup, tid, scenario="running", live=False):
    exp = b.expected(scenario)["running"]
    # Threads are selected by id: a live process's threads get other indexes in each session.
    cmds = [f"thread select -t {tid}", "bt", "thread backtrace", "async bt", "bt async"]
    out = lldb(setup, cmds)
    idx = selected_index(out, f"thread select -t {tid}")
    plain = frames_of(raw_section(out, "bt"), idx)
    if not t.check_eq(made_frames(frames_of(raw_section(out, "thread backtrace"), idx)), made_frames(plain),
                      "bt (the plugin's) vs thread backtrace"):
        print(f"thread backtrace as printed:\n{raw_section(out, 'thread backtrace')}", flush=True)
    phys, asyncs = async_bt(section(out, "async bt"))
    t.check_eq(section(out, "bt async"), section(out, "async bt"), "bt async vs async bt")

    # The async frames: after the loop's frame, at the pcs `async bt` gives them. The plugin's symbol
    # file covers their methods (they run on this thread's stack), so LLDB names them itself, at
    # their await lines: module`method at file:line:column.
    async_pcs = {pc for pc, _ in asyncs}
    made = [(pc, text) for _, pc, text in plain if pc in async_pcs]
    t.check_eq([pc for pc, _ in made], [pc for pc, _ in asyncs], "the async frames of bt: pcs vs async bt's")
    for (pc, text), (_, want) in zip(made, asyncs):
        m = re.match(r"\S+`(.+) \+ 0x[0-9a-f]+ at (Program\.cs:\d+)$", want)
        t.check(m and re.match(r"managed`%s at %s:\d+ \[synthetic\]$" % (re.escape(m.group(1)), re.escape(m.group(2))), text),
                f"async frame at 0x{pc:x}: bt says {text!r}, async bt {want!r}")
    t.check_eq([int(m) for m in re.findall(r"at Program\.cs:(\d+)", " ".join(text for _, text in asyncs))],
               [f["await_line"] for f in exp["dispatcher_frames"]], "await lines of the async frames (expected.json)")
    first = next((i for i, (_, pc, _) in enumerate(plain) if pc in async_pcs), None)
    if not t.check(first is not None and first >= 2, f"async frames in bt:\n{raw_section(out, 'bt')}"):
        return
    t.check(re.search(r"`System\.Runtime\.CompilerServices\.AsyncHelpers\+RuntimeAsyncTask<Int32>\.DispatchContinuations\(.*\) \+ \d+$",
                      plain[first - 1][2]), f"the frame before the async frames is the dispatch loop: {plain[first - 1]}")
    t.check(re.search(r"`IL_STUB_AsyncResume\(.*\) \+ \d+$", plain[first - 2][2]),
            f"the frame before the loop is the resume stub: {plain[first - 2]}")

    # The physical frames: LLDB's own (the symbol file names them, their registers give their
    # arguments), in order, each managed one the method `async bt` names (LLDB shows the arguments'
    # names and values where `async bt` shows their types).
    rest = [(pc, text) for _, pc, text in plain if pc not in async_pcs]
    t.check_eq([pc for pc, _ in rest], [pc for pc, _ in phys], "pcs of the physical frames: bt vs async bt")
    for (pc, text), (_, want) in zip(rest, phys):
        if ".dll`" in want:
            name = want.split("`", 1)[1].split("(", 1)[0]
            t.check(text.startswith("managed`" + name + "(") and "[synthetic]" not in text,
                    f"managed frame at 0x{pc:x}: bt says {text!r}, async bt {want!r}")
    lines = {m.group(1): int(m.group(2)) for _, text in rest
             for m in [re.search(r"RunningApp\.(\w+)\(.*at Program\.cs:(\d+)", text)] if m}
    t.check_eq(lines, {"RunLeaf": exp["running_frame"]["line"],
                       "StopHere": source_line(scenario, "ParkRunning();"),
                       "ParkRunning": source_line(scenario, "Thread.Sleep(Timeout.Infinite);")},
               "source lines of the managed frames")

    # frame select / up / down / frame info on the async frames, and their variables.
    k = plain[first][0]
    cmds = [f"thread select -t {tid}", f"frame select {k}", "frame info", "v midLocal", "frame variable midLocal", "up",
            "frame info", "p topLocal", "down", "frame info", "down", "frame info",
            f"async frame select 0", "async frame variable midLocal", "async frame select 1",
            "async frame variable topLocal"]
    out = lldb(setup, cmds)
    line_of = {i: f"frame #{i}: 0x{pc:016x} {text}" for i, pc, text in plain}
    t.check_eq(section(out, f"frame select {k}").splitlines()[0], line_of[k], "frame select: the frame line")
    t.check_eq(section(out, "frame info", 0).strip(), line_of[k], "frame info on the first async frame")
    t.check_eq(section(out, "frame info", 1).strip(), line_of[k + 1], "up: the next async frame")
    t.check_eq(section(out, "frame info", 2).strip(), line_of[k], "down: back")
    t.check_eq(section(out, "frame info", 3).strip(), line_of[k - 1], "down: the dispatch loop")
    t.check_eq(section(out, "v midLocal"), "(long) midLocal = 909\n", "v midLocal")
    t.check_eq(section(out, "frame variable midLocal"), "(long) midLocal = 909\n", "frame variable midLocal")
    t.check_eq(section(out, "async frame variable midLocal"), "(long) midLocal = 909\n", "async frame variable midLocal")
    t.check_eq(section(out, "p topLocal"), '(char16_t[11]) u"top-running"\n', "p topLocal")
    t.check_eq(section(out, "async frame variable topLocal"), '(string) topLocal = "top-running"\n',
               "async frame variable topLocal")
    if live:
        check_later_stop(setup, tid, plain, k)


# ---- stopped in managed code --------------------------------------------------------------------

def check_segv():
    """LLDB launches the running sample in mode segv and stops at the SIGSEGV StopHere raises, on the
    thread that runs the chain: frame 0 is managed code. `bt` must be `async bt`'s frames up to the
    dispatch loop, then the async frames, then the rest; values on the physical and async frames."""
    d = t.dotnet_env()
    app = os.path.join(d["DN_APPS"], "11", "Debug", "running", "running.dll")
    launch = [f"file {d['DN_HOST']}", f"process launch -- {d['DN_RUNTIME11']} {app} --mode segv"]
    after = ["bt", "async bt", "v leafLocal", "frame select 4", "v midLocal", "up", "p topLocal", "kill"]
    rc, out, err = t.lldb(launch, pre=QUIET, on_crash=after, timeout=300)
    t.check_eq((rc, b.LLDB_NOISE.sub("", err)), (0, ""), "lldb: exit code and stderr")
    m = re.search(r"^\* thread #(\d+), name = '[^']*', stop reason = signal SIGSEGV: address not mapped to object "
                  r"\(fault address=0x7ff0dead0000\)$", raw_section(out, "bt"), re.M)
    if not t.check(m, f"bt: the thread stopped by SIGSEGV at 0x7ff0dead0000:\n{out[-3000:]}"):
        return
    plain = frames_of(raw_section(out, "bt"), int(m.group(1)))
    phys, asyncs = async_bt(section(out, "async bt"))
    exp = b.expected("running")["running"]
    fault = source_line("running", "*(int*)unchecked((nint)0x7ff0dead0000L) = leafLocal;")
    want = [(phys[0][0], f"managed`AsyncdacSamples.RunningApp.StopHere(leafLocal=808) at Program.cs:{fault}:21"),
            (phys[1][0], f"managed`AsyncdacSamples.RunningApp.RunLeaf() at Program.cs:{exp['running_frame']['line']}:13"),
            (phys[2][0], "managed`IL_STUB_AsyncResume(System.Object, Byte&) + 57")]
    want += [(pc, "managed`AsyncdacSamples.RunningApp.%s() at Program.cs:%d:13 [synthetic]" % (name, f["await_line"]))
             for (pc, _), name, f in zip(asyncs, ("RunMiddle", "RunTop"), exp["dispatcher_frames"])]
    got = [(pc, text) for _, pc, text in plain]
    t.check_eq(got[:3] + got[4:6], want, "bt: StopHere, RunLeaf, the resume stub, (the loop), the async frames")
    t.check(re.match(r"managed`System\.Runtime\.CompilerServices\.AsyncHelpers\+RuntimeAsyncTask<Int32>\."
                     r"DispatchContinuations\(this=0x[0-9a-f]+\) \+ \d+$", got[3][1] if len(got) > 3 else "")
            and got[3][0] == phys[3][0], f"bt: frame 3 is the dispatch loop at async bt's pc: {got[3:4]}")
    t.check_eq([pc for pc, _ in got[6:]], [pc for pc, _ in phys[4:]], "bt: the frames after the async frames")
    t.check_eq(section(out, "v leafLocal"), "(int) leafLocal = 808\n", "v leafLocal on frame 0")
    t.check_eq(section(out, "v midLocal"), "(long) midLocal = 909\n", "v midLocal on the first async frame")
    t.check_eq(section(out, "p topLocal"), '(char16_t[11]) u"top-running"\n', "p topLocal on the second")


def providers_made(commands, on_crash):
    """How many frame providers the adapter made (its ASYNCDAC_DEBUG trace) in an lldb session."""
    rc, out, err = t.lldb(commands, pre=QUIET, on_crash=on_crash, timeout=300, env={"ASYNCDAC_DEBUG": "1"})
    t.check_eq(rc, 0, f"lldb with ASYNCDAC_DEBUG=1: exit code ({err[-2000:]})")
    return err.count("asyncdac_lldb: provider for ")


def check_break():
    """LLDB launches the running sample in mode break: Debugger.Break stops the chain's thread in
    libcoreclr (SIGTRAP), under StopHere. Three instruction steps make no provider (the same count
    as the launch alone); `bt` then shows the chain's async frames after the dispatch loop."""
    d = t.dotnet_env()
    app = os.path.join(d["DN_APPS"], "11", "Debug", "running", "running.dll")
    launch = [f"file {d['DN_HOST']}", f"process launch -- {d['DN_RUNTIME11']} {app} --mode break"]
    steps = ["thread step-inst-over"] * 3
    t.check_eq(providers_made(launch, steps + ["kill"]), providers_made(launch, ["kill"]),
               "frame providers made: with three steps after the stop, as without them")
    rc, out, err = t.lldb(launch, pre=QUIET, on_crash=steps + ["bt", "frame select 6", "v midLocal", "kill"],
                          timeout=300)
    t.check_eq((rc, b.LLDB_NOISE.sub("", err)), (0, ""), "lldb: exit code and stderr")
    m = re.search(r"^\* thread #(\d+), name = '[^']*', stop reason = instruction step over$", raw_section(out, "bt"), re.M)
    if not t.check(m, f"bt: the stepped thread:\n{out[-3000:]}"):
        return
    # The frames are not remade by dropping the provider (LLDB's event thread then printed every
    # thread's stop, and sometimes crashed): bt prints the stepped thread alone.
    t.check_eq(re.findall(r"^[* ] thread #(\d+)", raw_section(out, "bt"), re.M), [m.group(1)],
               "threads printed by bt after the steps")
    got = [text for _, _, text in frames_of(raw_section(out, "bt"), int(m.group(1)))]
    exp = b.expected("running")["running"]
    brk = source_line("running", "Debugger.Break();")
    want = [r"libcoreclr\.so`.*", r"managed`System\.Diagnostics\.Debugger\.Break\(\) \+ \d+",
            re.escape(f"managed`AsyncdacSamples.RunningApp.StopHere(leafLocal=808) at Program.cs:{brk}:21"),
            re.escape(f"managed`AsyncdacSamples.RunningApp.RunLeaf() at Program.cs:{exp['running_frame']['line']}:13"),
            r"managed`IL_STUB_AsyncResume\(System\.Object, Byte&\) \+ \d+",
            r"managed`System\.Runtime\.CompilerServices\.AsyncHelpers\+RuntimeAsyncTask<Int32>\.DispatchContinuations\(this=0x[0-9a-f]+\) \+ \d+"]
    want += [re.escape("managed`AsyncdacSamples.RunningApp.%s() at Program.cs:%d:13 [synthetic]" % (name, f["await_line"]))
             for name, f in zip(("RunMiddle", "RunTop"), exp["dispatcher_frames"])]
    t.check(len(got) > len(want) and all(re.fullmatch(w, g) for w, g in zip(want, got)),
            f"bt after the steps: {got[:len(want)]}, expected {want}")
    t.check_eq(section(out, "v midLocal"), "(long) midLocal = 909\n", "v midLocal on the first async frame")


# ---- pending chains as threads ----------------------------------------------------------------

# The tid of the thread counting the chains past `async threads enable --max` (2^53 - 1).
MORE_TID = 9007199254740991


def chain_threads(out):
    """{tid: name} of the threads asyncdac added, from `thread list`."""
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^[* ] thread #\d+: tid = (\d+), (?:0x[0-9a-f]+, )?name = '(async: [^']*)'$", out, re.M)}


def ps_chains(text):
    """[[(pc, text)...]...] of `async ps`, one list per chain."""
    chains = []
    for line in text.splitlines():
        if re.match(r"^chain #\d+:", line):
            chains.append([])
        m = ASYNC.match(line)
        if m and chains:
            chains[-1].append((int(m.group(2), 16), m.group(3)))
    return chains


def check_nested(setup):
    exp = b.expected("nested")["chains"][0]
    out = lldb(setup, ["thread list", "async ps"], threads=True)
    threads = chain_threads(section(out, "thread list"))
    want = "async: AsyncdacSamples.NestedApp.C<System.String>(System.String, System.Threading.Tasks.Task<Int32>) " \
           "[WaitingForActivation]"
    t.check_eq(list(threads.values()), [want], "the one pending chain's thread")
    ps = ps_chains(section(out, "async ps"))
    if not threads or not t.check_eq(len(ps), 1, "async ps chains"):
        return
    tid = next(iter(threads))
    frames_vars = {0: ["cInt", "cLong", "cBool", "cChar", "cString", "cColor", "cDouble", "cArray", "cArray[1]",
                       "cPair.Id", "cPayload.Name", "cString[0]", "cPair", "-P 1 cPayload", "cObj"],
                   1: ["bInt", "bLong", "bGeneric", "this", "bPair", "this.Field", "this.Label", "bArray", "bArray[1]",
                       "-T bPair", "-P 1 this", "bObj"],
                   2: ["seed", "aInt", "aString", "aArray", "aArray[2]", "aPair.Count", "aPair.Tag", "aArray[3]",
                       "aPair.Nope", "aPair", "-P 1 holder"]}
    cmds = [f"thread select -t {tid}", "bt", "frame select 1", "frame info", "up", "frame info"]
    for k, names in frames_vars.items():
        cmds.append(f"frame select {k}")
        cmds += [f"v {n}" for n in names if n not in ("aArray[3]", "aPair.Nope")]
    out = lldb(setup, cmds, threads=True)
    plain = frames_of(raw_section(out, "bt"), selected_index(out, f"thread select -t {tid}"))
    t.check_eq([(pc, text) for _, pc, text in plain], [(pc, text + " [async] [synthetic]") for pc, text in ps[0]],
               "the chain thread's frames vs async ps")
    t.check_eq([int(x) for _, _, text in plain for x in re.findall(r"at Program\.cs:(\d+)", text)],
               [f["await_line"] for f in exp["frames"]], "await lines (expected.json)")
    line_of = {i: f"frame #{i}: 0x{pc:016x} {text}" for i, pc, text in plain}
    t.check_eq(section(out, "frame info", 0).strip(), line_of.get(1), "frame select 1")
    t.check_eq(section(out, "frame info", 1).strip(), line_of.get(2), "up")
    want_values = {
        "cInt": "(int) cInt = 7", "cLong": "(long) cLong = 9223372036854775807", "cBool": "(bool) cBool = true",
        "cChar": "(char16_t) cChar = U+00e9 u'é'", "cString": '(char16_t[5]) cString = u"gamma"',
        "cColor": "(AsyncdacSamples.Color) cColor = Red", "cDouble": "(double) cDouble = 1.0E+100",
        # An array of references: its elements, typed from the symbol file (strings: their text).
        "cArray": '(System.String object *[2]) cArray = {\n  [0] = ADDR "x"\n  [1] = ADDR "y"\n}',
        "cArray[1]": '(char16_t[1]) cArray[1] = u"y"', "cPair.Id": "(int) cPair.Id = 33",
        "cPayload.Name": '(char16_t[3]) cPayload.Name = u"p-c"', "cString[0]": "(char16_t) cString[0] = U+0067 u'g'",
        "bInt": "(int) bInt = -200", "bLong": "(long) bLong = -9876543210", "bGeneric": "(int) bGeneric = 77",
        "this.Field": "(int) this.Field = 500", "this.Label": '(char16_t[12]) this.Label = u"holder-label"',
        "bArray": "(long[2]) bArray = ([0] = 10, [1] = 20)", "bArray[1]": "(long) bArray[1] = 20",
        "seed": "(int) seed = 1", "aInt": "(int) aInt = 42", "aString": '(char16_t[5]) aString = u"alpha"',
        "aArray": "(int[3]) aArray = ([0] = 1, [1] = 2, [2] = 3)", "aArray[2]": "(int) aArray[2] = 3",
        "aPair.Count": "(int) aPair.Count = 12",
        "aPair.Tag": '(char16_t[5]) aPair.Tag = u"tag-a"',  # an object field holding a string
        # Structs and objects from the continuation's memory, with the symbol file's types: they
        # expand to their fields (an object whose class is not its static type's keeps its text).
        "cPair": "(AsyncdacSamples.Pair) cPair = (Id = 33, Tag = ADDR, Count = 35)",
        "-P 1 cPayload": '(AsyncdacSamples.Payload) cPayload = ADDR {\n  Value = 3\n  Name = ADDR "p-c"\n}',
        "cObj": '(char16_t[5]) cObj = u"obj-c"',
        "this": "(AsyncdacSamples.Holder<int>) this = ADDR",
        "bPair": "(AsyncdacSamples.Pair) bPair = (Id = 22, Tag = ADDR, Count = 23)",
        "-T bPair": "(AsyncdacSamples.Pair) bPair = {\n  (int) Id = 22\n  (object) Tag = ADDR\n  (int) Count = 23\n}",
        "-P 1 this": '(AsyncdacSamples.Holder<int>) this = ADDR {\n  Field = 500\n  Label = ADDR "holder-label"\n}',
        "bObj": '(char[30]) bObj = "ADDR double 2.5"',
        "aPair": "(AsyncdacSamples.Pair) aPair = (Id = 11, Tag = ADDR, Count = 12)",
        "-P 1 holder": '(AsyncdacSamples.Holder<int>) holder = ADDR {\n  Field = 500\n  Label = ADDR "holder-label"\n}',
    }
    errors = {"aArray[3]": "error: aArray: index 3 is past its end (length 3)",
              "aPair.Nope": "error: aPair: no field named 'Nope'"}
    for k, names in frames_vars.items():
        for n in names:
            if n in errors:
                rc, eout, err = t.lldb(setup + [f"thread select -t {tid}", f"frame select {k}", f"v {n}"],
                                       pre=QUIET + ["async threads enable"])
                t.check_eq((rc, err), (1, errors[n] + "\n"), f"frame {k}: v {n} fails")
                continue
            got = section(out, f"v {n}").rstrip("\n")
            want = re.escape(want_values[n]).replace("ADDR", "0x[0-9a-f]{16}")
            t.check(re.fullmatch(want, got), f"frame {k}: v {n}: {got!r}, expected {want_values[n]!r}")
    # The same values through the plugin's own command, on the same chain (its task: the tid).
    if True:
        addr = hex(tid)
        out = lldb(setup, [f"async frame variable --address {addr} --frame {k} {n}"
                           for k, names in frames_vars.items() for n in names if n in ("cInt", "bLong", "seed")])
        for k, names in frames_vars.items():
            for n in names:
                if n in ("cInt", "bLong", "seed"):
                    got = section(out, f"async frame variable --address {addr} --frame {k} {n}").rstrip("\n")
                    t.check_eq(got.split(" = ", 1)[1], want_values[n].split(" = ", 1)[1],
                               f"async frame variable {n} (frame {k}) vs LLDB's v")


def check_deep(setup):
    out = lldb(setup, ["thread list"], threads=True)
    threads = chain_threads(out)
    t.check_eq(list(threads.values()), ["async: AsyncdacSamples.DeepApp.Recurse(Int32) [WaitingForActivation]"],
               "the deep chain's thread")
    if not threads:
        return
    tid = next(iter(threads))
    cmds = [f"thread select -t {tid}", "thread backtrace"]
    for k in (0, 1, 500, 999):
        cmds += [f"frame select {k}", "v depth", "v marker"]
    cmds += ["down", "v depth", "up", "v depth"]
    out = lldb(setup, cmds, threads=True)
    plain = frames_of(raw_section(out, "thread backtrace"), selected_index(out, f"thread select -t {tid}"))
    t.check_eq(len(plain), 1000, "1000 frames")
    lines = [int(m) for _, _, text in plain for m in re.findall(r"Recurse\(Int32\) \+ 0x[0-9a-f]+ at Program\.cs:(\d+) \[async\]", text)]
    t.check_eq(lines, [27] + [29] * 999, "every frame is Recurse, at the leaf's await line then the inner one")
    t.check_eq(len({pc for _, pc, _ in plain}), 1000, "1000 distinct pcs (LLDB tells frames apart by pc)")
    for n, k in enumerate((0, 1, 500, 999)):
        t.check_eq(section(out, "v depth", n), f"(int) depth = {k}\n", f"frame {k}: depth")
        t.check_eq(section(out, "v marker", n), f"(int) marker = {3 * k + 1}\n", f"frame {k}: marker")
    t.check_eq(section(out, "v depth", 4), "(int) depth = 998\n", "down from 999: depth")
    t.check_eq(section(out, "v depth", 5), "(int) depth = 999\n", "up again: depth")


def check_fanout(setup, core):
    out = lldb(setup, ["thread list"], threads=True, timeout=600)
    names = list(chain_threads(out).values())
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    t.check_eq(counts, {"async: AsyncdacSamples.FanoutApp.AlphaLeaf(Int32, System.Threading.Tasks.Task<Int32>) "
                        "[WaitingForActivation]": 7000,
                        "async: AsyncdacSamples.FanoutApp.BetaLeaf(Int32, System.Threading.Tasks.Task) "
                        "[WaitingForActivation]": 3000},
               "10,000 chain threads by name (the default cap: every one)")
    # Lower caps. Each distinct stack (the task's status and the frames: `ps --json`, whose stacks
    # are the chains here) has a thread first, the first of its chains; then the first chains
    # up to the cap, in the same order. One more thread counts the rest; its one frame says what
    # shows them.
    order = list(chain_threads(out))
    rc, js, err = b.cli(["ps", core, "--json"])
    shape = {int(c["task"]["address"], 16): (c["task"]["status"], tuple((f["method"], f["ip"]) for f in c["frames"]))
             for c in json.loads(js)["ps"]["chains"]} if rc == 0 else {}
    t.check_eq((rc, len(shape), len(set(shape.values()))), (0, 10000, 3), "ps --json: 10,000 chains of 3 stacks")
    pos = {tid: i for i, tid in enumerate(order)}
    first = {}
    for tid, s in shape.items():
        first[s] = min(first.get(s, len(order)), pos.get(tid, len(order)))
    firsts = sorted(first.values())
    for cap, picked, which in ((2500, order[:2500], "2500 are, one of each of the 3 distinct stacks among them"),
                               (3, [order[i] for i in firsts], "3 are, one of each of the 3 distinct stacks among them"),
                               (2, [order[i] for i in firsts[:2]],
                                "2 are, one of each of the first 2 of the 3 distinct stacks")):
        names = chain_threads(out)
        rc, got_out, err = t.lldb(setup + ["thread list", f"thread select -t {MORE_TID}", "thread backtrace", "v x"],
                                  pre=QUIET + [f"async threads enable --max {cap}"], timeout=600)
        t.check_eq(rc, 1, f"lldb with --max {cap}: exit code (v on the note's frame fails)")
        got = list(chain_threads(section(got_out, "thread list")).items())
        want = [(tid, names[tid]) for tid in picked] + [(MORE_TID, f"async: {10000 - cap} more pending chains, not shown as threads")]
        t.check(got == want, f"--max {cap}: {len(got)} chain threads {[g[0] for g in got[:4]]}..., expected "
                             f"{[w[0] for w in want[:4]]}... (first of each stack {firsts})")
        frames = frames_of(raw_section(got_out, "thread backtrace"), selected_index(got_out, f"thread select -t {MORE_TID}"))
        t.check_eq([(pc, text) for _, pc, text in frames],
                   [(None, f"{10000 - cap} more pending chains are not shown as threads: {which} ('async threads enable "
                        "--max <n>' changes that; 'async ps --coalesce' groups every chain) [synthetic] [artificial]")],
                   f"--max {cap}: the counting thread's one frame")
        t.check_eq(b.LLDB_NOISE.sub("", err), "error: asyncdac has no variables for this frame\n",
                   f"--max {cap}: v on the note's frame")
    # --max 0: every chain; a bad value is refused and changes nothing.
    for args, want in (("--max 0", (0, "")),
                       ("--max -3", (1, "error: invalid value '-3' for option --max of 'async threads enable': "
                                        "a number of threads (0: every chain)\n")),
                       ("--max", (1, "error: invalid value '' for option --max of 'async threads enable': "
                                     "a number of threads (0: every chain)\n")),
                       ("--max 5 x", (1, "error: usage: async threads [enable [--max <n>] | disable]\n"))):
        rc, out, err = t.lldb(["async threads enable " + args], pre=QUIET)
        t.check_eq((rc, b.LLDB_NOISE.sub("", err)), want, f"async threads enable {args}")
    # Without an argument: what it does.
    rc, out, err = t.lldb(["async threads", "async threads enable", "async threads", "async threads enable --max 7",
                           "async threads", "async threads enable --max 0",
                           "async threads", "async threads disable", "async threads"], pre=QUIET)
    t.check_eq([section(out, "async threads", n) for n in range(5)],
               ["Pending chains are not shown as threads.\n",
                "Pending chains are shown as threads: at most 10000 of them.\n",
                "Pending chains are shown as threads: at most 7 of them.\n",
                "Pending chains are shown as threads: every one of them.\n",
                "Pending chains are not shown as threads.\n"], "async threads: what it does after each change")


def main():
    scenario, mode = sys.argv[1], sys.argv[2]
    if scenario in ("segv", "break"):
        check_segv() if scenario == "segv" else check_break()
        t.finish()
    tmp = t.tmpdir()
    s = b.sample(scenario, "Debug")
    try:
        if mode == "core":
            core = b.make_core(s.pid, os.path.join(tmp, f"{scenario}.core"))
            s.kill()
            setup = b.lldb_target(core=core)
        else:
            b.wait_parked(s.pid, s.tid) if scenario == "running" else None
            setup = b.lldb_target(pid=s.pid)
        if scenario == "running":
            check_running(setup, s.tid, live=mode == "live")
        elif scenario == "nested":
            check_nested(setup)
        elif scenario == "deep":
            check_deep(setup)
        elif scenario == "fanout":
            check_fanout(setup, core)
        else:
            raise SystemExit(f"unknown scenario {scenario}")
    finally:
        s.kill()
    t.finish()


main()
