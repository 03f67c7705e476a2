"""btsamples - shared pieces of the `bt` integration tests (tests/integration/test_bt_*.py).

Samples (targets/dotnet, built by scripts/dotnet-setup: the `dotnet` test fixture), cores, the
oracle (tests/oracle: ClrMD over Microsoft's DAC), and what asyncdac must print, derived from the
oracle and the samples' expected.json, never from asyncdac itself:

  sample(scenario, config, mode=None, env=None) -> Sample(proc, pid, ready, fields)
  wait_parked(pid, tid)                        until the thread is parked (READY comes just before)
  make_core(pid, path, how)                    scripts/make-core (createdump | gcore)
  sample_core(scenario, config, tmp, parked)   a createdump core of a sample, which is then killed
  oracle(core, tmp) -> Oracle                  `oracle dump`, indexed (continuations, chains, tasks)
  oracle_objects(core, tmp, addrs, statics, stacks)
                                               `oracle objects`: fields of objects, static paths,
                                               a thread's stack frames (kind, IP, method)
  display(clrmd_name)                          ClrMD's names in asyncdac's display format
  expected_frame_line(index, frame)            "  async #N: 0x... module`Method(...) + 0x.. at F:L [state S]"
  check_chain_json(chain, want, what)          a --json chain against an oracle chain
  lldb_sections(out) / lldb_output(out, cmd)   lldb -b stdout split per echoed command
  lldb_thread_index(out, tid)                  a thread's index in `thread list` output

asyncdac's frame names (the SOS style of dac/types/typename.h) follow SOS's
`Namespace.Type.Method(ParamTypes)` with C#-like generic arguments: ClrMD's
`Holder`1[[System.Int32, System.Private.CoreLib]]` is `Holder<Int32>`, `Task`1<Int32>` is
`Task<Int32>`, and primitive types are named as in signatures (`Int32`, not `System.Int32`) also
inside generic arguments. display() applies exactly these rules.
"""
import json
import os
import re
import threading
import time

import adactest as t

DOTNET_DIR = t.DOTNET_DIR
PTR = 8

# ClrMD's full names of the primitive types, and how signatures (and asyncdac) name them.
PRIMITIVES = {
    "System.Boolean": "Boolean", "System.Char": "Char", "System.SByte": "SByte", "System.Byte": "Byte",
    "System.Int16": "Int16", "System.UInt16": "UInt16", "System.Int32": "Int32", "System.UInt32": "UInt32",
    "System.Int64": "Int64", "System.UInt64": "UInt64", "System.Single": "Single", "System.Double": "Double",
    "System.IntPtr": "IntPtr", "System.UIntPtr": "UIntPtr",
}


h = t.h


def a16(v):
    """An address as asyncdac prints it: 0x + 16 hex digits."""
    return f"0x{h(v):016x}"


dn = t.dotnet_env


def expected(scenario):
    with open(os.path.join(t.SOURCE, "targets", "dotnet", scenario, "expected.json")) as f:
        return json.load(f)


# ---- samples and cores ------------------------------------------------------------------------

class Sample:
    def __init__(self, proc, ready):
        self.proc = proc
        self.pid = proc.pid
        self.ready = ready
        self.fields = dict(kv.split("=", 1) for kv in ready.split()[1:] if "=" in kv)

    @property
    def tid(self):
        return int(self.fields["tid"])

    def kill(self):
        try:
            os.kill(self.pid, 9)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except Exception:
            pass


def _drain(stream):
    try:
        for _ in iter(stream.readline, ""):
            pass
    except Exception:
        pass


def sample(scenario, config="Debug", mode=None, env=None):
    """Starts a .NET 11 sample (killed when the test ends); returns once it printed READY."""
    d = dn()
    app = os.path.join(d["DN_APPS"], "11", config, scenario, scenario + ".dll")
    argv = [d["DN_HOST"], d["DN_RUNTIME11"], app] + (["--mode", mode] if mode else [])
    proc, ready = t.start(argv, timeout=120, env=env)
    # The sample may write more (crash messages): keep its pipes from filling up.
    for s in (proc.stdout, proc.stderr):
        threading.Thread(target=_drain, args=(s,), daemon=True).start()
    return Sample(proc, ready)


