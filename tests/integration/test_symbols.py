"""integration.symbols: symbol files (ELF + DWARF) of managed code, read by other tools.

    test_symbols.py running   the `running` sample (Debug, RunLeaf on a thread's stack), live and from a
                              createdump core: `asyncdac symbols -o`, then llvm-dwarfdump, eu-addr2line,
                              gdb, lldb-22 (the plugin loads the file by itself) and lldb-dap
    test_symbols.py chains    the `nested` and `shapes` samples' cores: every frame of every chain

What must be shown comes from the sample sources and expected.json (methods, lines, local values)
and from the oracle (tests/oracle: ClrMD over Microsoft's DAC: a thread's managed frames, the chains'
frames with their source lines), never from asyncdac itself.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

DWARFDUMP = "llvm-dwarfdump-22"
SUMMARY = re.compile(r"^(Wrote|Loaded) (\d+) methods? \((\d+) line rows, (\d+) variables, (\d+) types\) (to|from) (\S+) "
                     r"\((\d+) bytes\)\n")


def source_line(rel, pattern):
    """1-based line of the first line of targets/dotnet/<rel> matching pattern."""
    with open(os.path.join(t.SOURCE, "targets", "dotnet", rel)) as f:
        for n, line in enumerate(f, 1):
            if re.search(pattern, line):
                return n
    t.fail(f"no line matching {pattern!r} in {rel}")
    return None


def write_symbols(target_args, path, what, extra=()):
    rc, out, err = b.cli(["symbols"] + target_args + ["-o", path] + list(extra))
    m = SUMMARY.match(out)
    t.check(rc == 0 and err == "" and m and m.group(7) == path, f"{what}: asyncdac symbols: rc {rc}, {out!r}, {err!r}")
    rc, out, err = t.run([DWARFDUMP, "--verify", path])
    t.check(rc == 0 and "No errors." in out and "warning" not in out.lower(),
            f"{what}: llvm-dwarfdump --verify {path}: rc {rc}\n{out[-3000:]}{err}")
    return m


def lookup(path, addr):
    """(subprogram name, file, line) llvm-dwarfdump finds at addr."""
    rc, out, err = t.run([DWARFDUMP, f"--lookup=0x{addr:x}", path])
    names = re.findall(r"DW_TAG_subprogram\n\s+DW_AT_name\t\(\"(.*)\"\)", out)
    m = re.search(r"Line info: file '([^']*)', line (\d+)", out)
    return (names[0] if names else None, m.group(1) if m else None, int(m.group(2)) if m else None)


def symbols(path):
    """{address: name} of the file's function symbols (readelf)."""
    rc, out, err = t.run(["readelf", "-sW", path])
    syms = {}
    for line in out.splitlines():
        f = line.split(None, 7)
        if len(f) == 8 and f[3] == "FUNC":
            syms[int(f[1], 16)] = f[7]
    return syms


def oracle_frames(core, tmp, tid):
    """The oracle's managed frames of thread tid: [(ip, method)]."""
    data = b.oracle_objects(core, tmp, stacks=[tid])
    return [(h(f["ip"]), f["method"]) for f in data["stacks"][str(tid)] if f["kind"] == "ManagedMethod"]


# ---- running: one thread's stack -----------------------------------------------------------------

