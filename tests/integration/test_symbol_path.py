"""integration.symbol_path: dumps read on another machine (issue 14), with the app's and the runtime's folders gone.

The nested sample runs from a copy of the runtime, the app and a stripped dnhost (its symbols split
into dnhost.dbg, reached by .gnu_debuglink and build-id: the native module built here stands for
libcoreclr.so, whose libcoreclr.so.dbg no local file provides). Three cores are taken: createdump
--full, createdump's default (with heap: the modules' headers, not their bodies) and gcore with the
process's own filter (no file-backed page at all). Then the copy is moved away, and each core is
read through every route, asserting exact methods, lines, frame notes and which file came by which
route (the CLI's "asyncdac: note: <file> from <path> (<route>)" lines, keys computed here
independently, tests/lib/symstore.py):
  - nothing: no PDB (createdump), no runtime types (gcore, createdump with heap);
  - the symbol path (--symbol-path, and ASYNCDAC_SYMBOL_PATH): PDB by CodeView id, assemblies by
    PE identity or, when the core holds none of their bytes, by name and size (said on the frame),
    libcoreclr.so and dnhost by build-id, dnhost.dbg by its debuglink name;
  - a mismatched PDB (the Release build's) refused with the ids on the frame;
  - a file:// store and an HTTP store on 127.0.0.1 laid out by SSQP keys (asked once, then served
    from the cache directory, also with the server gone);
  - Debian's debuginfod on 127.0.0.1 for the ELF files (DEBUGINFOD_URLS);
  - live (--pid): dnhost.dbg through the symbol path;
  - a createdump core cut short by 0.1 %: one warning, the cut stack said on its thread, the chain
    shown; --strict refuses it;
  - lldb-22: LLDB's own target.exec-search-paths loads the native modules, and the plugin reads
    target.debug-file-search-paths (a directory, a srv*CACHE*URL server, a mismatched PDB); the
    gcore and with-heap cores without target.exec-search-paths (LLDB finds no module): `async ps`
    with the symbol path is the CLI's `ps` with it, and without one fails with the CLI's error;
    LLDB's own `thread backtrace` of the createdump --full core, LLDB finding none of its modules:
    the plugin shows LLDB the ones the core reader found (the symbol path's), so that LLDB names
    and unwinds the main thread (Sample.cs:30, Program.cs:157, coreclr_execute_assembly, dnhost`main
    at host.c with dnhost.dbg); lldb-dap opening that core with `async symbols --stacks` as its
    stopCommands shows the same frames; for the gcore core too (and LLDB for the with-heap core),
    whose ReadyToRun code (CoreLib's) LLDB cannot read: the plugin's symbols cover it (its frames
    go on with the core reader's).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import symstore as ss  # noqa: E402
from dapclient import DapClient  # noqa: E402
from lldbframes import frames_of, raw_section  # noqa: E402

# lldb-dap of the same LLDB: next to lldb-22's real binary (/usr/lib/llvm-22/bin/).
LLDB_DAP = os.environ.get("ADAC_LLDB_DAP") or os.path.join(
    os.path.dirname(os.path.realpath(shutil.which(t.LLDB) or t.LLDB)), "lldb-dap")

NO_DEBUGINFOD = {"DEBUGINFOD_URLS": ""}


def cli(args, env=None):
    e = dict(NO_DEBUGINFOD)
    e.update(env or {})
    return t.run([t.CLI] + args, timeout=300, env=e)


def notes(err):
    """The sorted "asyncdac: note:" lines of stderr; anything else there is a failure."""
    lines = err.splitlines()
    other = [line for line in lines if not line.startswith("asyncdac: note: ")]
    t.check_eq(other, [], "stderr lines other than notes")
    return sorted(lines)


def note(name, path, route):
    return f"asyncdac: note: {name} from {path} ({route})"


class Sample:
    """What the nested sample must show (expected.json), and the machine it ran on."""

    def __init__(self):
        exp = b.expected("nested")
        frames = exp["chains"][0]["frames"]
        self.prefixes = []
        for f in frames:
            name = b.display(f["type"]) + "." + f["method"]
            if f.get("generic") and "<" not in f["type"]:
                name += "<" + ", ".join(b.display(v) for v in f["generic"].values()) + ">"
            self.prefixes.append(name + "(")
        self.lines = [f["await_line"] for f in frames]
        self.source = frames[0]["source"]


def check_chain(rc, out, err, s, want_note, what):
    """ps --json: one chain, C -> B -> A at their await lines, each frame's note as given."""
    if not t.check_eq(rc, 0, f"{what}: exit code (stderr {err!r})"):
        return
    try:
        chains = json.loads(out)["ps"]["chains"]
    except (ValueError, KeyError) as e:
        t.fail(f"{what}: not ps JSON ({e}): {out[:400]}")
        return
    if not t.check_eq(len(chains), 1, f"{what}: chains"):
        return
    frames = [f for f in chains[0]["frames"] if f.get("kind") == "async"]
    if not t.check_eq(len(frames), 3, f"{what}: frames"):
        return
    for f, prefix, line in zip(frames, s.prefixes, s.lines):
        t.check((f.get("method") or "").startswith(prefix), f"{what}: method {f.get('method')} is {prefix}...")
        if want_note is None or not want_note.startswith("no PDB"):
            t.check_eq((f.get("line"), (f.get("file") or "").endswith("/" + s.source)), (line, True),
                       f"{what}: {prefix} line and file ({f.get('file')})")
        else:
            t.check_eq(f.get("line"), None, f"{what}: {prefix} has no line")
        t.check_eq(f.get("note") or None, want_note, f"{what}: {prefix} note")