def wait_parked(pid, tid, timeout=30):
    """A sample prints READY just before it parks (ParkForever, ParkRunning), which may still have
    to be compiled: waits until the thread sits in the same futex wait (syscall 202, same stack
    and PC) for 150 ms."""
    deadline = time.time() + timeout
    last, same = None, 0
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                cur = f.read().strip()
        except OSError:
            cur = None
        if cur and cur.startswith("202 ") and cur == last:
            same += 1
            if same >= 3:
                return
        else:
            same = 0
        last = cur
        time.sleep(0.05)
    t.fail(f"thread {tid} did not settle in a futex wait (ParkRunning) within {timeout}s: {last}")


def make_core(pid, path, how="createdump"):
    rc, out, err = t.run([os.path.join(t.SOURCE, "scripts", "make-core"), str(pid), path, "--" + how], timeout=300)
    if rc != 0 or not os.path.exists(path):
        raise SystemExit(f"FAIL: make-core {pid} --{how}: {err.strip()}")
    return path


def sample_core(scenario, config, tmp, parked=False, fields=None, mode=None):
    """A createdump core of a sample (tmp/<scenario>.core); the sample is killed once it is written.
    parked: first wait until its main thread is parked (wait_parked). fields: a dict that receives
    the fields of the sample's READY line. mode: the sample's --mode."""
    s = sample(scenario, config, mode=mode)
    if fields is not None:
        fields.update(s.fields)
    try:
        if parked:
            wait_parked(s.pid, s.pid)
        return make_core(s.pid, os.path.join(tmp, f"{scenario}.core"))
    finally:
        s.kill()


# ---- the oracle -------------------------------------------------------------------------------

class Oracle:
    def __init__(self, data):
        self.data = data
        self.conts = {h(c["address"]): c for c in data["continuations"]}
        self.chains = data["chains"]
        self.tasks = {h(x["address"]): x for x in data["tasks"]}
        self.chain_by_head = {h(c["head"]): c for c in data["chains"]}
        self.fields = {f["name"]: f["offset"] for f in data["layout"].get("continuation_fields", [])}

    def chain_of_task(self, task):
        return self.chain_by_head[h(self.tasks[h(task)]["head"])]

    def user_frames(self, chain):
        """The frames of an oracle chain that asyncdac shows: those with a DiagnosticIP."""
        return [f for f in chain["frames"] if h(f.get("diagnostic_ip")) and "error" not in f]

    def dispatcher_thread(self, tid):
        for th in self.data["dispatchers"].get("threads", []):
            if th["os_thread_id"] == tid:
                return th
        return None


def _oracle_env():
    return {"DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1"}


def oracle(core, tmp):
    d = dn()
    out = os.path.join(tmp, os.path.basename(core) + ".oracle.json")
    rc, _, err = t.run(["dotnet", d["DN_ORACLE"], core, "--dac", d["DN_DAC11"], "--out", out], timeout=600,
                       env=_oracle_env())
    if rc != 0:
        raise SystemExit(f"FAIL: oracle on {core} ({rc}): {err.strip()[-2000:]}")
    with open(out) as f:
        data = json.load(f)
    os.unlink(out)
    return Oracle(data)


def oracle_core_json(command, core, dac="DN_DAC11"):
    """`oracle <command> <core>`'s JSON (locks, threadpool, threads), through the DAC of dn()[dac]."""
    d = dn()
    rc, out, err = t.run(["dotnet", d["DN_ORACLE"], command, core, "--dac", d[dac]], timeout=600,
                         env=_oracle_env())
    if rc != 0:
        raise SystemExit(f"FAIL: oracle {command} on {core} ({rc}): {err.strip()[-2000:]}")
    return json.loads(out)


def oracle_locks(core):
    """`oracle locks`: ClrMD's sync blocks, thin locks and each thread's blocking records
    ({"sync_blocks", "thin_locks", "blocking"})."""
    return oracle_core_json("locks", core)


def oracle_stack_methods(core, tmp, tid):
    """The methods of ClrMD's stack of thread tid, innermost first (frames it names only)."""
    return [f["method"] for f in oracle_objects(core, tmp, stacks=[tid])["stacks"].get(str(tid), []) if f.get("method")]