def check_file_tools(path, frames, run_line, stop_line, what):
    """llvm-dwarfdump and eu-addr2line on the file, at the oracle's frames."""
    syms = symbols(path)
    starts = sorted(syms)
    for i, (ip, method) in enumerate(frames):
        pc = ip if i == 0 else ip - 1  # a caller's frame: the call instruction
        name, f, line = lookup(path, pc)
        t.check(name is not None, f"{what}: the file describes the oracle's frame {i} {method} at 0x{ip:x}")
        if method.startswith("AsyncdacSamples."):
            t.check_eq(name, b.display(method), f"{what}: frame {i} method")
        covered = [s for s in starts if s <= pc]
        t.check(covered and syms[covered[-1]] == name, f"{what}: symbol at 0x{pc:x} is {name}")
    leaf = [ip for ip, m in frames if m == "AsyncdacSamples.RunningApp.RunLeaf()"]
    stop = [ip for ip, m in frames if m == "AsyncdacSamples.RunningApp.StopHere(Int32)"]
    if t.check(leaf and stop, f"{what}: the oracle has RunLeaf and StopHere on the thread"):
        name, f, line = lookup(path, leaf[0] - 1)
        t.check_eq((name, f.endswith("/running/Program.cs") if f else f, line),
                   ("AsyncdacSamples.RunningApp.RunLeaf()", True, run_line), f"{what}: RunLeaf's line")
        rc, out, err = t.run(["eu-addr2line", "-f", "-e", path, f"0x{stop[0] - 1:x}"])
        want = f"AsyncdacSamples.RunningApp.StopHere(Int32)\n{t.SOURCE}/targets/dotnet/running/Program.cs:{stop_line}"
        t.check(rc == 0 and out.startswith(want), f"{what}: eu-addr2line StopHere: {out!r} {err!r}, want {want!r}")


def check_gdb(core, path, tid, run_line, stop_line, string_slot):
    """gdb unwinds the thread through the managed frames (the file's call-frame information), reads
    their arguments, and shows a string's characters (its length-counted array)."""
    d = b.dn()
    show = f"print *(struct 'System.String object' *)*(long *)0x{string_slot:x}"
    rc, out, err = t.run(["gdb", "-batch", "-nx", "-ex", f"add-symbol-file {path}", "-ex", "thread apply all bt 40",
                          "-ex", show, d["DN_HOST"], core], timeout=300)
    t.check(re.search(r'^\$1 = \{_stringLength = 11, _firstChar = u"top-running"\}$', out, re.M),
            f"gdb: {show}:\n{out[-500:]}")
    thread = re.search(r"^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP %d\)\):\n((?:#.*\n?)+)" % tid, out, re.M)
    if not t.check(thread, f"gdb: no backtrace of thread {tid}:\n{out[-3000:]}"):
        return
    bt = thread.group(1)
    src = f"{t.SOURCE}/targets/dotnet/running/Program.cs"
    order = [r"in AsyncdacSamples\.RunningApp\.ParkRunning\(\) \(\) at " + re.escape(src),
             r"in AsyncdacSamples\.RunningApp\.StopHere\(Int32\) \(leafLocal=808\) at " + re.escape(f"{src}:{stop_line}"),
             r"in AsyncdacSamples\.RunningApp\.RunLeaf\(\) \(\) at " + re.escape(f"{src}:{run_line}"),
             r"in IL_STUB_AsyncResume\(System\.Object, Byte&\) \(\)",
             r"in System\.Runtime\.CompilerServices\.AsyncHelpers\+RuntimeAsyncTask<Int32>\.DispatchContinuations\(\)",
             r"in System\.Threading\.Thread\.StartCallback\(System\.Threading\.Thread\*\)",
             r"in start_thread "]
    at = 0
    for pattern in order:
        m = re.compile(pattern).search(bt, at)
        if not t.check(m, f"gdb: thread {tid}'s backtrace lacks /{pattern}/ (in order):\n{bt}"):
            return
        at = m.end()
    managed = bt.split("Thread.StartCallback")[0]
    t.check("?? ()" not in managed, f"gdb: no unknown frame up to Thread.StartCallback:\n{bt}")


def raw_section(out, command):
    """The output of `command` as LLDB printed it (its frame lines are not stop events)."""
    found = [text for cmd, text in b.lldb_sections(out) if cmd == command]
    return found[0] if t.check(found, f"no output of {command!r} in lldb's output:\n{out[-3000:]}") else ""


