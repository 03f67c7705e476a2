"""integration.container: a live process in a mount namespace of its own (a container) is read with its own files.

A process in a container names its files by the container's paths (/proc/<pid>/maps): from the
host, or from a debugging sidecar sharing its pid namespace, the same path is missing or is another
file. asyncdac opens them where the process sees them, through /proc/<pid>/root.

The nested and running samples (Debug) run from a copy of the runtime, dnhost and the apps,
bind-mounted at a directory M, in a mount namespace and a pid namespace of their own (`unshare
--pid --fork --mount-proc`: the app is pid 1 there). On the host, M holds decoys at
the same paths: the Release build's nested.pdb and nested.dll (another PDB id) and .NET 10's
libcoreclr.so. The same sample started normally is the reference. Through the CLI (--pid) and
lldb-22 (attached, the plugin loaded):
  - `ps`: the container's stacks are the reference's, with their lines (Program.cs:140, 80, 113):
    the PDB beside the assembly as the process sees it, not the host's decoy, and no "no PDB" note;
  - `bt`: the main thread's frames are the reference's, native ones included (libcoreclr.so's,
    unwound with the container's libcoreclr.so, not the decoy at the host's path), with the lines
    of its managed frames (Sample.cs:30, Program.cs:157);
  - lldb-22 attached as usual lists none of the container's modules; the plugin lists them from
    /proc/<pid>/maps: `async ps` as the reference's CLI ps; the same when LLDB is told where the
    container's files are (`target create /proc/<pid>/root<exe>`, `target modules search-paths add
    / /proc/<pid>/root/`);
  - LLDB's own `thread backtrace` of the main thread, attached as usual: the plugin showed LLDB the
    container's ELF files from /proc/<pid>/root, so LLDB names and unwinds the native frames
    (libc's, libcoreclr.so's, dnhost`main at host.c:222) and reaches the managed ones
    (Sample.cs:30, Program.cs:157): the frames LLDB shows when told where the files are. The same
    when this machine has a dnhost at the container's path too: LLDB then loads it and the decoy
    libcoreclr.so from here, and the plugin replaces the decoy with the container's file. The
    plugin does it as LLDB reads the threads at each stop: the stop LLDB prints on attaching names
    frame #0 (libc's), and lldb-dap, which runs no command first, shows the main thread's frames
    named, with their lines (libc's, the managed ones, coreclr_execute_assembly, main at host.c:222);
  - the running sample: the runtime records its threads by their ids in the container; `ps` says
    the chain runs on the thread's id here (NSpid's first), `bt --thread` of that thread ends in
    the chain's async frames as the reference's does, and lldb-22's `bt async` of it shows them
    (attached as usual, and told where the files are); LLDB's own `thread backtrace` of it, the
    chain's frames spliced in, is the same attached as usual as told where the files are;
  - a gcore core of it, made here: the core numbers threads by this machine's ids, the runtime's
    record has the container's; `ps` and `bt` of the core find the thread by its stack pointer
    (inside the record's stack) and show the chain running on it, as the reference's; in lldb-22,
    which finds none of the container's files, `async ps` of the core is the CLI's, and `bt async`
    of that thread shows the chain.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from dapclient import DapClient, DapError  # noqa: E402
from lldbframes import frames_of, raw_section, selected_index  # noqa: E402

# lldb-dap of the same LLDB: next to lldb-22's real binary (/usr/lib/llvm-22/bin/).
LLDB_DAP = os.environ.get("ADAC_LLDB_DAP") or os.path.join(
    os.path.dirname(os.path.realpath(shutil.which(t.LLDB) or t.LLDB)), "lldb-dap")


def stacks(out):
    """A listing with addresses and offsets masked: what two runs of one sample share."""
    return re.sub(r" \+ (0x[0-9a-f]+|\d+)", " + OFF", t.normalize(out))


def main_thread(out):
    """The frames of `bt`'s first thread, masked as stacks() masks them."""
    lines = out.split("\n\n")[0].splitlines()
    return stacks("\n".join(line for line in lines if line.lstrip().startswith("frame #")))