def oracle_objects(core, tmp, addresses=(), statics=(), stacks=(), roots=False):
    """`oracle objects`: {"objects": {addr: {...}}, "statics": {path: {...}}, "stacks": {"tid": [...]}}
    (object keys as ints); roots: also "roots", ClrMD's GC roots [{"kind", "address", "object", "thread"}]."""
    d = dn()
    out = os.path.join(tmp, os.path.basename(core) + ".objects.json")
    argv = ["dotnet", d["DN_ORACLE"], "objects", core, "--dac", d["DN_DAC11"], "--out", out]
    for s in statics:
        argv += ["--static", s]
    for tid in stacks:
        argv += ["--stack", str(tid)]
    if roots:
        argv.append("--roots")
    argv += [hex(h(a)) for a in addresses]
    rc, _, err = t.run(argv, timeout=600, env=_oracle_env())
    if rc != 0:
        raise SystemExit(f"FAIL: oracle objects on {core} ({rc}): {err.strip()[-2000:]}")
    with open(out) as f:
        data = json.load(f)
    os.unlink(out)
    data["objects"] = {h(k): v for k, v in data["objects"].items()}
    return data


# ---- names ------------------------------------------------------------------------------------

def _instantiation(s, i):
    """Parses ClrMD's `[[T1, Asm],[T2, Asm]]` at s[i] ("[["); returns ("<T1, T2>", index after)."""
    assert s.startswith("[[", i)
    i += 1
    args = []
    while s[i] == "[":
        i += 1
        name = []
        while s[i] not in ",]":
            if s.startswith("[[", i):
                inner, i = _instantiation(s, i)
                name.append(inner)
            else:
                name.append(s[i])
                i += 1
        if s[i] == ",":  # the assembly name
            while s[i] != "]":
                i += 1
        i += 1  # ]
        args.append("".join(name))
        if s[i] == ",":
            i += 1
    i += 1  # the closing ]
    return "<" + ", ".join(args) + ">", i


def display(name):
    """ClrMD's type or method name (or signature) in asyncdac's display format."""
    if name is None:
        return None
    out, i = [], 0
    while i < len(name):
        if name.startswith("[[", i):
            inner, i = _instantiation(name, i)
            out.append(inner)
        else:
            out.append(name[i])
            i += 1
    s = re.sub(r"`\d+", "", "".join(out))
    for full, short in PRIMITIVES.items():
        s = re.sub(r"(?<=[<,\s])" + re.escape(full) + r"(?=[>,\[\]&*])", short, s)
    return s


# ---- expected output --------------------------------------------------------------------------

def exact_method(c):
    """(name, canonical name or None) of an oracle continuation's method: shared generic code is
    named by the exact instantiation the oracle found in the continuation's data."""
    m = c["method"]
    canonical = display(m["signature"])
    x = c.get("exact_instantiation")
    if not x:
        return canonical, None
    if x.get("signature"):  # the exact InstantiatedMethodDesc of a generic method
        return display(x["signature"]), canonical
    # The exact type of a generic type's method: its type part, and its one type argument where the
    # parameters have System.__Canon.
    exact_type, canon_type = display(x["type"]), display(m["type"])
    name = canonical.replace(canon_type + ".", exact_type + ".", 1)
    args = exact_type[exact_type.index("<") + 1:-1]
    if "," not in args:
        name = name.replace("System.__Canon", args)
    return name, canonical


def frame_facts(o, frame):
    """What asyncdac must say about one oracle chain frame (a continuation with a DiagnosticIP)."""
    c = o.conts[h(frame["address"])]
    m = c["method"]
    method, canonical = exact_method(c)
    return {
        "continuation": h(frame["address"]),
        "method_table": h(c["method_table"]),
        "diagnostic_ip": h(c["diagnostic_ip"]),
        "resume": h(c["resume"]),
        "state": c["state"],
        "method_desc": h(m["method_desc"]),
        "method": method,
        "canonical_method": canonical,
        "module": os.path.basename(m["module"]),
        "token": h(m["token"]),
        "code_start": h(m["hot_start"]),
        "offset": m["ip_offset"],
        "il_offset": m["il_offset"],
        "file": m.get("source_file"),
        "line": m.get("source_line"),
    }


