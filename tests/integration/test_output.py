"""output.<part>: what asyncdac prints for people and tools (issue 17), on a createdump core of the
nested sample (and the deep and fanout samples where a part says so).
  exit_codes  one convention for every command of the CLI: 0 ok, 1 the target or its analysis
              failed, 2 the command line is wrong
  json        every command's document is {"schema": 1, "<command>": payload} with the members
              docs/json.md lists, no more and no fewer; no timings unless --timings; two runs equal
  jsonl       ps --jsonl of the nested, mixed, fanout, syncwait, deadlock and locks samples: each
              kind of line against its docs/json.md table, both ways; frames and types described
              once, before use; the stacks, resolved through those lines, equal ps --json's, what
              blocks them (synchronous waits, a lock, an await cycle) included
  coalesce    ps --coalesce of the deep sample (1,000 frames of one recursion): one line per
              run of a frame calling itself, in 100 columns; its folded stack and graph
  graphs      ps --format folded and --format dot / --svg of the fanout sample: the stacks, the
              boxes and edges of the await graph, and the SVG Graphviz draws of it; the CLI's
              second run with malloc on 2 MB pages (GLIBC_TUNABLES), seen with strace, and dot
              getting the environment as it was
  tools       ps --format folded of the fanout sample, unchanged, into flamegraph.pl (Debian's
              libdevel-nytprof-perl) and speedscope 1.25.0 (npm, in headless Chromium): every
              frame of the flame graph's SVG with its count, speedscope's imported profile
  diff        asyncdac diff: a dump against itself and against the live process (a hang:
              everything unchanged), against another sample's (new, finished), against a copy
              whose Continuation State was patched (progressed)
  install     cmake --install into a scratch prefix: the CLI, the plugin and its adapter, man
              pages for every command, the ~/.lldbinit line, which loads the plugin in lldb-22;
              the .deb CPack builds, installed with dpkg into a scratch root: its files, its
              plugin loaded by lldb-22, its CLI run
  deb         the .deb on a fresh Debian 12: a minimal bookworm root (debootstrap, made once under
              build/debian12 by scripts/debian-root), a scratch copy of it, the package and lldb-22
              installed there by apt from Debian; in it asyncdac --version, asyncdac ps on a core
              of the nested sample, and lldb-22 loading the plugin by the package's lldbinit line,
              async ps on the same core (each exactly as this build prints it), async ps --form
              completing to --format
  locals      bt --locals / frame variable: the source's variables first and alone, a count of
              the others, which --internals (frame: --all) shows after them; m_stateFlags decoded
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
import struct  # noqa: E402


def h(v):
    return int(v, 16)


def commands():
    """The commands `asyncdac --help` lists."""
    rc, out, _ = b.cli(["--help"])
    t.check_eq(rc, 0, "--help: exit code")
    text = out.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  (\w+) ", text, re.M)]


def expect_rc(args, rc, what, stderr=None):
    got, out, err = b.cli(args)
    t.check_eq(got, rc, f"{what}: asyncdac {' '.join(args)}: exit code (stderr {err.strip()[-300:]!r})")
    if stderr is not None:
        t.check_eq(err, stderr, f"{what}: stderr")
    return out


def exit_codes(tmp):
    core = b.sample_core("nested", "Debug", tmp)
    names = commands()
    t.check_eq(sorted(names), sorted(["runtime", "bt", "ip2md", "dumpmd", "frame", "dumpheap", "ps", "symbols", "diff",
                                      "dumpobj", "pe", "refs", "report", "gcroot", "locks", "threadpool",
                                      "clrthreads", "pstacks"]),
               "the commands --help lists")
    names.remove("diff")  # two targets: the diff part tests its exit codes
    names.remove("pe")    # the nested sample has no exception: below
    notcore = os.path.join(tmp, "notcore")
    with open(notcore, "w") as f:
        f.write("not a core\n")
    # A chain, a managed frame's ip and its MethodDesc, for the commands that take addresses.
    chain = json.loads(expect_rc(["ps", core, "--json"], 0, "ps"))["ps"]["chains"][0]
    frame = chain["frames"][0]
    ok = {
        "runtime": [],
        "bt": ["--all"],
        "ps": ["--coalesce"],
        "dumpheap": ["--stat"],
        "ip2md": [frame["ip"]],
        "dumpmd": [frame["method_desc"]],
        "frame": ["variable", "--address", frame["continuation"]],
        "symbols": ["-o", os.path.join(tmp, "nested.sym")],
        "dumpobj": [frame["continuation"]],
        "refs": [frame["continuation"]],
        "gcroot": [frame["continuation"]],
        "report": [],
        "locks": [],
        "threadpool": ["--items"],
        "clrthreads": [],
        "pstacks": [],
    }
    # Each command's own way of failing on a good core (the analysis, not the command line).
    target_error = {
        "runtime": None,
        "bt": ["--address", "0x1"],
        "ps": None,
        "dumpheap": None,
        "ip2md": ["0x10"],
        "dumpmd": ["0x1234"],
        "frame": ["variable", "--address", "0x1"],
        "symbols": None,
        "dumpobj": ["0x1"],
        "refs": ["0x1"],
        "gcroot": ["0x1"],
        "report": None,
        "locks": None,
        "threadpool": None,
        "clrthreads": None,
        "pstacks": None,
    }
    for name in names:
        expect_rc([name, core] + ok[name], 0, f"{name}: a good run")
        expect_rc([name, "--help"], 0, f"{name}: --help")
        expect_rc([name], 2, f"{name}: no target")
        expect_rc([name, core, "--no-such-option"] + ok[name], 2, f"{name}: unknown option")
        expect_rc([name, core, "--pid", "1"] + ok[name], 2, f"{name}: a core and --pid")
        expect_rc([name, "--pid", "x"] + ok[name], 2, f"{name}: a bad pid")
        expect_rc([name, os.path.join(tmp, "missing.core")] + ok[name], 1, f"{name}: a missing core")
        expect_rc([name, notcore] + ok[name], 1, f"{name}: not a core")
        if target_error[name]:
            expect_rc([name, core] + target_error[name], 1, f"{name}: an address that is not what it should be")
    expect_rc(["pe", core], 2, "pe without an address")
    expect_rc(["pe", core, frame["continuation"], "--no-such-option"], 2, "pe: unknown option")
    expect_rc(["pe", core, frame["continuation"]], 1, "pe of an object that is no exception or task")
    expect_rc(["nosuch", core], 2, "an unknown command")
    expect_rc([], 2, "no command")
    expect_rc(["--version"], 0, "--version")
    # Errors in a command's own options are usage errors too.
    expect_rc(["bt", core, "--depth", "0"], 2, "bt --depth 0")
    expect_rc(["bt", core, "--all", "--thread", "1"], 2, "bt --all --thread")
    expect_rc(["ps", core, "--coalesce", "--stats"], 2, "ps --coalesce --stats")
    expect_rc(["ps", core, "--address", "zz"], 2, "ps --address zz")
    expect_rc(["dumpmd", core], 2, "dumpmd without an address")
    expect_rc(["frame", core, "nosuch"], 2, "frame nosuch")
    # Each CLI run starts afresh: 'frame variable' without a frame says how to name one.
    expect_rc(["frame", core, "variable"], 2, "frame variable without a frame",
              stderr="asyncdac: error: give the frame by --address or --thread (with --frame <n>)\n")
    expect_rc(["bt", core, "--thread", "999999"], 1, "bt --thread of no thread")


# ---- JSON documents (docs/json.md) ----

TYPES = {"address": lambda v: isinstance(v, str) and re.fullmatch(r"0x[0-9a-f]{16}", v) is not None,
         "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
         "string": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
         "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list), "any": lambda v: True}


def documented():
    """[(invocations, {path: (type, optional)})] from docs/json.md: each table with the
    `asyncdac ...` invocations on the line above it."""
    with open(os.path.join(t.SOURCE, "docs", "json.md")) as f:
        lines = f.read().splitlines()
    out, invocations, table = [], [], None
    for line in lines + [""]:
        row = re.match(r"\| `([^`]*)` \| (\w+) \| (.*)\|$", line)
        if row:
            if table is None:
                table = {}
                out.append((invocations, table))
            table[row.group(1)] = (row.group(2), row.group(3).strip().startswith("optional"))
            continue
        if line.startswith("| member") or line.startswith("|---"):
            continue
        table = None
        found = re.findall(r"`asyncdac ([^`]*)`", line)
        if found and line.startswith("`asyncdac "):
            invocations = found
        kind = re.match(r"JSONL (\w+): `asyncdac ([^`]*)`", line)
        if kind:  # a table of one kind of line of a JSON Lines listing: "<invocation> #<kind>"
            invocations = [f"{kind.group(2)} #{kind.group(1)}"]
    return out


def members(value, prefix=""):
    """{path: value} of every member and element in value, paths as docs/json.md writes them."""
    out = {}
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else k
            out.setdefault(path, []).append(v)
            for p, vs in members(v, path).items():
                out.setdefault(p, []).extend(vs)
    elif isinstance(value, list):
        for v in value:
            out.setdefault(prefix + "[]", []).append(v)
            for p, vs in members(v, prefix + "[]").items():
                out.setdefault(p, []).extend(vs)
    return out


def check_members(payloads, table, what):
    seen = {}
    for payload in payloads:
        for p, vs in members(payload).items():
            seen.setdefault(p, []).extend(vs)
    for path, (typ, optional) in table.items():
        if not optional:
            t.check(path in seen, f"{what}: {path} is documented but not in any document")
        for v in seen.get(path, []):
            if not t.check(v is None or TYPES[typ](v), f"{what}: {path} is documented as {typ}, got {v!r}"):
                break
    # An object whose members are listed has no others (the root's are always listed).
    parents = {""} | {p.rsplit(".", 1)[0] for p in table if "." in p}
    for path in seen:
        if path.endswith("[]"):
            continue  # an element, not a member
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        if parent in parents:
            t.check(path in table, f"{what}: {path} is in the document but not in docs/json.md")


def json_documents(tmp):
    core = b.sample_core("nested", "Debug", tmp)
    ps = b.cli_json(["ps", core], "ps")
    chain = ps["chains"][0]
    frame = chain["frames"][0]
    values = {"<core>": core, "<core-B>": b.sample_core("deep", "Debug", tmp), "<task>": chain["task"]["address"], "<continuation>": frame["continuation"],
              "<ip>": frame["ip"], "<MethodDesc>...": frame["method_desc"], "<text>": "Continuation",
              "<locks-core>": b.sample_core("locks", "Debug", tmp),
              "<starved-core>": b.sample_core("starved", "Debug", tmp, parked=True)}
    tables = documented()
    t.check_eq(sorted({inv.split()[0] for invs, _ in tables for inv in invs}),
               sorted(["bt", "diff", "dumpheap", "dumpmd", "frame", "gcroot", "ip2md", "locks", "ps", "report", "runtime",
                      "threadpool", "clrthreads", "pstacks"]),
               "docs/json.md documents every command that has --json")
    for invocations, table in tables:
        if any("--jsonl" in inv for inv in invocations):
            continue  # output.jsonl
        payloads = []
        for inv in invocations:
            args = [values.get(a, a) for a in inv.split()]
            rc, out, err = b.cli(args)
            if not t.check(rc == 0 and err == "", f"asyncdac {inv}: rc {rc}, stderr {err.strip()[-300:]!r}"):
                continue
            try:
                payloads.append(b.document(out, args[0]))
            except ValueError as e:
                t.fail(f"asyncdac {inv}: {e}")
                continue
            t.check("seconds" not in out, f"asyncdac {inv}: no wall times without --timings")
            t.check_eq(b.cli(args)[1], out, f"asyncdac {inv}: a second run prints the same document")
        check_members(payloads, table, " and ".join(invocations))
    # --timings adds the wall times, where the tables say.
    d = b.cli_json(["ps", core, "--timings"], "ps --timings")  # (after the tables)
    phases = ("heap_seconds", "link_seconds", "stacks_seconds", "list_seconds")
    t.check(d is not None and all(isinstance(d["summary"].get(k), float) and d["summary"][k] >= 0 for k in phases),
            "ps --json --timings: summary.heap_seconds, link_seconds, stacks_seconds and list_seconds")
    t.check_eq(d and d["summary"].get("list_threads"), 1,
               "ps --json --timings: summary.list_threads (no helper below 20,000 stacks)")
    d = b.cli_json(["dumpheap", core, "--stat", "--timings"], "dumpheap --timings")
    t.check(d is not None and isinstance(d["scan"].get("walk_seconds"), float), "dumpheap --json --timings: scan.walk_seconds")
    expect_rc(["ps", core, "--timings"], 2, "ps --timings without --json")


# ---- ps --jsonl ----

JSONL_FRAME_OWN = {"async": ["continuation"], "classic": ["box", "state_machine"], "task": ["task"]}


def jsonl(tmp):
    tables = {inv.split(" #")[1]: table for invs, table in documented() for inv in invs if "--jsonl #" in inv}
    t.check_eq(sorted(tables), ["chain", "end", "frame", "header", "type"], "docs/json.md: a table per kind of line")
    seen = {kind: [] for kind in tables}
    # (syncwait, deadlock and locks, parked: stacks blocked on a synchronous wait, an await cycle, a lock.)
    for sample, parked in (("nested", False), ("mixed", False), ("fanout", False), ("syncwait", True),
                           ("deadlock", True), ("locks", True)):
        core = b.sample_core(sample, "Debug", tmp, parked=parked)
        rc, out, err = b.cli(["ps", core, "--jsonl"])
        if not t.check_eq((rc, err), (0, ""), f"{sample}: ps --jsonl: exit code and stderr"):
            continue
        t.check_eq(b.cli(["ps", core, "--jsonl"])[1], out, f"{sample}: ps --jsonl twice: the same lines")
        t.check("seconds" not in out, f"{sample}: ps --jsonl: no wall times without --timings")
        lines = [json.loads(x) for x in out.splitlines()]
        t.check(all(" " not in x.split('"')[0] for x in out.splitlines()), f"{sample}: compact lines")
        t.check_eq(lines[0], {"schema": 1, "command": "ps", "format": "jsonl"}, f"{sample}: the header line")
        types, frames, chains = {}, {}, []
        for x in lines[1:-1]:
            kind = next(iter(x))
            seen[{"type": "type", "frame": "frame", "chain": "chain"}.get(kind, "?")].append(x)
            if kind == "type":
                t.check_eq(x["type"], len(types), f"{sample}: type lines are numbered in order")
                types[x["type"]] = x["name"]
            elif kind == "frame":
                t.check_eq(x["frame"], len(frames), f"{sample}: frame lines are numbered in order")
                frames[x["frame"]] = x
            elif t.check_eq(kind, "chain", f"{sample}: a line's first member"):
                for ref, *_ in x["frames"]:
                    t.check(ref in frames, f"{sample}: chain {x['chain']} refers to frame {ref} before its line")
                for o in (x.get("task"), x.get("awaiting")):
                    if o and o["type"] is not None:
                        t.check(o["type"] in types, f"{sample}: chain {x['chain']}: type {o['type']} before its line")
                chains.append(x)
        seen["header"].append(lines[0])
        seen["end"].append(lines[-1])
        t.check("summary" in lines[-1], f"{sample}: the last line has the summary")
        t.check_eq(len({json.dumps(f, sort_keys=True) for f in frames.values()}), len(frames),
                   f"{sample}: each frame described once")

        # The same stacks as ps --json, frames and types resolved through their lines.
        doc = b.cli_json(["ps", core], "ps")
        t.check_eq(lines[-1], {k: v for k, v in doc.items() if k != "chains"}, f"{sample}: the last line")
        t.check_eq(len(chains), len(doc["chains"]), f"{sample}: as many stacks as ps --json")

        def task(o):
            if o is None:
                return None
            o = dict(o, type=types.get(o["type"]))
            return o

        for x, c in zip(chains, doc["chains"]):
            what = f"{sample}: chain {c['index']}"
            t.check_eq(x["chain"], c["index"], f"{what}: number")
            want_task = c["task"] and {k: v for k, v in c["task"].items() if k not in ("method_table", "flags")}
            t.check_eq(task(x["task"]), want_task, f"{what}: task")
            t.check_eq(task(x["awaiting"]), c["awaiting"], f"{what}: awaiting")
            t.check_eq(x.get("running"), c["running"], f"{what}: running")
            t.check_eq((x.get("cycle", False), x.get("truncated", False)), (c["cycle"], c["truncated"]), f"{what}: flags")
            t.check_eq(x.get("error"), next((s["error"] for s in c["segments"] if s.get("error")), None), f"{what}: error")
            t.check_eq((x.get("sync_waits"), x.get("deadlock")), (c.get("sync_waits"), c.get("deadlock")),
                       f"{what}: sync_waits and deadlock")
            t.check_eq(task(x.get("waiting_for_lock")), c.get("waiting_for_lock"), f"{what}: waiting_for_lock")
            t.check_eq(task(x.get("monitor_wait")), c.get("monitor_wait"), f"{what}: monitor_wait")
            t.check_eq(x.get("thread_sync_wait"), c.get("thread_sync_wait"), f"{what}: thread_sync_wait")
            t.check_eq(x.get("event_wait"), c.get("event_wait"), f"{what}: event_wait")
            got = []
            for ref, addr, *more in x["frames"]:
                f = {k: v for k, v in frames[ref].items() if k != "frame"}
                own = JSONL_FRAME_OWN[f["kind"]]
                t.check_eq(len(more), len(own) - 1, f"{what}: a {f['kind']} frame's reference")
                if f["kind"] == "task":
                    f = {"kind": "task", "task": {"address": addr, "type": f["type"]}}
                else:
                    f.update(zip(own, [addr] + more))
                got.append(f)
            want = []
            for f in c["frames"]:
                f = {k: v for k, v in f.items() if k != "index"}
                if f["kind"] == "task":
                    f["task"] = {"address": f["task"]["address"], "type": f["task"]["type"]}
                want.append(f)
            t.check_eq(got, want, f"{what}: frames")
    blockers = {k: [x for x in seen["chain"] if k in x]
                for k in ("sync_waits", "waiting_for_lock", "monitor_wait", "thread_sync_wait", "event_wait", "deadlock")}
    t.check_eq({k: bool(v) for k, v in blockers.items()}, {k: True for k in blockers},
               "ps --jsonl: the syncwait, locks and deadlock samples' chain lines say what blocks them")
    for kind, table in tables.items():
        check_members(seen[kind], table, f"ps --jsonl, {kind} lines")
    core = b.sample_core("nested", "Debug", tmp)
    for other in ("--json", "--stats", "--coalesce", "--locals"):
        expect_rc(["ps", core, "--jsonl", other], 2, f"ps --jsonl {other}")
    rc, out, _ = b.cli(["ps", core, "--jsonl", "--timings"])
    end = json.loads(out.splitlines()[-1]) if rc == 0 else {}
    t.check(all(isinstance(end.get("summary", {}).get(k), float)
                for k in ("heap_seconds", "link_seconds", "stacks_seconds", "list_seconds")),
            "ps --jsonl --timings: the wall times")


# ---- ps --coalesce ----

def coalesce(tmp):
    core = b.sample_core("deep", "Debug", tmp)
    exp = b.expected("deep")["chains"][0]
    lines = ["STACKS 1: 1 chain", "[1] awaiting Task<Int32>"]
    # The leaf waits at Recurse's first await (state 0), its 999 callers at the second (state 1).
    for i, f in enumerate(exp["frames"]):
        text = f"[1] {f['type'].split('.')[-1]}.{f['method']}(Int32) at Program.cs:{f['await_line']} [state {min(i, 1)}]"
        lines.append(text + (f" x {f['repeat']}" if f["repeat"] > 1 else ""))
    rc, out, err = b.cli(["ps", core, "--coalesce"])
    t.check_eq((rc, err), (0, ""), "ps --coalesce: exit code and stderr")
    tree = out.split("\n\n")[0]
    t.check_eq(tree, "\n".join(lines), "deep: ps --coalesce folds the recursion")
    t.check(all(len(x) <= 100 for x in out.splitlines()[:-1]), f"deep: ps --coalesce fits 100 columns:\n{out}")
    # Folded: the whole stack, outermost first (flame graphs show the true depth).
    frames = [line[len("[1] "):].split(" x ")[0] for line in lines[2:]]
    stack = [frames[1]] * exp["frames"][1]["repeat"] + [frames[0], "awaiting Task<Int32>"]
    rc, out, err = b.cli(["ps", core, "--format", "folded"])
    t.check_eq((rc, err, out), (0, "", ";".join(stack) + " 1\n"), "deep: ps --format folded")
    # The graph: one box, the recursion folded in it.
    rc, out, err = b.cli(["ps", core, "--format", "dot"])
    t.check(rc == 0 and f"\\l{frames[1]} x 999\\l" in out, f"deep: ps --format dot folds the recursion:\n{out[:2000]}")


# ---- folded stacks, the await graph ----

def fanout_stacks():
    """The fanout sample's distinct stacks, outermost frame first, as ps labels them in folded
    stacks and graphs, with the number of chains; awaited objects last."""
    def frame(f, args):
        return f"{f['type'].split('.')[-1]}.{f['method']}({args}) at Program.cs:{f['await_line']} [state 0]"
    out = []
    for c in b.expected("fanout")["chains"]:
        # From the sample's source: Beta awaits a Task, Alpha and Gamma a Task<int>.
        task = "Task" if c["name"] == "Beta" else "Task<Int32>"
        out.append(([frame(f, f"Int32, {task}") for f in reversed(c["frames"])] + [f"awaiting {task}"], c["count"]))
    return out


def graphs(tmp):
    core = b.sample_core("fanout", "Debug", tmp)
    stacks = fanout_stacks()
    rc, out, err = b.cli(["ps", core, "--format", "folded"])
    t.check_eq((rc, err), (0, ""), "ps --format folded: exit code and stderr")
    # flamegraph.pl and speedscope read "frame;frame;... <count>": the count after the last space.
    t.check_eq(sorted(out.splitlines()), sorted(f"{';'.join(s)} {n}" for s, n in stacks), "fanout: ps --format folded")
    t.check(all(re.fullmatch(r"[^;\n]+(;[^;\n]+)* \d+", x) for x in out.splitlines()), "folded lines: frames;... count")

    # DOT: what the stacks await (ellipses), a box per run of frames the same stacks share, innermost
    # first, and an edge from each box to the box (or awaited object) above it.
    rc, dot, err = b.cli(["ps", core, "--format", "dot"])
    t.check_eq((rc, err), (0, ""), "ps --format dot: exit code and stderr")
    labels = dict(re.findall(r'^  (n\d+) \[.*label="(.*)"\];$', dot, re.M))
    edges = {(labels.get(a), labels.get(b_)) for a, b_ in re.findall(r"^  (n\d+) -> (n\d+);$", dot, re.M)}
    alpha, beta, gamma = (
        next(s for s, n in stacks if n == 5000), next(s for s, n in stacks if n == 3000), next(s for s, n in stacks if n == 2000))
    want_boxes = {
        "t_alpha": f"awaiting Task<Int32>\\n7000 stacks",
        "t_beta": f"awaiting Task\\n3000 stacks",
        "leaf": f"7000 stacks\\n{alpha[2]}\\l",
        "alpha": f"5000 stacks\\n{alpha[1]}\\l{alpha[0]}\\l",
        "gamma": f"2000 stacks\\n{gamma[0]}\\l",
        "beta": f"3000 stacks\\n{beta[1]}\\l{beta[0]}\\l",
    }
    t.check_eq(sorted(labels.values()), sorted(want_boxes.values()), "fanout: the graph's boxes")
    w = want_boxes
    t.check_eq(edges, {(w["leaf"], w["t_alpha"]), (w["alpha"], w["leaf"]), (w["gamma"], w["leaf"]),
                       (w["beta"], w["t_beta"])}, "fanout: the graph's edges (caller -> what it awaits)")

    # --svg: Graphviz draws it; the SVG has a node per box with its text, and the edges.
    svg = os.path.join(tmp, "fanout.svg")
    if not t.check(shutil.which("dot") is not None, "Graphviz's dot is installed (scripts/deps)"):
        return
    rc, out, err = b.cli(["ps", core, "--svg", svg])
    t.check_eq((rc, out, err), (0, "", ""), "ps --svg: exit code, stdout, stderr")
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.parse(svg).getroot()
    nodes = root.findall(".//s:g[@class='node']", ns)
    t.check_eq(len(nodes), 6, "fanout.svg: nodes")
    t.check_eq(len(root.findall(".//s:g[@class='edge']", ns)), 4, "fanout.svg: edges")
    texts = sorted(" | ".join(x.text for x in n.findall("s:text", ns)) for n in nodes)
    want = sorted(v.replace("\\n", " | ").replace("\\l", " | ").rstrip(" |") for v in want_boxes.values())
    t.check_eq(texts, [x.replace("&lt;", "<") for x in want], "fanout.svg: the text of each node")
    rc, out, err = b.cli(["ps", core, "--svg", os.path.join(tmp, "no", "such", "dir", "x.svg")])
    t.check(rc == 1 and err.splitlines()[-1].startswith("asyncdac: error: --svg: dot could not draw"), f"--svg into no directory: {rc} {err!r}")
    expect_rc(["ps", core, "--format", "dot", "--json"], 2, "--format dot --json")
    expect_rc(["ps", core, "--format", "svg"], 2, "--format svg")
    huge_pages(core, svg, tmp)


def huge_pages(core, svg, tmp):
    """The CLI runs itself again once with glibc's malloc on 2 MB pages (GLIBC_TUNABLES, appended
    to the user's; plugin/cli/main.c) where the kernel gives them on request, never over a user's
    own glibc.malloc.hugetlb, and not in a sanitized build (its allocator is ASan's); what it starts
    (`dot`, through --svg) gets the environment as it was. Seen with strace (scripts/deps)."""
    if not t.check(shutil.which("strace") is not None, "strace is installed (scripts/deps)"):
        return
    thp = "/sys/kernel/mm/transparent_hugepage/enabled"
    mode = open(thp).read() if os.path.exists(thp) else "(no transparent huge pages)"
    again = "[madvise]" in mode and "ASAN_OPTIONS" not in os.environ
    bindir = os.path.join(tmp, "fake-dot")
    os.makedirs(bindir, exist_ok=True)
    seen = os.path.join(tmp, "dot.env")
    with open(os.path.join(bindir, "dot"), "w") as f:
        f.write(f'#!/bin/sh\nenv > "{seen}"\nexec "{shutil.which("dot")}" "$@"\n')
    os.chmod(os.path.join(bindir, "dot"), 0o755)
    for user in (None, "glibc.malloc.check=0", "glibc.malloc.hugetlb=0"):
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        if user:
            env["GLIBC_TUNABLES"] = user
        env["PATH"] = bindir + ":" + env["PATH"]
        if "ASAN_OPTIONS" in env:  # (LeakSanitizer cannot run under a tracer)
            env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0")
        trace = os.path.join(tmp, "execve.trace")
        p = subprocess.run(["strace", "-f", "-qq", "-v", "-s", "4096", "-e", "trace=execve", "-o", trace,
                            t.CLI, "ps", core, "--svg", svg], capture_output=True, text=True, env=env, timeout=300)
        label = f"GLIBC_TUNABLES={user}" if user else "no GLIBC_TUNABLES"
        t.check_eq((p.returncode, p.stdout, p.stderr), (0, "", ""), f"{label}: ps --svg under strace")
        runs = []
        for line in open(trace):
            m = re.search(r'execve\("([^"]*)", \[.*?\], \[(.*)\]\) = 0', line)
            if m and (m.group(1) == t.CLI or m.group(1) == "/proc/self/exe"):
                tun = re.search(r'"GLIBC_TUNABLES=([^"]*)"', m.group(2))
                runs.append((m.group(1), tun.group(1) if tun else None))
        want = [(t.CLI, user)]
        if again and user != "glibc.malloc.hugetlb=0":
            want.append(("/proc/self/exe", (user + ":" if user else "") + "glibc.malloc.hugetlb=1"))
        t.check_eq(runs, want, f"{label}: the CLI's runs and their GLIBC_TUNABLES (THP: {mode.strip()})")
        dot_env = dict(x.split("=", 1) for x in open(seen).read().splitlines() if "=" in x)
        t.check_eq((dot_env.get("GLIBC_TUNABLES"), "ASYNCDAC_GLIBC_TUNABLES_WAS" in dot_env), (user, False),
                   f"{label}: dot's environment")


# ---- the folded stacks in the tools that read them ----

FLAMEGRAPH = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"  # libdevel-nytprof-perl (scripts/deps)
SPEEDSCOPE = {"speedscope": "1.25.0", "playwright-core": "1.57.0"}
CHROMIUM = "/usr/bin/chromium"  # Debian's (scripts/deps)


def speedscope_dir():
    """speedscope and playwright-core from npm, installed once under build/tools/speedscope."""
    d = os.path.join(t.BUILD, "tools", "speedscope")
    stamp = os.path.join(d, "installed-" + "-".join(f"{k}@{v}" for k, v in SPEEDSCOPE.items()))
    if not os.path.exists(stamp):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "package.json"), "w") as f:
            json.dump({"private": True, "dependencies": SPEEDSCOPE}, f)
        rc, out, err = t.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", d], timeout=600)
        if not t.check_eq(rc, 0, f"npm install {SPEEDSCOPE}: {err.strip()[-800:]}"):
            return None
        open(stamp, "w").close()
    return d


def tools(tmp):
    core = b.sample_core("fanout", "Debug", tmp)
    stacks = {tuple(s): n for s, n in fanout_stacks()}
    folded = os.path.join(tmp, "fanout.folded")
    rc, out, err = b.cli(["ps", core, "--format", "folded"])
    t.check_eq((rc, err), (0, ""), "ps --format folded: exit code and stderr")
    with open(folded, "w") as f:
        f.write(out)

    # flamegraph.pl: one rectangle per distinct prefix of the stacks (outermost frame at the
    # bottom), titled "<frame> (<count> samples, <pct>%)", and "all" under them. flamegraph.pl
    # itself turns '<' and '>' into '(' and ')' ("clean up SVG breaking characters": Task(Int32)).
    svg = os.path.join(tmp, "fanout-flame.svg")
    if t.check(os.path.exists(FLAMEGRAPH), f"{FLAMEGRAPH} (libdevel-nytprof-perl, scripts/deps)"):
        rc, out, err = t.run(["perl", FLAMEGRAPH, folded])
        t.check_eq((rc, err), (0, ""), "flamegraph.pl: exit code and stderr")
        with open(svg, "w") as f:
            f.write(out)
        total = sum(stacks.values())
        prefixes = {}
        for s, n in stacks.items():
            for i in range(1, len(s) + 1):
                prefixes[s[:i]] = prefixes.get(s[:i], 0) + n
        want = sorted([f"all ({total:,} samples, 100%)"] +
                      [f"{p[-1].replace('<', '(').replace('>', ')')} ({n:,} samples, {100 * n / total:.2f}%)"
                       for p, n in prefixes.items()])
        root = ET.parse(svg).getroot()
        titles = sorted(x.text for x in root.iter("{http://www.w3.org/2000/svg}title"))
        t.check_eq(titles, want, "flamegraph.pl: every frame of the fanout stacks with its count")

    # speedscope: its own web app imports the file (as collapsed stacks) and exports the profile;
    # replaying the profile's open/close events gives each stack and its weight.
    if not t.check(os.path.exists(CHROMIUM), f"{CHROMIUM} (chromium, scripts/deps)"):
        return
    d = speedscope_dir()
    if not d:
        return
    exported = os.path.join(tmp, "fanout.speedscope.json")
    rc, out, err = t.run(["node", os.path.join(t.SOURCE, "tests", "integration", "speedscope_import.mjs"), d, CHROMIUM,
                          folded, exported], timeout=300)
    if not t.check_eq((rc, out, err), (0, "Importing as collapsed stack format\n", ""), "speedscope: import and export"):
        return
    with open(exported) as f:
        doc = json.load(f)
    t.check_eq((doc["exporter"], len(doc["profiles"])), ("speedscope@1.25.0", 1), "speedscope: exporter, one profile")
    names = [x["name"] for x in doc["shared"]["frames"]]
    t.check_eq(sorted(names), sorted({x for s in stacks for x in s}), "speedscope: the frames")
    got, stack, at = {}, [], 0
    for e in doc["profiles"][0]["events"]:
        if stack and e["at"] > at:
            got[tuple(stack)] = got.get(tuple(stack), 0) + e["at"] - at
        at = e["at"]
        if e["type"] == "O":
            stack.append(names[e["frame"]])
        elif t.check(stack and stack[-1] == names[e["frame"]], f"speedscope: closes the frame it opened last: {e}"):
            stack.pop()
    t.check_eq(got, stacks, "speedscope: each stack and its count")
    t.check_eq(doc["profiles"][0]["endValue"], sum(stacks.values()), "speedscope: the profile's total")


# ---- diff ----

def diff(tmp):
    s = b.sample("nested", "Debug")
    try:
        core = b.make_core(s.pid, os.path.join(tmp, "nested.core"))
        hang = "A has 1 pending stack, B 1: 0 progressed, 0 new, 0 finished, 1 unchanged.\n"
        rc, out, err = b.cli(["diff", core, core])
        t.check_eq((rc, out, err), (0, hang, ""), "diff of a dump with itself")
        rc, out, err = b.cli(["diff", core, "--pid", str(s.pid)])
        t.check_eq((rc, out, err), (0, hang, ""), "diff of a dump with the parked process")
    finally:
        s.kill()
    a = b.cli_json(["ps", core], "nested: ps")["chains"][0]
    deep = b.sample_core("deep", "Debug", tmp)
    d = b.cli_json(["ps", deep], "deep: ps")["chains"][0]
    j = b.cli_json(["diff", core, deep], "diff nested deep")
    if j:
        t.check_eq((j["stacks_a"], j["stacks_b"], j["progressed"], j["unchanged"]), (1, 1, [], []), "diff nested deep: counts")
        t.check_eq([x["key"] for x in j["new"]], [d["task"]["address"]], "diff nested deep: new is deep's task")
        t.check_eq([x["key"] for x in j["finished"]], [a["task"]["address"]], "diff nested deep: finished is nested's task")
        t.check_eq(len(j["new"][0]["frames"]), 1000, "diff nested deep: the new stack's frames")
    rc, out, err = b.cli(["diff", core, deep])
    first = lambda c: f"{c['frames'][0]['method']} at {os.path.basename(c['frames'][0]['file'])}:{c['frames'][0]['line']} [state 0]"  # noqa: E731
    t.check_eq((rc, err, out), (0, "", "A has 1 pending stack, B 1: 0 progressed, 1 new, 1 finished, 0 unchanged.\n"
                                f"\nNew (in B only):\n  task {d['task']['address']} {d['task']['type']} [WaitingForActivation]\n"
                                f"    {first(d)}\n"
                                f"\nFinished (in A only):\n  task {a['task']['address']} {a['task']['type']} [WaitingForActivation]\n"
                                f"    {first(a)}\n"), "diff nested deep: text")

    # Progress: the middle frame's Continuation moved to another await (State 0 -> 7).
    o = b.oracle(core, tmp)
    moved = os.path.join(tmp, "moved.core")
    mid = a["frames"][1]
    corecore.patched_copy(core, moved, [(int(mid["continuation"], 16) + o.fields["State"], struct.pack("<I", 7))])
    j = b.cli_json(["diff", core, moved], "diff nested moved")
    if j and t.check_eq(len(j["progressed"]), 1, "diff nested moved: one stack progressed"):
        p = j["progressed"][0]
        t.check_eq((p["key"], j["new"], j["finished"], j["unchanged"]), (a["task"]["address"], [], [], []),
                   "diff nested moved: the stack, nothing else")
        t.check_eq([x == y for x, y in zip(p["frames_a"], p["frames_b"])], [True, False, True],
                   "diff nested moved: only the middle frame changed")
        t.check(p["frames_a"][1].endswith(" [state 0]") and p["frames_b"][1].endswith(" [state 7]"),
                f"diff nested moved: state 0 -> 7: {p['frames_a'][1]!r} -> {p['frames_b'][1]!r}")
    rc, out, err = b.cli(["diff", core, moved])
    t.check(rc == 0 and out.startswith("A has 1 pending stack, B 1: 1 progressed, 0 new, 0 finished, 0 unchanged.\n\n"
                                       "Progressed (a frame or its await state changed):\n"
                                       f"  task {a['task']['address']} ") and "    A: " in out and "    B: " in out,
            f"diff nested moved: text:\n{out}{err}")
    rc, out, err = b.cli(["diff", core, core, "--all"])
    t.check_eq((rc, err, out), (0, "", hang + f"\nUnchanged:\n  task {a['task']['address']} {a['task']['type']} "
                                f"[WaitingForActivation]\n    {first(a)}\n"), "diff --all: the unchanged stack")

    # Classic state machines stitched with runtime-async frames: every stack's frames labelled from
    # what `ps --json` says of them.
    mixed = b.sample_core("mixed", "Debug", tmp)
    chains = b.cli_json(["ps", mixed], "mixed: ps")["chains"]

    def labels(c):
        out = []
        for f in c["frames"]:
            if f["kind"] == "task":
                out.append(f"task {f['task']['type']} [{f['task']['status']}]")
                continue
            where = f" at {os.path.basename(f['file'])}:{f['line']}" if f["file"] else ""
            tag = f"classic, state {f['state']}" if f["kind"] == "classic" else f"state {f['state']}"
            out.append(f"{f['method']}{where} [{tag}]")
        return out
    j = b.cli_json(["diff", mixed, mixed], "diff mixed mixed")
    if j:
        t.check_eq((j["stacks_a"], j["progressed"], j["new"], j["finished"]), (len(chains), [], [], []),
                   "diff mixed mixed: counts")
        t.check_eq([(x["key"], x["type"], x["status"], x["running"], x["frames"]) for x in j["unchanged"]],
                   [(c["task"]["address"], c["task"]["type"], c["task"]["status"], False, labels(c)) for c in chains],
                   "diff mixed mixed: each stack's key, task and frame labels, in ps's order")
        t.check(any("[classic, state " in f for x in j["unchanged"] for f in x["frames"]),
                "diff mixed mixed: classic frames are labelled")
    expect_rc(["diff", core], 2, "diff with one target")
    expect_rc(["diff", core, core, core], 2, "diff with three targets")
    expect_rc(["diff", core, core, "--bogus"], 2, "diff --bogus")
    expect_rc(["diff", core, os.path.join(tmp, "missing.core")], 1, "diff with a missing core")


# ---- installation ----

def install(tmp):
    root = os.path.join(tmp, "root")
    rc, out, err = t.run(["cmake", "--install", t.BUILD, "--prefix", root], timeout=300)
    if not t.check_eq(rc, 0, f"cmake --install: {err.strip()[-1000:]}"):
        return
    cli = os.path.join(root, "bin", "asyncdac")
    rc, out, err = t.run([cli, "--version"])
    t.check(rc == 0 and re.match(r"asyncdac \d+\.\d+\.\d+\nTargets:\n  \.NET 11 .*\n.*\nLLDB plugin:\n  LLDB 22 ", out),
            f"installed asyncdac --version:\n{out}{err}")
    names = commands()
    man = os.path.join(root, "share", "man", "man1")
    t.check_eq(sorted(os.listdir(man)), sorted(["asyncdac.1"] + [f"asyncdac-{c}.1" for c in names]),
               "man pages: asyncdac(1) and one per command")
    for c in names:
        rc, out, err = t.run(["man", "-l", "-P", "cat", os.path.join(man, f"asyncdac-{c}.1")], env={"MANWIDTH": "100"})
        summary = re.search(rf"^  {c} +(.*(?:\n {{13}}\S.*)*)", b.cli(["--help"])[1], re.M).group(1)
        t.check(rc == 0 and f"asyncdac-{c} - " in re.sub(r"\s+", " ", out) and
                " ".join(summary.split()) in re.sub(r"\s+", " ", out), f"man asyncdac-{c}: the table's summary:\n{out[:800]}{err}")
    lldbinit = os.path.join(root, "share", "doc", "asyncdac", "lldbinit")
    plugin = os.path.join(root, "lib", "asyncdac", "libasyncdac-lldb.so")
    with open(lldbinit) as f:
        t.check_eq(f.read().splitlines()[-1], f"plugin load {plugin}", "the ~/.lldbinit line names the installed plugin")
    t.check(os.path.exists(os.path.join(root, "lib", "asyncdac", "asyncdac_lldb.py")), "the adapter is beside the plugin")
    rc, out, err = t.lldb([f"command source {lldbinit}", "help async ps"], plugin=False)
    t.check(rc == 0 and "\nUsage: async ps " in out and err == "", f"lldb-22 with the installed plugin: help async ps:\n{out[-800:]}{err}")

    # The Debian package: the same files under /usr, installed by dpkg into a scratch root (its
    # dependencies are this machine's, not the root's: --force-depends).
    pkg = os.path.join(tmp, "pkg")
    rc, out, err = t.run(["cpack", "-G", "DEB", "--config", os.path.join(t.BUILD, "CPackConfig.cmake"), "-B", pkg],
                         timeout=300)
    debs = [x for x in os.listdir(pkg) if x.endswith(".deb")] if rc == 0 else []
    if not t.check_eq(len(debs), 1, f"cpack -G DEB: one package ({rc}: {err.strip()[-800:]})"):
        return
    droot = os.path.join(tmp, "droot")
    for d in ("info", "updates"):
        os.makedirs(os.path.join(droot, "var", "lib", "dpkg", d))
    open(os.path.join(droot, "var", "lib", "dpkg", "status"), "w").close()
    rc, out, err = t.run(["dpkg", f"--root={droot}", "--force-depends", "--force-script-chrootless", "-i",
                          os.path.join(pkg, debs[0])], timeout=300)
    t.check_eq(rc, 0, f"dpkg -i into a scratch root: {err.strip()[-800:]}")
    rc, out, err = t.run(["dpkg", f"--root={droot}", "-L", "asyncdac"])
    files = sorted(x for x in out.splitlines() if os.path.isfile(os.path.join(droot, x.lstrip("/"))))
    t.check_eq(files, sorted(["/usr/bin/asyncdac", "/usr/lib/asyncdac/libasyncdac-lldb.so", "/usr/lib/asyncdac/asyncdac_lldb.py",
                              "/usr/share/doc/asyncdac/lldbinit", "/usr/share/man/man1/asyncdac.1"] +
                             [f"/usr/share/man/man1/asyncdac-{c}.1" for c in names]), "the package's files")
    with open(os.path.join(droot, "usr", "share", "doc", "asyncdac", "lldbinit")) as f:
        t.check_eq(f.read().splitlines()[-1], "plugin load /usr/lib/asyncdac/libasyncdac-lldb.so", "the package's lldbinit line")
    rc, out, err = t.run([os.path.join(droot, "usr", "bin", "asyncdac"), "--version"])
    t.check(rc == 0 and out.startswith("asyncdac "), f"the package's asyncdac --version: {rc} {out}{err}")
    rc, out, err = t.lldb([f"plugin load {os.path.join(droot, 'usr', 'lib', 'asyncdac', 'libasyncdac-lldb.so')}",
                           "help async ps"], plugin=False)
    t.check(rc == 0 and "\nUsage: async ps " in out and err == "", f"lldb-22 with the package's plugin:\n{out[-800:]}{err}")


# ---- the .deb on a fresh Debian 12 ----

def chroot(root, argv, timeout=300):
    """argv run in root, with a /proc of its own (LLDB needs one) that goes when it exits."""
    return t.run(["unshare", "--mount", "--pid", "--fork", f"--mount-proc={os.path.join(root, 'proc')}", "chroot", root,
                  "env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8",
                  "DEBIAN_FRONTEND=noninteractive"] + argv, timeout=timeout)


def installed(root):
    rc, out, err = chroot(root, ["dpkg-query", "-W", "-f", "${Package}\\n"])
    t.check(rc == 0 and "dpkg" in out.split(), f"dpkg-query in the root: {rc} {err.strip()[-300:]}")
    return set(out.split())


def deb(tmp):
    base = os.path.join(t.BUILD, "debian12", "root")
    rc, out, err = t.run([os.path.join(t.SOURCE, "scripts", "debian-root"), base], timeout=1200)
    if not t.check_eq((rc, err), (0, ""), "scripts/debian-root: a Debian 12 root"):
        return
    pkg = os.path.join(tmp, "pkg")
    rc, out, err = t.run(["cpack", "-G", "DEB", "--config", os.path.join(t.BUILD, "CPackConfig.cmake"), "-B", pkg],
                         timeout=300)
    debs = [x for x in os.listdir(pkg) if x.endswith(".deb")] if rc == 0 else []
    if not t.check_eq(len(debs), 1, f"cpack -G DEB: one package ({rc}: {err.strip()[-800:]})"):
        return
    # A scratch copy of the root (the cached one stays fresh); the packages apt downloads are kept
    # in build/debian12/archives for the next run.
    root = os.path.join(tmp, "debian12")
    rc, out, err = t.run(["cp", "-a", "--reflink=auto", base, root], timeout=300)
    if not t.check_eq((rc, err), (0, ""), "a scratch copy of the Debian 12 root"):
        return
    archives = os.path.join(t.BUILD, "debian12", "archives")
    os.makedirs(archives, exist_ok=True)
    inside = os.path.join(root, "var", "cache", "apt", "archives")
    for x in os.listdir(archives):
        shutil.copy(os.path.join(archives, x), inside)
    shutil.copy(os.path.join(pkg, debs[0]), os.path.join(root, "tmp"))
    before = installed(root)
    t.check("asyncdac" not in before and "lldb-22" not in before and "libjansson4" not in before,
            "the fresh root has neither asyncdac, lldb-22 nor libjansson4")
    # Today's package lists (the cached root's may name versions Debian no longer serves).
    rc, out, err = chroot(root, ["apt-get", "update", "-qq"], timeout=600)
    t.check_eq((rc, err), (0, ""), "apt-get update in the Debian 12 root")
    rc, out, err = chroot(root, ["apt-get", "install", "-y", "-q", "--no-install-recommends", f"/tmp/{debs[0]}", "lldb-22"],
                          timeout=900)
    if not t.check_eq(rc, 0, f"apt-get install the .deb and lldb-22 in the Debian 12 root:\n{out[-1500:]}{err[-1500:]}"):
        return
    for x in os.listdir(inside):
        if x.endswith(".deb") and not x.startswith("asyncdac_"):
            shutil.copy(os.path.join(inside, x), archives)
    # apt resolved the package's dependencies from Debian.
    rc, out, err = t.run(["dpkg-deb", "-f", os.path.join(pkg, debs[0]), "Depends"])
    depends = [x.strip().split()[0] for x in out.split(",")]
    now = installed(root)
    t.check_eq(sorted(x for x in depends + ["asyncdac", "lldb-22", "python3-lldb-22"] if x not in now), [],
               f"installed in the root: asyncdac, its Depends ({', '.join(depends)}), lldb-22")

    rc, want, _ = b.cli(["--version"])
    rc, out, err = chroot(root, ["asyncdac", "--version"])
    t.check_eq((rc, out, err), (0, want, ""), "the installed asyncdac --version")

    # A core of the nested sample, with the files a user would have beside it: the sample (its PDB:
    # source lines) and the runtime's ELF files (LLDB finds a core's modules by their paths).
    core = b.sample_core("nested", "Debug", tmp)
    d = b.dn()
    files = [d["DN_HOST"]] + [os.path.join(d["DN_RUNTIME11"], x) for x in os.listdir(d["DN_RUNTIME11"]) if x.endswith(".so")]
    app = os.path.join(d["DN_APPS"], "11", "Debug", "nested")
    files += [os.path.join(app, x) for x in os.listdir(app)]
    for f in files:
        os.makedirs(os.path.dirname(root + f), exist_ok=True)
        shutil.copy(f, root + f)  # follows links: the runtime's files are links into its pack
    try:
        os.link(core, os.path.join(root, "tmp", "nested.core"))
    except OSError:
        shutil.copy(core, os.path.join(root, "tmp", "nested.core"))
    rc, want, err = b.cli(["ps", core])
    t.check_eq((rc, err), (0, ""), "this build's asyncdac ps")
    t.check(" at Program.cs:" in want, f"ps names source lines:\n{want}")
    rc, out, err = chroot(root, ["asyncdac", "ps", "/tmp/nested.core"])
    t.check_eq((rc, out, err), (0, want, ""), "the installed asyncdac ps")
    rc, out, err = chroot(root, ["lldb-22", "-b", "-x", "-o", "command source /usr/share/doc/asyncdac/lldbinit",
                                 "-o", "target create --core /tmp/nested.core", "-o", "async ps"])
    t.check_eq((rc, err), (0, ""), f"lldb-22 in the root: the package's plugin, async ps: exit code and stderr\n{out}")
    t.check_eq(out.split("(lldb) async ps\n", 1)[-1], want, "lldb-22 in the root: async ps")
    # The adapter runs on the root's python3-lldb-22: async ps is its command, which completes.
    rc, out, err = chroot(root, ["lldb-22", "-b", "-x", "-o", "command source /usr/share/doc/asyncdac/lldbinit",
                                 "-o", "script m = lldb.SBStringList(); print(lldb.debugger.GetCommandInterpreter()"
                                       ".HandleCompletion('async ps --form', 15, 0, -1, m), m.GetStringAtIndex(1))"])
    t.check_eq((rc, out.splitlines()[-1:], err), (0, ["1 --format"], ""), "lldb-22 in the root: async ps --form<TAB>")


# ---- locals ----

def locals_defaults(tmp):
    core = b.sample_core("nested", "Debug", tmp)
    chain = b.cli_json(["ps", core], "ps")["chains"][0]
    task = chain["task"]["address"]
    bt = b.cli_json(["bt", core, "--address", task, "--locals"], "bt --locals")
    _, text, _ = b.cli(["bt", core, "--address", task, "--locals"])
    _, full, _ = b.cli(["bt", core, "--address", task, "--internals"])
    per_frame = re.split(r"^  async #\d+: .*\n", text, flags=re.M)[1:]
    per_frame_all = re.split(r"^  async #\d+: .*\n", full, flags=re.M)[1:]
    frames = bt["chains"][0]["frames"]
    t.check_eq(len(per_frame), len(frames), "bt --locals: a block per frame")
    hidden_somewhere = False
    for i, f in enumerate(frames):
        lines = [x[6:] for x in per_frame[i].splitlines() if x.startswith("      ") and not x.startswith("      note:")]
        every = [x[6:] for x in per_frame_all[i].splitlines() if x.startswith("      ") and not x.startswith("      note:")]
        named = [v for v in f["locals"] if v["kind"] in ("this", "arg") or (v["kind"] == "local" and not v["temporary"])]
        others = [v for v in f["locals"] if v not in named]
        hidden_somewhere |= bool(others)
        want_named = [x for x in every if any(re.match(r"\([^)]*\) %s = " % re.escape(v["name"]), x) for v in named)]
        t.check_eq(len(want_named), len(named), f"frame #{i}: --internals shows every source variable")
        hint = [f"({len(others)} more: compiler temporaries and continuation internals; --internals shows them)"] if others else []
        t.check_eq(lines, want_named + hint, f"frame #{i}: --locals shows the source's variables, then counts the others")
        t.check_eq(len(every), len(f["locals"]), f"frame #{i}: --internals shows every variable")
        t.check_eq(every[:len(named)], want_named, f"frame #{i}: --internals: the source's variables first")
        t.check(all(x.startswith("[") for x in every[len(every) - sum(v["kind"] not in ("this", "arg", "local") for v in f["locals"]):]),
                f"frame #{i}: --internals: the continuation's internals last:\n{per_frame_all[i]}")
        # frame variable: the same lines (and --all the same as --internals).
        rc, out, err = b.cli(["frame", core, "variable", "--address", task, "--frame", str(i)])
        t.check_eq((rc, out.splitlines(), err), (0, lines, ""), f"frame #{i}: frame variable")
        rc, out, err = b.cli(["frame", core, "variable", "--address", task, "--frame", str(i), "--all"])
        t.check_eq((rc, out.splitlines(), err), (0, every, ""), f"frame #{i}: frame variable --all")
    t.check(hidden_somewhere, "the nested sample's frames have temporaries or internals to hide")
    # The awaited task's flags as its status.
    aw = chain["awaiting"]
    want = f"m_stateFlags = {aw['state_flags']} ({aw['status']}"
    t.check(want in text, f"bt --locals: {want!r}... in the gate task's fields:\n{text[:3000]}")


PARTS = {"tools": tools, "deb": deb, "install": install, "locals": locals_defaults, "exit_codes": exit_codes, "json": json_documents, "jsonl": jsonl, "coalesce": coalesce, "graphs": graphs, "diff": diff}


def main():
    part = sys.argv[1]
    tmp = t.tmpdir()
    PARTS[part](tmp)
    t.finish()


if __name__ == "__main__":
    main()