def cli(args):
    rc, out, err = t.run([t.CLI] + args, timeout=120, env={"DEBUGINFOD_URLS": ""})
    t.check_eq(rc, 0, f"exit code of asyncdac {' '.join(args)} (stderr: {err.strip()})")
    return out


def ns_tid(pid, tid):
    """The thread's id in its process's own pid namespace: the last of NSpid's (the kernel's)."""
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        return int(next(line for line in f if line.startswith("NSpid:")).split()[-1])


def host_tid(pid, tid_inside):
    return next(int(x) for x in os.listdir(f"/proc/{pid}/task") if ns_tid(pid, int(x)) == tid_inside)


def contained(files, mount, scenario):
    """Starts the sample (Debug) in a mount and a pid namespace of their own, with files bind-mounted
    at mount: (Sample, its pid here)."""
    script = f'mount --bind "$1" "$2" && exec "$2/dnhost" "$2/runtime" "$2/app/{scenario}/{scenario}.dll"'
    proc, ready = t.start(["unshare", "--pid", "--fork", "--mount-proc", "--propagation", "private",
                           "sh", "-c", script, "sh", files, mount], timeout=120)
    for s in (proc.stdout, proc.stderr):
        b.threading.Thread(target=b._drain, args=(s,), daemon=True).start()
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        pid = int(f.read().split()[0])
    return b.Sample(proc, ready), pid


def lldb_frames(out, thread):
    """The frames of `thread backtrace` of thread index `thread` in lldb's output (lldbframes reads
    past the events LLDB prints into it), their addresses, offsets and arguments left out: names and
    lines. (Attached as usual, LLDB showed the running thread's two innermost frames without their
    arguments.)"""
    frames = frames_of(raw_section(out, "thread backtrace"), thread)
    return stacks("\n".join(f"frame #{i}: " + re.sub(r"\(.*\)", "", text) for i, _, text in frames))


def from_gcore(out):
    """A listing of a gcore core, masked as masked_thread() masks, without the notes that say the
    symbol path gave an assembly (gcore leaves out its pages), and without thread names (a core has
    none)."""
    out = "".join(line for line in out.splitlines(True) if not line.lstrip().startswith("note: running.dll from "))
    return re.sub(r", name = '[^']*'", "", masked_thread(out))


def masked_thread(out):
    return re.sub(r"tid = \d+", "tid = N", re.sub(r"thread \d+", "thread N", stacks(out)))