def task_status(flags):
    """Task.Status from m_stateFlags, as System.Threading.Tasks.Task computes it."""
    for bit, status in ((0x200000, "Faulted"), (0x400000, "Canceled"), (0x1000000, "RanToCompletion"),
                        (0x800000, "WaitingForChildrenToComplete"), (0x20000, "Running"), (0x10000, "WaitingToRun"),
                        (0x2000000, "WaitingForActivation")):
        if flags & bit:
            return status
    return "Created"


def expected_awaiting(obj, info, via, token=None):
    """(text line, JSON) of the awaiting line for the awaited object obj, from the oracle's view of
    it (`oracle objects` entry or static: type, fields): a Task's line ends with its status."""
    typ = display(info.get("type"))
    line = f"  awaiting: {a16(obj)} {typ}"
    js = {"object": a16(obj), "type": typ, "field": via}
    if token is not None:
        js["token"] = token
        line += f" (token {token})"
    fields = info.get("fields") or {}
    flags = fields.get("m_stateFlags")
    if isinstance(flags, int):
        js["status"], js["state_flags"] = task_status(flags), flags
        line += f" [{task_status(flags)}]"
    what = awaited_what(typ, fields, flags)
    if what:
        js["what"] = what
        line += f" ({what})"
    return line + "\n", js


PROMISE = "never completed: a promise, such as a TaskCompletionSource's task"
NOT_RUN = "completed, but the continuation awaiting it has not run: a starved thread pool?"  # without the pool's facts (runtime not exposing them; ps.starved checks them)


def awaited_what(typ, fields, flags):
    """What asyncdac adds about an awaited object (dac/async/awaited.c), from the oracle's fields: a
    completed task; a plain task without a delegate (m_action null) is a promise never completed."""
    if not isinstance(flags, int):
        return None
    if flags & 0x1600000:
        return NOT_RUN
    plain = typ == "System.Threading.Tasks.Task" or typ.startswith("System.Threading.Tasks.Task<")
    if plain and h(fields.get("m_action")) == 0 and "m_action" in fields:
        return PROMISE
    return None


def expected_frame_line(index, f):
    line = f"  async #{index}: {a16(f['diagnostic_ip'])} {f['module']}`{f['method']} + 0x{f['offset']:x}"
    if f["file"]:
        line += f" at {os.path.basename(f['file'])}:{f['line']}"
    return line + f" [state {f['state']}]\n"


def check_frame_json(got, want, what):
    ok = True
    for key in ("continuation", "method_table", "diagnostic_ip", "resume", "method_desc", "code_start"):
        ok &= t.check_eq(h(got.get(key)), want[key], f"{what}: {key}")
    ok &= t.check_eq(h(got.get("ip")), want["diagnostic_ip"], f"{what}: ip")
    for key in ("state", "method", "canonical_method", "module", "token", "offset", "il_offset", "file", "line"):
        ok &= t.check_eq(got.get(key), want[key], f"{what}: {key}")
    ok &= t.check_eq(h(got.get("resume_method_desc")), want["method_desc"],
                     f"{what}: resume_method_desc (the Resume route names the same MethodDesc)")
    ok &= t.check_eq(got.get("note"), None, f"{what}: note")
    return ok


def check_chain_json(chain, want_frames, what, head=None, task=None, awaiting=None, end="complete"):
    """A --json chain against the expected frame facts (frame_facts of each oracle user frame)."""
    if head is not None:
        t.check_eq(h(chain.get("head")), h(head), f"{what}: head")
    if task is not None or "task" in chain:
        t.check_eq(h(chain.get("task")), h(task), f"{what}: task")
    if awaiting is not False:
        t.check_eq(chain.get("awaiting"), awaiting, f"{what}: awaiting")
    t.check_eq([h(x) for x in chain.get("ips", [])], [f["diagnostic_ip"] for f in want_frames], f"{what}: ips")
    frames = chain.get("frames", [])
    if t.check_eq(len(frames), len(want_frames), f"{what}: number of frames"):
        for i, (g, w) in enumerate(zip(frames, want_frames)):
            t.check_eq(g.get("index"), i, f"{what}: frame {i} index")
            if not check_frame_json(g, w, f"{what}: frame {i}"):
                break  # one frame's diff is enough
    t.check_eq(chain.get("end"), end, f"{what}: end")
    if end == "complete":
        t.check_eq(chain.get("error"), None, f"{what}: error")