def main():
    s = Sample()
    tmp = t.tmpdir()
    d = b.dn()
    # ---- the production machine: runtime, app, a host whose symbols are split off
    machine = os.path.join(tmp, "machine")
    for name in os.listdir(d["DN_RUNTIME11"]):
        t.link_or_copy(os.path.join(d["DN_RUNTIME11"], name), os.path.join(machine, "rt", name))
    app_dir = os.path.join(d["DN_APPS"], "11", "Debug", "nested")
    for name in ("nested.dll", "nested.pdb"):
        t.link_or_copy(os.path.join(app_dir, name), os.path.join(machine, "app", name))
    debug_dir = os.path.join(tmp, "debug")
    os.makedirs(debug_dir)
    os.makedirs(os.path.join(machine, "bin"))
    host, host_dbg = os.path.join(machine, "bin", "dnhost"), os.path.join(debug_dir, "dnhost.dbg")
    for argv in (["objcopy", "--only-keep-debug", d["DN_HOST"], host_dbg],
                 ["objcopy", "--strip-all", f"--add-gnu-debuglink={host_dbg}", d["DN_HOST"], host]):
        rc, _, err = t.run(argv)
        if rc:
            raise SystemExit(f"FAIL: {' '.join(argv)}: {err}")
    proc, _ = t.start([host, os.path.join(machine, "rt"), os.path.join(machine, "app", "nested.dll")],
                          timeout=120)
    pid = proc.pid
    cores = {}
    try:
        b.wait_parked(pid, pid)
        cores["full"] = b.make_core(pid, os.path.join(tmp, "full.core"), "createdump")
        cores["gcore"] = b.make_core(pid, os.path.join(tmp, "raw.core"), "gcore-raw")
        heap = os.path.join(tmp, "heap.core")
        rc, _, err = t.run([os.path.join(machine, "rt", "createdump"), "-f", heap, str(pid)], timeout=300)
        if rc or not os.path.exists(heap):
            raise SystemExit(f"FAIL: createdump (with heap) {pid}: {err}")
        cores["heap"] = heap
        # Live, the same native route: dnhost.dbg is not beside dnhost, the symbol path has it.
        rc, out, err = cli(["bt", "--pid", str(pid), "--symbol-path", debug_dir])
        t.check_eq(rc, 0, f"live, symbol path: bt exit code ({err})")
        check_host_frame(out, "live, symbol path")
        t.check_eq(notes(err), [note("dnhost.dbg", host_dbg, "symbol path")], "live, symbol path: notes")
        rc, out, err = cli(["bt", "--pid", str(pid)])
        t.check("dnhost`main" not in out, "live, nothing: dnhost's frame has no name")
    finally:
        proc.kill()
        proc.wait(timeout=10)
    # ---- the analyst's machine: none of the paths the cores name exist
    moved = os.path.join(tmp, "moved")
    os.rename(machine, moved)
    rt, app, bin_dir = (os.path.join(moved, x) for x in ("rt", "app", "bin"))
    dll, pdb = os.path.join(app, "nested.dll"), os.path.join(app, "nested.pdb")
    _, _, pdb_name, want_id = ss.pe_identity(dll)
    t.check_eq((pdb_name, ss.pdb_id(pdb)), ("nested.pdb", want_id), "the app's PDB is its CodeView entry's")

    check_nothing(s, cores)
    check_symbol_path(s, cores, moved, debug_dir, tmp)
    check_mismatch(s, cores, want_id, tmp)
    check_stores(s, cores, moved, debug_dir, tmp)
    check_debuginfod(s, cores, moved, debug_dir, tmp)
    check_truncated(s, cores, app, tmp, pid)
    check_lldb(s, cores, moved, want_id, tmp)
    t.finish()