def check_lldb(setup, tid, run_line, stop_line, leaf_ip, what, string_slot):
    """Plain lldb-22 commands with the plugin loaded: it loads the symbols by itself."""
    # Threads are selected by id: a live process's threads get other indexes in each session.
    cmds = [f"thread select -t {tid}", "bt"]
    out = b.run_lldb(setup, cmds, f"{what}: bt")
    bt = raw_section(out, "bt")
    frames = re.findall(r"^ +(?:\* )?frame #(\d+): 0x[0-9a-f]+ (.*)$", bt, re.M)
    leaf = [int(n) for n, rest in frames if rest.startswith("managed`AsyncdacSamples.RunningApp.RunLeaf()")]
    want = {
        "managed`AsyncdacSamples.RunningApp.ParkRunning() at Program.cs:%d:13" % source_line("running/Program.cs",
                                                                                           r"^\s+Thread\.Sleep\(Timeout\.Infinite\);"),
        "managed`AsyncdacSamples.RunningApp.StopHere(leafLocal=808) at Program.cs:%d:13" % stop_line,
        "managed`AsyncdacSamples.RunningApp.RunLeaf() at Program.cs:%d:13" % run_line,
    }
    t.check(want <= {rest for n, rest in frames}, f"{what}: bt names the managed frames with their lines:\n{bt}")
    t.check(any(r.startswith("managed`System.Threading.Thread.StartCallback(") for n, r in frames) and
            any(r.startswith("libc.so.6`start_thread") for n, r in frames),
            f"{what}: bt unwinds through CoreLib's frames to start_thread:\n{bt}")
    if not t.check(len(leaf) == 1, f"{what}: one RunLeaf frame in bt:\n{bt}"):
        return
    cmds = [f"thread select -t {tid}", f"frame select {leaf[0]}", "frame variable", "source list -c 3",
            f"image lookup -a 0x{leaf_ip:x}", f"expression -- *(string*)0x{string_slot:x}"]
    out = b.run_lldb(setup, cmds, f"{what}: frame variable")
    t.check_eq(b.lldb_output(out, "frame variable"), "(int) leafLocal = 808\n(int) V_1 = 0\n",
               f"{what}: frame variable of RunLeaf (leafLocal from expected.json)")
    src = b.lldb_output(out, "source list -c 3")
    t.check(re.search(r"^   %d\s+StopHere\(leafLocal\); // @running RunLeaf$" % run_line, src, re.M) or
            re.search(r"^-> %d\s+StopHere\(leafLocal\); // @running RunLeaf$" % run_line,
                      b.lldb_output(out, f"frame select {leaf[0]}"), re.M),
            f"{what}: the source of RunLeaf's line {run_line}:\n{src}")
    look = b.lldb_output(out, f"image lookup -a 0x{leaf_ip:x}")
    t.check(re.search(r"Summary: managed`AsyncdacSamples\.RunningApp\.RunLeaf\(\) \+ \d+ at Program\.cs:%d:13" % run_line, look),
            f"{what}: image lookup -a finds RunLeaf:\n{look}")
    t.check(re.search(r'^\(string\) \$0 = 0x[0-9a-f]{16} "top-running"$', b.lldb_output(out, cmds[-1]), re.M),
            f"{what}: a managed string's summary:\n{b.lldb_output(out, cmds[-1])}")
    # Opting out: no symbol file, so LLDB has no names of its own for managed frames (the frame
    # provider names them: running.dll`...).
    rc, out, err = t.lldb(setup + [f"thread select -t {tid}", "bt"], env={"ASYNCDAC_AUTO_SYMBOLS": "0"}, timeout=600)
    t.check(rc == 0 and "managed`" not in out and "running.dll`AsyncdacSamples.RunningApp.RunLeaf()" in out,
            f"{what}: ASYNCDAC_AUTO_SYMBOLS=0 loads none:\n{out}")
    # The same code twice: the file loaded first stays loaded (LLDB keeps what it read and unwound).
    cmds = ["async symbols --stacks", "async symbols --stacks", "image list"]
    out = b.run_lldb(setup, cmds, f"{what}: the same symbols twice")
    first, again = (SUMMARY.match(b.lldb_output(out, c, n)) for c, n in ((cmds[0], 0), (cmds[1], 1)))
    if t.check(first and again, f"{what}: async symbols twice:\n{out}"):
        t.check_eq(again.group(7), first.group(7), f"{what}: the second async symbols keeps the first file")
        t.check_eq(len(re.findall(r"\S*/asyncdac-symbols-\S*/managed", b.lldb_output(out, "image list"))), 1,
                   f"{what}: one symbol file in image list")
    cmds = ["async symbols --auto off", f"thread select -t {tid}", "bt"]
    out = b.run_lldb(setup, cmds, f"{what}: --auto off")
    t.check_eq(b.lldb_output(out, cmds[0]), "Loading symbols when the process stops: off\n", f"{what}: --auto off")
    t.check("managed`" not in raw_section(out, "bt"), f"{what}: --auto off loads none")