def main():
    d = t.dotnet_env()
    tmp = t.tmpdir()
    files, mount = os.path.join(tmp, "files"), os.path.join(tmp, "container")
    t.copy_tree(d["DN_RUNTIME11"], os.path.join(files, "runtime"))
    t.link_or_copy(d["DN_HOST"], os.path.join(files, "dnhost"))
    for scenario in ("nested", "running"):
        t.copy_tree(os.path.join(d["DN_APPS"], "11", "Debug", scenario), os.path.join(files, "app", scenario))
    # The host's files at the container's paths: another build of the app, another runtime.
    t.copy_tree(os.path.join(d["DN_APPS"], "11", "Release", "nested"), os.path.join(mount, "app", "nested"))
    t.link_or_copy(os.path.join(d["DN_RUNTIME10"], "libcoreclr.so"), os.path.join(mount, "runtime", "libcoreclr.so"))

    ref = b.sample("nested")
    ctr, pid = contained(files, mount, "nested")
    t.check_eq(ctr.fields.get("pid"), "1", "the sample's pid in its own pid namespace (READY)")
    b.wait_parked(ref.pid, ref.pid)
    b.wait_parked(pid, pid)
    maps = open(f"/proc/{pid}/maps").read()
    t.check(os.path.join(mount, "runtime", "libcoreclr.so") in maps and
            os.path.join(mount, "app", "nested", "nested.dll") in maps,
            f"the process maps its files at the container's paths under {mount}")
    t.check(os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt"),
            "the process is in a mount namespace of its own")

    want = cli(["ps", "--pid", str(ref.pid)])
    for line in ("at Program.cs:140 [state 0]", "at Program.cs:80 [state 0]", "at Program.cs:113 [state 0]"):
        t.check(line in want, f"the reference's ps has '{line}'")
    got = cli(["ps", "--pid", str(pid)])
    t.check_eq(stacks(got), stacks(want), "ps of the process in the container (masked) against the reference's")
    t.check("no PDB" not in got, "no 'no PDB' note in the container's ps")

    want = main_thread(cli(["bt", "--pid", str(ref.pid)]))
    for part in ("nested.dll`AsyncdacSamples.Sample.ParkForever() + OFF at Sample.cs:30",
                 "nested.dll`AsyncdacSamples.NestedApp.Main(System.String[]) + OFF at Program.cs:157",
                 "libcoreclr.so`coreclr_execute_assembly + OFF", "dnhost`main + OFF"):
        t.check(part in want, f"the reference's main thread has '{part}'")
    got = main_thread(cli(["bt", "--pid", str(pid)]))
    t.check_eq(got, want, "bt's main thread in the container (masked) against the reference's")

    # lldb-22 attached, the plugin reading through LLDB's process. LLDB looks for a process's
    # modules at their paths on the host and lists none of the container's: the plugin lists them
    # from /proc/<pid>/maps, as the CLI does. Told where the container's files are, as README says
    # (for LLDB's own names of native frames), LLDB has them: the same listing.
    root = f"/proc/{pid}/root"
    want = stacks(cli(["ps", "--pid", str(ref.pid)])).strip()
    frames = {}
    decoy_exe = os.path.join(mount, "dnhost")
    for what, setup in (("attached as usual", []),
                        ("told where the files are", [f"target create {root}{os.readlink(f'/proc/{pid}/exe')}",
                                                      f"target modules search-paths add / {root}/"]),
                        ("attached as usual, the host having files at its paths", [])):
        if what.endswith("its paths"):
            # An executable at the container's path here: LLDB loads it and, from the process's
            # list of libraries, the decoy libcoreclr.so at the same address as the container's.
            t.link_or_copy(d["DN_HOST"], decoy_exe)
        rc, out, err = t.lldb(setup + [f"process attach --pid {pid}", "async ps", "thread backtrace", "image list",
                                       "process detach"], timeout=180)
        t.check_eq(rc, 0, f"lldb-22 {what}: exit code (stderr: {err.strip()[-500:]})")
        listing = out[out.find("chain #0"):]
        listing = listing[:listing.find("(lldb) thread backtrace")]
        t.check_eq(stacks(listing).strip(), want,
                   f"lldb-22 {what}: `async ps` of the process in the container (masked) against the reference's CLI ps")
        frames[what] = lldb_frames(out, 1)
        attach = out[out.find("(lldb) process attach"):out.find("(lldb) async ps")]
        t.check(re.search(r"\* thread #1, name = 'dnhost', stop reason = signal SIGSTOP\n    frame #0: 0x[0-9a-f]+ libc\.so\.6`",
                          attach),
                f"lldb-22 {what}: the stop LLDB prints on attaching names the main thread's frame in libc "
                f"(got: {attach[:600]})")
        images = out[out.find("(lldb) image list"):]
        t.check(f"{root}{mount}/runtime/libcoreclr.so" in images,
                f"lldb-22 {what}: LLDB has the container's libcoreclr.so (image list: {images[:1500]})")
        t.check(f"\n{mount}/runtime/libcoreclr.so" not in images and f" {mount}/runtime/libcoreclr.so" not in images,
                f"lldb-22 {what}: LLDB does not have the decoy at the host's path")
    for part in ("libc.so.6`", "managed`AsyncdacSamples.Sample.ParkForever at Sample.cs:30",
                 "managed`AsyncdacSamples.NestedApp.Main at Program.cs:157",
                 "libcoreclr.so`coreclr_execute_assembly + OFF", "dnhost`main at host.c:222"):
        t.check(part in frames["told where the files are"],
                f"lldb-22 told where the files are: `thread backtrace` of the main thread has '{part}' "
                f"(got: {frames['told where the files are']})")
    os.remove(decoy_exe)
    for what in ("attached as usual", "attached as usual, the host having files at its paths"):
        t.check_eq(frames[what], frames["told where the files are"],
                   f"lldb-22 {what}: `thread backtrace` of the main thread (masked) against LLDB told where the files are")
    # lldb-dap, attached as an IDE attaches: it runs no command before it asks for frames.
    dap = DapClient([LLDB_DAP], timeout=120)
    try:
        dap.initialize()
        dap.attach({"pid": pid, "stopOnEntry": True, "initCommands": [f"plugin load {t.PLUGIN}"]})
        main_id = next((th["id"] for th in dap.threads() if th.get("name") == "dnhost"), None)
        got = [(stacks(f.get("name") or ""), f.get("line")) for f in dap.stack(main_id)] if main_id else []
    finally:
        try:
            dap.request("disconnect", {"terminateDebuggee": False})
        except (DapError, OSError):
            pass
        dap.close()
    t.check_eq(len(got), frames["told where the files are"].count("frame #"),
               f"lldb-dap: the main thread's stackTrace has as many frames as LLDB told where the files are (got: {got})")
    for part in (("nested.dll`AsyncdacSamples.Sample.ParkForever() + OFF at Sample.cs:30", 0),
                 ("nested.dll`AsyncdacSamples.NestedApp.Main(System.String[]) + OFF at Program.cs:157", 0),
                 ("main", 222)):
        t.check(part in got, f"lldb-dap: the main thread's stackTrace has {part} (got: {got})")
    t.check("coreclr_execute_assembly" in [name for name, _ in got],
            f"lldb-dap: the main thread's stackTrace has coreclr_execute_assembly (got: {got})")
    top = re.search(r"frame #0: libc\.so\.6`(\S+)", frames["told where the files are"])
    t.check(top and got and got[0][0] == top.group(1),
            f"lldb-dap: the main thread's first frame is named as LLDB told where the files are names it "
            f"(got: {got[:1]}, LLDB: {top.group(1) if top else None})")
    ref.kill()
    ctr.kill()

    # A chain running on a thread: the runtime records the thread by its id in the container
    # (READY's tid), this machine and LLDB know it by another.
    ref = b.sample("running")
    ctr, pid = contained(files, mount, "running")
    inside = int(ctr.fields["tid"])
    tid = host_tid(pid, inside)
    t.check(tid != inside, f"the running thread's id here ({tid}) is not its id in the container ({inside})")
    b.wait_parked(ref.pid, ref.tid)
    b.wait_parked(pid, tid)
    got = cli(["ps", "--pid", str(pid)])
    t.check(f"chain #0: running on thread {tid} (managed thread " in got,
            f"ps: the chain runs on thread {tid}, this machine's id (got: {got.splitlines()[:1]})")
    t.check_eq(masked_thread(got), masked_thread(cli(["ps", "--pid", str(ref.pid)])),
               "ps of the running sample in the container (masked) against the reference's")
    want = cli(["bt", "--pid", str(ref.pid), "--thread", str(ref.tid)])
    t.check("async #0: 0xADDR running.dll`AsyncdacSamples.RunningApp.RunMiddle() + OFF at Program.cs:116" in stacks(want),
            "the reference's running thread has the chain's async frames")
    t.check_eq(masked_thread(cli(["bt", "--pid", str(pid), "--thread", str(tid)])), masked_thread(want),
               f"bt of the running thread {tid} in the container (masked) against the reference's")
    # A core of it made on this machine (gcore) numbers its threads by this machine's ids; the
    # runtime's record still has the container's: the thread is the one whose stack pointer is in
    # the record's stack. gcore leaves out the files' pages: the symbol path gives them.
    core = t.gcore(pid, os.path.join(tmp, "running.core"))
    sympath = ["--symbol-path", f"{files}/app/running:{files}/runtime"]
    got = cli(["ps", core] + sympath)
    t.check(f"chain #0: running on thread {tid} (managed thread " in got,
            f"ps of a gcore core: the chain runs on thread {tid}, the core's id (got: {got.splitlines()[:1]})")
    t.check_eq(from_gcore(got), masked_thread(cli(["ps", "--pid", str(ref.pid)])),
               "ps of a gcore core of the running sample in the container (masked) against the reference's")
    t.check_eq(from_gcore(cli(["bt", core, "--thread", str(tid)] + sympath)), re.sub(r", name = '[^']*'", "", masked_thread(want)),
               f"bt of the running thread {tid} in a gcore core (masked) against the reference's live bt")
    # The same core in lldb-22, where LLDB finds none of the container's files: the plugin reads
    # the core as the CLI does, and names the thread by the core's id.
    lldb_sympath = f"settings set target.debug-file-search-paths {files}/app/running {files}/runtime"
    out = b.run_lldb([lldb_sympath, f"target create --core {core}"],
                     ["async ps", f"thread select --thread-id {tid}", "bt async"], "lldb-22, gcore core")
    # (LLDB, which has none of the container's files, unwinds that thread as far as libc only, before
    # the plugin's symbol file is loaded: the method the chain resumed is not known there, and the
    # listing says where to look instead, as it does wherever the thread's frames do not say.)
    hint = "  (the method this chain resumed runs on the thread: see its physical frames with bt)\n"
    resumed = re.sub(r"\n  running: 0x[^\n]*\(the method this chain resumed; bt shows what it calls\)\n", "\n", got)
    resumed = resumed.replace("\n\n1 chain listed", "\n" + hint + "\n1 chain listed")
    t.check(resumed != got, "ps of the gcore core: the method the chain resumed, from the thread's frames")
    t.check_eq(b.lldb_output(out, "async ps"), resumed, "lldb-22 `async ps` of the gcore core against the CLI's ps")
    chain = [line for line in b.lldb_output(out, "bt async").splitlines() if line.startswith("  async #")]
    t.check_eq([re.sub(r"0x[0-9a-f]+", "0xADDR", line) for line in chain],
               ["  async #0: 0xADDR running.dll`AsyncdacSamples.RunningApp.RunMiddle() + 0xADDR at Program.cs:116 [state 0]",
                "  async #1: 0xADDR running.dll`AsyncdacSamples.RunningApp.RunTop() + 0xADDR at Program.cs:124 [state 0]"],
               f"lldb-22 `bt async` of thread {tid} of the gcore core: the chain's frames")
    root = f"/proc/{pid}/root"
    frames = {}
    for what, setup in (("attached as usual", []),
                        ("told where the files are", [f"target create {root}{os.readlink(f'/proc/{pid}/exe')}",
                                                      f"target modules search-paths add / {root}/"])):
        rc, out, err = t.lldb(setup + [f"process attach --pid {pid}", f"thread select --thread-id {tid}", "bt async",
                                       "thread backtrace", "process detach"], timeout=180)
        t.check("RunningApp.RunMiddle() + " in out and "at Program.cs:116 [state 0]" in out,
                f"lldb-22 {what}: `bt async` of the running thread in the container has its chain "
                f"(stdout: {out[-1500:]})")
        frames[what] = lldb_frames(out, selected_index(out, f"thread select --thread-id {tid}"))
    t.check("RunningApp.RunMiddle at Program.cs:116" in frames["told where the files are"],
            f"lldb-22 told where the files are: `thread backtrace` of the running thread has the chain's frames "
            f"(got: {frames['told where the files are']})")
    t.check_eq(frames["attached as usual"], frames["told where the files are"],
               "lldb-22 attached as usual: `thread backtrace` of the running thread (masked) against LLDB told where "
               "the files are")
    ref.kill()
    ctr.kill()
    t.finish()


if __name__ == "__main__":
    try:
        main()
    except subprocess.TimeoutExpired as e:
        t.fail(f"timed out: {e}")
        t.finish()