PS = ["ps", "--json"]
CANNOT_READ = re.compile(r"asyncdac: error: Module 0xADDR: .*cannot read the string at 0xADDR\n")


def check_nothing(s, cores):
    rc, out, err = cli(PS + [cores["full"]])
    check_chain(rc, out, err, s, "no PDB for nested.dll (none beside it, none embedded)", "createdump --full, nothing")
    t.check_eq(err, "", "createdump --full, nothing: stderr")
    for kind in ("gcore", "heap"):
        rc, out, err = cli(PS + [cores[kind]])
        t.check_eq((rc, out), (1, ""), f"{kind}, nothing: exit code and stdout")
        t.check(CANNOT_READ.fullmatch(t.normalize(err)), f"{kind}, nothing: the runtime's types are unreadable: {err}")


def host_line():
    with open(os.path.join(t.SOURCE, "targets", "dotnet", "host", "host.c")) as f:
        return next(i for i, line in enumerate(f, 1) if re.search(r"=\s*exec\(host", line))


def check_host_frame(out, what):
    """The main thread's dnhost frame: named, with its line, from dnhost.dbg."""
    want = re.compile(r"dnhost`main \+ \d+ at " + re.escape(os.path.join(t.SOURCE, "targets", "dotnet", "host",
                                                                         "host.c")) + f":{host_line()}$")
    frames = [line for line in out.splitlines() if " dnhost`" in line or line.endswith(" dnhost")]
    t.check(any(want.search(f) for f in frames), f"{what}: dnhost's frame is main at host.c:{host_line()}: {frames}")