# ---- front ends -------------------------------------------------------------------------------

def cli(args, timeout=300):
    return t.run([t.CLI] + args, timeout=timeout)


def document(text, command):
    """The payload of a command's JSON document (docs/json.md): {"schema": 1, "<command>": payload}.
    Raises ValueError when text is not JSON or not of that shape."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or list(doc) != ["schema", command] or doc["schema"] != 1:
        raise ValueError(f"not a schema 1 document of {command!r}: top level {list(doc) if isinstance(doc, dict) else doc!r}")
    return doc[command]


def cli_json(args, what):
    """The payload of `asyncdac <args> --json`."""
    rc, out, err = cli(args + ["--json"])
    if not t.check(rc == 0 and err == "", f"{what}: asyncdac {' '.join(args)} --json: rc {rc}, stderr {err!r}"):
        return None
    try:
        return document(out, args[0])
    except ValueError as e:
        t.fail(f"{what}: not JSON ({e}): {out[:500]!r}")
        return None


def ps_json_and_text(core):
    """`ps` of a core as JSON and as text; the text run must exit 0 with nothing on stderr."""
    j = cli_json(["ps", core], "ps")
    rc, text, err = cli(["ps", core])
    t.check_eq((rc, err), (0, ""), "ps: exit code and stderr")
    return j, text


def lldb_sections(out):
    """lldb -b stdout split per echoed command: [(command, output), ...] in order."""
    result = []
    for chunk in re.split(r"^\(lldb\) ", out, flags=re.M)[1:]:
        cmd, _, text = chunk.partition("\n")
        result.append((cmd, text))
    return result


# LLDB prints process stop events asynchronously; in batch mode they can land in the output of a
# later command: "Process N stopped", "* thread #N, ..., stop reason = ...", "    frame #0: ...",
# and after an attach "Executable module set to ...", "Architecture set to: ...".
LLDB_EVENT = re.compile(r"^(Process \d+ stopped\n|Executable module set to .*\n|Architecture set to: .*\n|\* thread #\d+, (name = '[^']*', )?stop reason = .*\n"
                        r"|  thread #\d+, (name = '[^']*', )?stop reason = .*\n|    frame #\d+: .*\n)", re.M)


def lldb_output(out, command, nth=0):
    """The output of the nth run of `command`, without LLDB's asynchronous stop-event lines."""
    found = [text for cmd, text in lldb_sections(out) if cmd == command]
    if len(found) <= nth:
        t.fail(f"no output section for {command!r} (#{nth}) in lldb's output:\n{out[-3000:]}")
        return ""
    return LLDB_EVENT.sub("", found[nth])


def lldb_thread_index(out, tid):
    """The index LLDB gives the thread with OS id tid, from `thread list` output."""
    m = re.search(r"thread #(\d+): tid = %d," % tid, out)
    return int(m.group(1)) if m else None


def lldb_target(core=None, pid=None):
    return [f"target create --core {core}"] if core else [f"process attach -p {pid}"]


# LLDB's own warnings, not the plugin's (e.g. when attaching while a thread is in clone3.S).
LLDB_NOISE = re.compile(r'^warning: This version of LLDB has no plugin for the language "[^"]*"\. '
                        r'Inspection of frame variables will be limited\.\n', re.M)


def run_lldb(setup, commands, what, want_rc=0):
    rc, out, err = t.lldb(setup + commands, timeout=600)
    t.check_eq((rc, LLDB_NOISE.sub("", err)), (want_rc, ""), f"{what}: lldb exit code and stderr")
    return out


# ---- text output ------------------------------------------------------------------------------

def bt_sections(text):
    """`bt` text output for threads: [(header, [frame lines], [async lines], [other lines])]."""
    threads, outside = [], False
    for line in text.splitlines():
        if line.startswith("* thread #") or line.startswith("  thread #"):
            threads.append((line, [], [], []))
            outside = False
        elif not threads or outside:
            continue
        elif line and not line.startswith(" "):
            outside = True  # after the threads (bt's note on pending stacks)
        elif line.startswith("  frame #"):
            threads[-1][1].append(line)
        elif line.startswith("  async") or line.startswith("      note:"):
            threads[-1][2].append(line)
        elif line.strip():
            threads[-1][3].append(line)
    return threads