class Dap:
    """A minimal Debug Adapter Protocol client for lldb-dap."""

    def __init__(self):
        self.p = subprocess.Popen(["/usr/lib/llvm-22/bin/lldb-dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        self.seq = 0

    def send(self, command, arguments=None):
        self.seq += 1
        msg = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            msg["arguments"] = arguments
        data = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.p.stdin.flush()
        return self.seq

    def recv(self):
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            c = self.p.stdout.read(1)
            if not c:
                return None
            header += c
        n = int(re.search(rb"Content-Length: (\d+)", header).group(1))
        return json.loads(self.p.stdout.read(n))

    def close(self):
        try:
            self.send("disconnect", {"terminateDebuggee": False})
        except OSError:
            pass
        self.p.kill()
        self.p.wait()


def check_dap(core, tid, run_line):
    """lldb-dap: the stack of the thread names RunLeaf with its source path and line, the symbols
    loaded by the plugin through stopCommands."""
    d = b.dn()
    dap = Dap()
    frames = None
    try:
        dap.send("initialize", {"adapterID": "lldb", "clientID": "asyncdac-test", "linesStartAt1": True,
                                "columnsStartAt1": True, "pathFormat": "path"})
        dap.send("attach", {"program": d["DN_HOST"], "coreFile": core, "initCommands": [f"plugin load {t.PLUGIN}"],
                            "stopCommands": ["async symbols --stacks"]})
        deadline = time.time() + 120
        while time.time() < deadline and frames is None:
            m = dap.recv()
            if m is None:
                break
            if m.get("event") == "initialized":
                dap.send("configurationDone")
            elif m.get("event") == "stopped":
                dap.send("stackTrace", {"threadId": tid, "levels": 40})
            elif m.get("command") == "stackTrace":
                frames = m.get("body", {}).get("stackFrames", [])
    finally:
        dap.close()
    if not t.check(frames, "lldb-dap: no stackTrace response"):
        return
    leaf = [f for f in frames if f.get("name") == "AsyncdacSamples.RunningApp.RunLeaf()"]
    if t.check(len(leaf) == 1, f"lldb-dap: RunLeaf in the stack: {[f.get('name') for f in frames]}"):
        t.check_eq((leaf[0].get("source", {}).get("path"), leaf[0].get("line")),
                   (f"{t.SOURCE}/targets/dotnet/running/Program.cs", run_line), "lldb-dap: RunLeaf's source and line")


def method_offset(frames, syms, method):
    """The offset in its method of the oracle's frame of `method` (a caller: its return address),
    from the start of the symbol that covers its call in the file (readelf): the JIT's code for the
    same method is not always the same length (StopHere's call was at 0x30b, once at 0x305), so
    the offset is not a constant."""
    ips = [ip for ip, m in frames if m == method]
    starts = [s for s in syms if ips and s <= ips[0] - 1]
    return ips[0] - max(starts) if starts else None


def check_cli_bt(core, tid, run_line, stop_line, frames, syms):
    """The CLI's physical frames: the managed ones with their offsets (the oracle's return address
    from the symbol file's start of the method) and lines, and with --locals their variables, from
    the same debug info as the symbol files."""
    rc, out, err = b.cli(["bt", core, "--thread", str(tid), "--locals"])
    text = re.sub(r"0x[0-9a-f]{16}", "0xADDR", out)
    stop_off = method_offset(frames, syms, "AsyncdacSamples.RunningApp.StopHere(Int32)")
    leaf_off = method_offset(frames, syms, "AsyncdacSamples.RunningApp.RunLeaf()")
    if not t.check(stop_off and leaf_off, "the oracle's StopHere and RunLeaf frames in the symbol file"):
        return
    for want in (f"running.dll`AsyncdacSamples.RunningApp.StopHere(Int32) + 0x{stop_off:x} "
                 f"at Program.cs:{stop_line}\n      (int) leafLocal = 808\n",
                 f"running.dll`AsyncdacSamples.RunningApp.RunLeaf() + 0x{leaf_off:x} at Program.cs:{run_line}\n"
                 "      (int) leafLocal = 808\n      (int) V_1 = 0\n"):
        t.check(rc == 0 and want in text, f"CLI bt --locals: {want!r} in:\n{text[:3000]}")
    j = b.cli_json(["bt", core, "--thread", str(tid), "--locals"], "CLI bt --locals")
    frames = j["threads"][0]["frames"] if j and j.get("threads") else []
    leaf = [f for f in frames if (f.get("symbol") or "").startswith("AsyncdacSamples.RunningApp.RunLeaf(")]
    if t.check(len(leaf) == 1, "CLI bt --json: one RunLeaf frame"):
        t.check_eq((leaf[0].get("file"), leaf[0].get("line")), (f"{t.SOURCE}/targets/dotnet/running/Program.cs", run_line),
                   "CLI bt --json: RunLeaf's file and line")
        t.check_eq([(v["name"], v["kind"], v["type"], v["value"]) for v in leaf[0].get("locals", [])],
                   [("leafLocal", "local", "int", 808), ("V_1", "local", "int", 0)], "CLI bt --json: RunLeaf's locals")


def running_test(tmp):
    exp = b.expected("running")["running"]
    run_line = exp["running_frame"]["line"]
    stop_line = source_line("running/Program.cs", r"^\s+ParkRunning\(\);")
    s = b.sample("running", "Debug", mode="park")
    b.wait_parked(s.pid, s.tid)
    core = b.make_core(s.pid, os.path.join(tmp, "running.core"))
    frames = oracle_frames(core, tmp, s.tid)
    live_path, core_path = os.path.join(tmp, "live.so"), os.path.join(tmp, "core.so")
    write_symbols(["--pid", str(s.pid)], live_path, "running live")
    write_symbols([core], core_path, "running core")
    t.check_eq(symbols(live_path), symbols(core_path), "running: the same symbols from the process and its core")
    write_symbols([core], os.path.join(tmp, "core4.so"), "running core, DWARF 4", ["--dwarf", "4"])
    # --all adds every JIT-compiled method: Sample.Ready ran and returned, so only --all has it.
    all_path = os.path.join(tmp, "all.so")
    write_symbols([core], all_path, "running core, --all", ["--all"])
    ready = "AsyncdacSamples.Sample.Ready(System.String, System.String)"
    t.check(ready in symbols(all_path).values() and ready not in symbols(core_path).values(),
            f"running: {ready} is in the --all file only")
    t.check(set(symbols(core_path).items()) <= set(symbols(all_path).items()), "running: --all has the default's symbols")
    check_file_tools(core_path, frames, run_line, stop_line, "running core")
    check_cli_bt(core, s.tid, run_line, stop_line, frames, symbols(core_path))
    # A string the running chain saved (RunTop's topLocal, "top-running" in expected.json): its slot.
    chains = b.cli_json(["bt", core, "--locals"], "running: bt --locals")
    slot = next((h(v["address"]) for th in (chains or {}).get("threads", []) for c in th["chains"]
                 for f in c["frames"] for v in f.get("locals") or [] if v.get("name") == "topLocal"), None)
    leaf_ip = next(ip for ip, m in frames if m == "AsyncdacSamples.RunningApp.RunLeaf()")
    if t.check(slot, "running: asyncdac finds RunTop's topLocal"):
        check_gdb(core, core_path, s.tid, run_line, stop_line, slot)
        check_lldb(b.lldb_target(core=core), s.tid, run_line, stop_line, leaf_ip, "lldb core", slot)
        check_lldb(b.lldb_target(pid=s.pid), s.tid, run_line, stop_line, leaf_ip, "lldb live", slot)
    check_dap(core, s.tid, run_line)
    s.kill()


# ---- chains: every suspended frame ---------------------------------------------------------------

def chains_test(tmp):
    for scenario in ("nested", "shapes"):
        core = b.sample_core(scenario, "Debug", tmp)
        o = b.oracle(core, tmp)
        path = os.path.join(tmp, scenario + ".so")
        write_symbols([core], path, scenario)
        checked = 0
        for chain in o.chains:
            for frame in o.user_frames(chain):
                f = b.frame_facts(o, frame)
                name, file, line = lookup(path, f["diagnostic_ip"])
                want_name = f["canonical_method"] or f["method"]
                t.check_eq((name, file, line), (want_name, f["file"], f["line"]),
                           f"{scenario}: the frame at DiagnosticIP 0x{f['diagnostic_ip']:x}")
                checked += 1
        t.check(checked >= 3, f"{scenario}: {checked} chain frames checked")
        if scenario == "nested":
            # The types of what the continuations saved are in the file, by the names asyncdac's
            # locals give them (a struct of the runtime's layout: Pair { int Id; object Tag; int Count }).
            rc, out, err = t.run([DWARFDUMP, "--name=AsyncdacSamples.Pair", "--show-children", path])
            members = re.findall(r"DW_TAG_member\n\s+DW_AT_name\t\(\"(\w+)\"\)\n\s+DW_AT_type\t\(0x[0-9a-f]+ \"([^\"]+)\"\)\n"
                                 r"\s+DW_AT_data_member_location\t\((\d+)\)", out)
            t.check_eq(sorted((n, ty) for n, ty, _ in members), [("Count", "int"), ("Id", "int"), ("Tag", "object")],
                       f"nested: the struct AsyncdacSamples.Pair:\n{out}")
            t.check(re.search(r"DW_AT_byte_size\t\(16\)", out) and len({int(o) for *_, o in members}) == 3,
                    f"nested: Pair's 16 bytes, its fields apart:\n{out}")
            # --stacks --chain-types (what the LLDB plugin loads with async threads enabled): the
            # pending chain's saved types without its methods; --stacks alone, neither.
            for extra, typed in ((["--stacks", "--chain-types"], True), (["--stacks"], False)):
                part = os.path.join(tmp, "nested-" + "-".join(x.strip("-") for x in extra) + ".so")
                write_symbols([core], part, f"nested {' '.join(extra)}", extra)
                rc, out, err = t.run([DWARFDUMP, "--name=AsyncdacSamples.Pair", "--show-children", part])
                t.check_eq(bool(re.search(r'DW_AT_name\t\("AsyncdacSamples\.Pair"\)', out)), typed,
                           f"nested {' '.join(extra)}: the struct AsyncdacSamples.Pair in the file")
                t.check_eq([lookup(part, b.frame_facts(o, fr)["diagnostic_ip"])[0] for fr in o.user_frames(o.chains[0])],
                           [None] * len(o.user_frames(o.chains[0])), f"nested {' '.join(extra)}: no chain method")
            rc, out, err = b.cli(["symbols", core, "--chain-types", "-o", os.path.join(tmp, "x.so")])
            t.check_eq((rc, out, err), (2, "", "asyncdac: error: --chain-types goes with --stacks (without it, the "
                                              "chains are covered)\n"), "nested: --chain-types without --stacks")
        os.unlink(core)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "running"
    tmp = t.tmpdir()
    if mode == "running":
        running_test(tmp)
    elif mode == "chains":
        chains_test(tmp)
    else:
        raise SystemExit(f"unknown mode {mode}")
    t.finish()


if __name__ == "__main__":
    main()