def check_symbol_path(s, cores, moved, debug_dir, tmp):
    rt, app, bin_dir = (os.path.join(moved, x) for x in ("rt", "app", "bin"))
    pdb = os.path.join(app, "nested.pdb")
    # createdump --full: the image is in the core; only the PDB comes from the symbol path.
    rc, out, err = cli(PS + [cores["full"], "--symbol-path", app])
    check_chain(rc, out, err, s, None, "createdump --full, symbol path")
    t.check_eq(notes(err), [note("nested.pdb", pdb, "symbol path")], "createdump --full, symbol path: notes")
    # The same through ASYNCDAC_SYMBOL_PATH (searched after --symbol-path: here an empty directory).
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    rc, out, err = cli(PS + [cores["full"], f"--symbol-path={empty}"], env={"ASYNCDAC_SYMBOL_PATH": app})
    check_chain(rc, out, err, s, None, "createdump --full, ASYNCDAC_SYMBOL_PATH")
    t.check_eq(notes(err), [note("nested.pdb", pdb, "symbol path")], "ASYNCDAC_SYMBOL_PATH: notes")

    # gcore: no byte of any assembly; found by name and size, which the frames say.
    path = ":".join([app, rt, bin_dir, debug_dir])
    rc, out, err = cli(PS + [cores["gcore"], "--symbol-path", path])
    dll = os.path.join(app, "nested.dll")
    check_chain(rc, out, err, s, f"nested.dll from {dll} (symbol path); matched by name and size only: the core "
                                 "lacks its headers", "gcore, symbol path")
    found = notes(err)
    for want in (note("nested.dll", dll, "symbol path"), note("nested.pdb", pdb, "symbol path"),
                 note("System.Private.CoreLib.dll", os.path.join(rt, "System.Private.CoreLib.dll"), "symbol path")):
        t.check(want in found, f"gcore, symbol path: {want!r} in {found}")
    # Native frames: dnhost by build-id from the symbol path, its symbols from dnhost.dbg.
    rc, out, err = cli(["bt", cores["gcore"], "--symbol-path", path])
    t.check_eq(rc, 0, f"gcore, symbol path: bt exit code ({err})")
    check_host_frame(out, "gcore, symbol path")
    found = notes(err)
    for want in (note("dnhost", os.path.join(bin_dir, "dnhost"), "symbol path"),
                 note("dnhost.dbg", os.path.join(debug_dir, "dnhost.dbg"), "symbol path"),
                 note("libcoreclr.so", os.path.join(rt, "libcoreclr.so"), "symbol path")):
        t.check(want in found, f"gcore, symbol path, bt: {want!r} in {found}")
    rc, out, err = cli(["bt", cores["gcore"]])
    t.check("dnhost`main" not in out, "gcore, nothing: dnhost's frame has no name")


def check_mismatch(s, cores, want_id, tmp):
    release = os.path.join(b.dn()["DN_APPS"], "11", "Release", "nested", "nested.pdb")
    wrong = os.path.join(tmp, "wrong")
    t.link_or_copy(release, os.path.join(wrong, "nested.pdb"))
    got = ss.pdb_id(release)
    t.check(got != want_id, "the Release PDB has another id")
    rc, out, err = cli(PS + [cores["full"], "--symbol-path", wrong])
    check_chain(rc, out, err, s, f"no PDB for nested.dll: {wrong}/nested.pdb does not match it (PDB id {got}, the "
                                 f"assembly wants {want_id})", "mismatched PDB")
    t.check_eq(err, "", "mismatched PDB: stderr")


def ssqp_files(moved, debug_dir):
    rt, app, bin_dir = (os.path.join(moved, x) for x in ("rt", "app", "bin"))
    files = [(os.path.join(app, "nested.dll"), False), (os.path.join(app, "nested.pdb"), False),
             (os.path.join(bin_dir, "dnhost"), False), (os.path.join(debug_dir, "dnhost.dbg"), True)]
    for name in sorted(os.listdir(rt)):
        if name.endswith(".dll") or name.endswith(".so"):
            files.append((os.path.join(rt, name), False))
    return files


def check_stores(s, cores, moved, debug_dir, tmp):
    store = os.path.join(tmp, "store")
    keys = ss.lay_out(store, ssqp_files(moved, debug_dir))
    app = os.path.join(moved, "app")
    pdb_key = keys[os.path.join(app, "nested.pdb")]
    # file:// store: files used where they are.
    url = f"file://{store}"
    rc, out, err = cli(PS + [cores["full"], "--symbol-path", f"srv*{url}"])
    check_chain(rc, out, err, s, None, "file:// store")
    t.check_eq(notes(err), [note("nested.pdb", os.path.join(store, pdb_key), f"symbol server {url}")],
               "file:// store: notes")

    # HTTP store on 127.0.0.1, downloads into a cache directory.
    server = ss.HttpStore(store)
    cache = os.path.join(tmp, "cache")
    spec = f"srv*{cache}*{server.url}"
    rc, out, err = cli(PS + [cores["full"], "--symbol-path", spec])
    check_chain(rc, out, err, s, None, "HTTP store")
    t.check_eq(notes(err), [note("nested.pdb", os.path.join(cache, pdb_key), f"symbol server {server.url}")],
               "HTTP store: notes")
    t.check_eq(server.asked, ["/" + pdb_key], "HTTP store: requests")
    rc, out, err = cli(PS + [cores["full"], "--symbol-path", spec])
    t.check_eq(notes(err), [note("nested.pdb", os.path.join(cache, pdb_key), f"cache of symbol server {server.url}")],
               "HTTP store, again: from the cache")
    t.check_eq(server.asked, ["/" + pdb_key], "HTTP store, again: no new request")
    # The listing's helper threads (each with its own target) may fetch the same file at once into
    # a fresh cache: the same listing, the file downloaded whole once or more, and noted once.
    fresh = os.path.join(tmp, "cache-helpers")
    rc, out, err = cli(PS + [cores["full"], "--symbol-path", f"srv*{fresh}*{server.url}"],
                       env={"ASYNCDAC_LIST_HELPERS": "3"})
    check_chain(rc, out, err, s, None, "HTTP store, 3 list helpers")
    got = notes(err)
    t.check(len(got) == 1 and got[0] in (note("nested.pdb", os.path.join(fresh, pdb_key), f"{how}symbol server {server.url}")
                                         for how in ("", "cache of ")),
            f"HTTP store, 3 list helpers: one note for nested.pdb: {got}")
    t.check_eq(sorted(f for f in os.listdir(os.path.dirname(os.path.join(fresh, pdb_key)))), ["nested.pdb"],
               "HTTP store, 3 list helpers: no partial download left")

    # createdump with heap: the modules' headers say their identity; the bodies come from the server.
    rc, out, err = cli(PS + [cores["heap"], "--symbol-path", spec])
    check_chain(rc, out, err, s, None, "createdump with heap, HTTP store")
    by_name = {os.path.basename(p): k for p, k in keys.items()}
    found = notes(err)
    for line in found:
        m = re.fullmatch(r"asyncdac: note: (\S+) from (\S+) \((cache of )?symbol server (\S+)\)", line)
        if t.check(m, f"createdump with heap: note {line!r}"):
            name = m.group(1)
            t.check_eq((m.group(2), m.group(4)), (os.path.join(cache, by_name.get(name, "?")), server.url),
                       f"createdump with heap: {name} by its key")
    names = [re.sub(r"asyncdac: note: (\S+) .*", r"\1", line) for line in found]
    for name in ("System.Private.CoreLib.dll", "libcoreclr.so", "nested.pdb"):
        t.check(name in names, f"createdump with heap: {name} came from the server: {names}")
    t.check("/" + keys[os.path.join(moved, "rt", "System.Private.CoreLib.dll")] in server.asked,
            "createdump with heap: CoreLib asked by its PE key")

    # gcore through the HTTP store: native files by build-id (libcoreclr.so is in the cache since
    # the core with heap needed it).
    rc, out, err = cli(["bt", cores["gcore"], "--symbol-path", spec])
    t.check_eq(rc, 0, f"gcore, HTTP store: bt exit code ({err})")
    check_host_frame(out, "gcore, HTTP store")
    found = notes(err)
    for name, path, route in (("dnhost", os.path.join(moved, "bin", "dnhost"), "symbol server"),
                              ("dnhost.dbg", os.path.join(debug_dir, "dnhost.dbg"), "symbol server"),
                              ("libcoreclr.so", os.path.join(moved, "rt", "libcoreclr.so"), "cache of symbol server")):
        want = note(name, os.path.join(cache, keys[path]), f"{route} {server.url}")
        t.check(want in found, f"gcore, HTTP store: {want!r} in {found}")
    server.stop()
    # The server is gone: the cache still serves what it holds.
    rc, out, err = cli(["bt", cores["gcore"], "--symbol-path", spec])
    check_host_frame(out, "gcore, HTTP store gone")
    want = note("dnhost.dbg", os.path.join(cache, keys[os.path.join(debug_dir, "dnhost.dbg")]),
                f"cache of symbol server {server.url}")
    t.check(want in notes(err), f"gcore, HTTP store gone: {want!r}")


def check_debuginfod(s, cores, moved, debug_dir, tmp):
    served = os.path.join(tmp, "debuginfod-files")
    for path in (os.path.join(moved, "bin", "dnhost"), os.path.join(debug_dir, "dnhost.dbg"),
                 os.path.join(moved, "rt", "libcoreclr.so")):
        t.link_or_copy(path, os.path.join(served, os.path.basename(path)))
    host_id = ss.elf_build_id(os.path.join(debug_dir, "dnhost.dbg"))
    server = ss.Debuginfod(served, tmp, host_id)
    dcache = os.path.join(tmp, "debuginfod-cache")
    try:
        rc, out, err = cli(["bt", cores["gcore"]], env={"DEBUGINFOD_URLS": server.url, "DEBUGINFOD_CACHE_PATH": dcache})
        t.check_eq(rc, 0, f"debuginfod: bt exit code ({err})")
        check_host_frame(out, "debuginfod")
        found = notes(err)
        coreclr_id = ss.elf_build_id(os.path.join(moved, "rt", "libcoreclr.so"))
        for name, path in (("dnhost", f"{dcache}/{host_id}/executable"), ("dnhost.dbg", f"{dcache}/{host_id}/debuginfo"),
                           ("libcoreclr.so", f"{dcache}/{coreclr_id}/executable")):
            want = note(name, path, f"debuginfod {server.url}")
            t.check(want in found, f"debuginfod: {want!r} in {found}")
    finally:
        server.stop()


def check_truncated(s, cores, app, tmp, pid):
    cut = os.path.join(tmp, "cut.core")
    shutil.copy(cores["full"], cut)
    size = os.path.getsize(cut)
    new_size = size - size // 1000
    os.truncate(cut, new_size)
    # What is missing, read here from the program headers.
    with open(cut, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 32)
        phnum, = struct.unpack_from("<H", head, 56)
        f.seek(phoff)
        phdrs = [struct.unpack("<IIQQQQQQ", f.read(56)) for _ in range(phnum)]
    end = max(off + filesz for _, _, off, _, _, filesz, _, _ in phdrs)
    loads = [p for p in phdrs if p[0] == 1]
    cut_loads = [p for p in loads if p[2] + p[5] > new_size]
    lost = sum(p[2] + p[5] - max(new_size, p[2]) for p in phdrs if p[0] in (1, 4) and p[2] + p[5] > new_size)
    rc, out, err = cli(["bt", "--strict", cut])
    t.check_eq((rc, out, err), (1, "", f"asyncdac: error: {cut}: core file is truncated ({new_size} of {end} bytes)\n"),
               "cut core, --strict")
    warning = (f"asyncdac: warning: {cut}: core file is truncated ({new_size} of {end} bytes): {len(cut_loads)} of "
               f"{len(loads)} memory segments lack {lost} bytes; reads there fail")
    rc, out, err = cli(PS + [cut, "--symbol-path", app])
    check_chain(rc, out, err, s, None, "cut core")
    t.check_eq(err.splitlines(), [warning, note("nested.pdb", os.path.join(app, "nested.pdb"), "symbol path")],
               "cut core: the warning, then the notes")
    # The main thread's stack was in the part cut off: its first frame, then why no more.
    rc, out, err = cli(["bt", cut])
    t.check_eq(rc, 0, "cut core, bt: exit code")
    t.check_eq(err.splitlines(), [warning], "cut core, bt: stderr")
    thread = out.split("\n\n")[0].splitlines()
    stack = next(p for p in cut_loads if p[3] <= regs_sp(cut, pid) < p[3] + p[6])
    kept = max(0, new_size - stack[2])
    want = (f"  frame #1: error: {cut}: the core was cut short of thread {pid}'s stack "
            f"(0x{stack[3] + kept:x}-0x{stack[3] + stack[5]:x})")
    t.check_eq(thread[-1:], [want], "cut core, bt: the main thread's stack")


def check_lldb(s, cores, moved, want_id, tmp):
    """In LLDB, the plugin takes its symbol path from target.debug-file-search-paths."""
    app = os.path.join(moved, "app")
    wrong = os.path.join(tmp, "wrong")
    store = os.path.join(tmp, "store")
    spec = f"srv*{os.path.join(tmp, 'lldb-cache')}*file://{store}"
    pre = [f"settings append target.exec-search-paths {os.path.join(moved, x)}" for x in ("rt", "bin")]
    cmds = ["async ps", f"settings append target.debug-file-search-paths {app}", "async ps",
            f'settings set target.debug-file-search-paths "{spec}"', "async ps",
            f"settings set target.debug-file-search-paths {wrong}", "async ps"]
    out = b.run_lldb(pre + [f"target create --core {cores['full']}"], cmds, "lldb")
    frame = re.compile(r"^  async #(\d): 0x[0-9a-f]{16} nested\.dll`(.*) \+ 0x[0-9a-f]+ (at (\S+):(\d+)|\[IL_[0-9a-f]+\]) "
                       r"\[state 0\]$")
    got_id = ss.pdb_id(os.path.join(wrong, "nested.pdb"))
    for nth, (what, with_lines, want_note) in enumerate([
            ("nothing", False, "no PDB for nested.dll (none beside it, none embedded)"),
            ("a directory", True, None), ("a file:// server", True, None),
            ("a mismatched PDB", False, f"no PDB for nested.dll: {wrong}/nested.pdb does not match it (PDB id {got_id}, "
                                        f"the assembly wants {want_id})")]):
        text = b.lldb_output(out, "async ps", nth).splitlines()
        frames = [(i, frame.match(line)) for i, line in enumerate(text) if line.startswith("  async #")]
        if not t.check_eq(len(frames), 3, f"lldb, {what}: frames"):
            continue
        for (i, m), prefix, line in zip(frames, s.prefixes, s.lines):
            if not t.check(m, f"lldb, {what}: frame line {text[i]!r}"):
                continue
            t.check(m.group(2).startswith(prefix), f"lldb, {what}: {m.group(2)} is {prefix}...")
            t.check_eq((m.group(4), int(m.group(5))) if with_lines and m.group(4) else None,
                       ("Program.cs", line) if with_lines else None, f"lldb, {what}: {prefix} line")
            following = text[i + 1] if i + 1 < len(text) else ""
            t.check_eq(following if following.startswith("      note: ") else None,
                       f"      note: {want_note}" if want_note else None, f"lldb, {what}: {prefix} note")

    # Cores LLDB finds no module of (none of the files is at its recorded path, and no
    # target.exec-search-paths is set): the plugin reads the core with the CLI's reader, its
    # modules as the core records them, what the core lacks from the symbol path. `async ps` is
    # the CLI's `ps` with the same path; without one, the same error as the CLI's.
    path = ":".join([app, os.path.join(moved, "rt"), os.path.join(moved, "bin"), os.path.join(tmp, "debug")])
    for kind in ("gcore", "heap"):
        rc, want, err = cli(["ps", cores[kind], "--symbol-path", path])
        t.check_eq(rc, 0, f"{kind}, symbol path: ps exit code ({err})")
        _, _, cli_err = cli(["ps", cores[kind]])
        rc, _, err = t.lldb([f"target create --core {cores[kind]}", "async ps"], timeout=300)
        t.check_eq((rc, err), (1, cli_err.replace("asyncdac: error: ", "error: ", 1)),
                   f"lldb, {kind}, nothing: exit code and the CLI's error (the runtime's types are unreadable)")
        out = b.run_lldb([f"settings set target.debug-file-search-paths {path.replace(':', ' ')}",
                          f"target create --core {cores[kind]}"], ["async ps"], f"lldb, {kind}, symbol path")
        t.check_eq(b.lldb_output(out, "async ps"), want, f"lldb, {kind}, symbol path: async ps against the CLI's ps")

    # LLDB's own frames: LLDB finds none of the core's modules (no target.exec-search-paths); the
    # plugin shows it the ELF files the core reader reads them from (the symbol path's, matched by
    # identity) before a command that unwinds, so that LLDB names the native frames (dnhost's from
    # dnhost.dbg, which LLDB finds through the same setting) and unwinds into the managed ones.
    # The gcore core and createdump's with-heap core lack CoreLib's ReadyToRun code (a mapped file's
    # pages), where LLDB's unwinding stops; the plugin's frames go on with the core reader's (which
    # reads them from the symbol path), so its symbol file covers those methods too, and LLDB
    # unwinds them.
    want = ["managed`System.Threading.Thread.Sleep()",
            "managed`AsyncdacSamples.Sample.ParkForever() at Sample.cs:30:13",
            "managed`AsyncdacSamples.NestedApp.Main() at Program.cs:157:13",
            "libcoreclr.so`coreclr_execute_assembly", f"dnhost`main() at host.c:{host_line()}:10"]
    for kind in ("full", "gcore", "heap"):
        out = b.run_lldb([f"settings set target.debug-file-search-paths {path.replace(':', ' ')}",
                          f"target create --core {cores[kind]}"], ["thread backtrace"], f"lldb, LLDB's frames, {kind}")
        names = [re.sub(r"\(.*\)", "()", text).split(" + ")[0]
                 for _, _, text in frames_of(raw_section(out, "thread backtrace"), 1)]
        t.check_eq([n for n in names if n in want], want,
                   f"lldb, LLDB's own backtrace of the main thread of the {kind} core (names: {names})")
    # lldb-dap opening the cores as an IDE does, with a command at its stop (stopCommands): the same.
    for kind in ("full", "gcore"):
        dap = DapClient([LLDB_DAP], timeout=120)
        try:
            dap.initialize()
            dap.attach({"coreFile": cores[kind], "stopCommands": ["async symbols --stacks"],
                        "initCommands": [f"plugin load {t.PLUGIN}",
                                         f"settings set target.debug-file-search-paths {path.replace(':', ' ')}"]})
            main_id = next((th["id"] for th in dap.threads() if th.get("name") == "dnhost"), None)
            got = [(f.get("name"), f.get("line")) for f in dap.stack(main_id)] if main_id else []
        finally:
            dap.close()
        for part in (("AsyncdacSamples.Sample.ParkForever()", 30),
                     ("AsyncdacSamples.NestedApp.Main(System.String[])", 157),
                     ("coreclr_execute_assembly", 0), ("main", host_line())):
            t.check(part in [(n, line if part[1] else 0) for n, line in got],
                    f"lldb-dap, the {kind} core: the main thread's stackTrace has {part} (got: {got})")

    # Two targets: LLDB keeps target.* settings per target, and each target keeps the path it was
    # given; the first target set to the path the second one has must get it (not keep its own).
    cmds = [f"settings set target.debug-file-search-paths {wrong}", "async ps",
            f"target create --core {cores['full']}", f"settings set target.debug-file-search-paths {app}", "async ps",
            "target select 0", f"settings set target.debug-file-search-paths {app}", "async ps"]
    out = b.run_lldb(pre + [f"target create --core {cores['full']}"], cmds, "lldb, two targets")
    for nth, (what, want) in enumerate((("the first target, a mismatched PDB", 0), ("the second, a directory", 3),
                                        ("the first, set to the second's path", 3))):
        text = b.lldb_output(out, "async ps", nth).splitlines()
        lines = [m.group(5) for m in map(frame.match, text) if m and m.group(4)]
        t.check_eq(len(lines), want, f"lldb, two targets, {what}: frames with lines\n" + "\n".join(text))


def regs_sp(core, tid):
    """rsp of thread tid from the core's NT_PRSTATUS notes."""
    with open(core, "rb") as f:
        data = f.read(1 << 20)  # createdump writes the notes first
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    for i in range(phnum):
        typ, _, off, _, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i)
        if typ != 4:
            continue
        pos = off
        while pos < off + filesz:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            desc = pos + 12 + (namesz + 3) // 4 * 4
            if ntype == 1 and struct.unpack_from("<I", data, desc + 32)[0] == tid:
                return struct.unpack_from("<Q", data, desc + 112 + 19 * 8)[0]
            pos = desc + (descsz + 3) // 4 * 4
    raise SystemExit(f"FAIL: no NT_PRSTATUS for {tid} in {core}")


main()
