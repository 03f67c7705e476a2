#!/usr/bin/env python3
"""Checks an oracle JSON (tests/oracle) against a scenario's expected.json.

    check_oracle.py <oracle.json> <expected.json> [--runtime 11|10] [--tid N] [--mode M] [--strict-abc]

.NET 11: every expected chain shape must appear exactly `count` times among the oracle's chains
(head type, frame method names in callee -> caller order, declaring types, await source lines,
owning task type), and every oracle chain that has a method frame must be an expected one.
For "running", the running thread's AsyncDispatcherInfo chain and stack are checked instead.
.NET 10 (array layout, no DiagnosticIP): frame methods come from the resume stubs'
names (IL_STUB_AsyncResume_<method>_<tier>); only method names and counts are checked.
--strict-abc (scenario 1): additionally require that exactly one chain has user frames and that
they are exactly C, B, A.
Prints one line per problem and exits 1 if there is any.
"""
import collections
import json
import re
import sys


def base_name(name):
    return None if name is None else name.split("[[", 1)[0]


def expand(frames):
    out = []
    for f in frames:
        out.extend([f] * f.get("repeat", 1))
    return out


def frame_matches(exp, got, check_types=True, check_lines=True):
    name = base_name(got.get("method"))
    if exp.get("method_prefix"):
        if name is None or not name.startswith(exp["method_prefix"]):
            return False
    elif name != exp["method"]:
        return False
    if check_types and exp.get("type") and got.get("method_type") != exp["type"]:
        return False
    if check_lines and "await_line" in exp and got.get("source_line") != exp["await_line"]:
        return False
    return True


def squeeze(names):
    out = []
    for n in names:
        if out and out[-1][0] == n:
            out[-1][1] += 1
        else:
            out.append([n, 1])
    return " -> ".join(n if c == 1 else f"{n} x{c}" for n, c in out)


def describe(frames):
    return squeeze(f"{base_name(f.get('method')) or f.get('type')}@{f.get('source_line', '?')}" for f in frames)


def split_head(frames):
    if frames and frames[0].get("method") is None and frames[0].get("diagnostic_ip") in ("0x0", None):
        return frames[0]["type"], frames[1:]
    return None, frames


def check11(oracle, expected, problems, strict_abc):
    tasks = {t["address"]: t for t in oracle["tasks"]}
    exp_chains = expected["chains"]
    counts = collections.Counter()
    for ch in oracle["chains"]:
        head, frames = split_head(ch["frames"])
        if not any(f.get("method") for f in frames):
            continue  # infrastructure-only (per-thread sentinel continuations)
        task_type = tasks[ch["task"]]["type"] if ch.get("task") in tasks else None
        matched = None
        for i, ec in enumerate(exp_chains):
            ef = expand(ec["frames"])
            if len(ef) != len(frames) or ec.get("head") != head or ec.get("task") != task_type:
                continue
            if all(frame_matches(e, g) for e, g in zip(ef, frames)):
                matched = i
                break
        if matched is None:
            if expected["scenario"] == "running" and ch.get("task") is None:
                continue  # the stale suspension chain of the running frames (see expected.json)
            problems.append(f"unexpected chain (head={head}, task={task_type}): {describe(frames)}")
        else:
            counts[matched] += 1
    for i, ec in enumerate(exp_chains):
        if counts[i] != ec["count"]:
            problems.append(f"chain '{ec['name']}': expected {ec['count']}, found {counts[i]}")
    if strict_abc:
        user = [ch for ch in oracle["chains"] if any(f.get("method") for f in ch["frames"])]
        if len(user) != 1:
            problems.append(f"expected exactly one chain with user frames, found {len(user)}")
        else:
            names = [base_name(f["method"]) for f in user[0]["frames"] if f.get("method")]
            if names != ["C", "B", "A"]:
                problems.append(f"user frames through Next are {names}, expected ['C', 'B', 'A']")
    if "running" in expected:
        check_running(oracle, expected["running"], problems)


def check_running(oracle, exp, problems, tid=None):
    disp = oracle.get("dispatchers", {})
    threads = disp.get("threads")
    if threads is None:
        problems.append(f"oracle has no dispatcher info: {disp.get('error')}")
        return
    want_tid = check_running.tid
    cands = [t for t in threads if want_tid is None or t["os_thread_id"] == want_tid]
    if len(cands) != 1:
        problems.append(f"expected one thread with AsyncDispatcherInfo.t_current (tid {want_tid}), found {len(cands)}")
        return
    t = cands[0]
    recs = t["records"]
    if not recs:
        problems.append("t_current has no records")
        return
    frames = recs[0]["frames"]
    ef = exp["dispatcher_frames"]
    if len(frames) != len(ef) or not all(frame_matches(e, g) for e, g in zip(ef, frames)):
        problems.append(f"dispatcher chain is {describe(frames)}; expected {' -> '.join(e['method'] + '@' + str(e['await_line']) for e in ef)}")
    stack = "\n".join(t["stack"])
    wanted = list(exp["stack_contains"])
    if check_running.mode not in ("park", "break"):
        # crash modes die inside StopHere; sigstop stops inside tgkill() (ParkRunning only follows
        # if something -- e.g. gdb detaching -- continues the process before the dump)
        wanted.remove("RunningApp.ParkRunning")
    for s in wanted:
        if s not in stack:
            problems.append(f"running thread's stack lacks {s}")


check_running.tid = None
check_running.mode = "park"


STUB = re.compile(r"^IL_STUB_AsyncResume_(.+)_([A-Za-z0-9]+)$")


def check10(oracle, expected, problems):
    if any(f["name"] == "ResumeInfo" for f in oracle["layout"].get("continuation_fields", [])):
        problems.append("oracle JSON has a ResumeInfo field: this is not the .NET 10 array layout")
    names = {f["name"] for f in oracle["layout"].get("continuation_fields", [])}
    for want in ("Next", "Resume", "State", "Flags", "Data", "GCData"):
        if want not in names:
            problems.append(f".NET 10 Continuation lacks field {want} (has {sorted(names)})")
    exp_shapes = collections.Counter()
    for ec in expected["chains"]:
        exp_shapes[tuple((f.get("method") or f.get("method_prefix"), bool(f.get("method_prefix")))
                         for f in expand(ec["frames"]))] += ec["count"]
    got = collections.Counter()
    for ch in oracle["chains"]:
        if ch.get("task") is None:
            continue  # stale (unreachable) continuations left from earlier suspensions
        seq = []
        for f in ch["frames"]:
            m = STUB.match(f.get("resume_stub") or "")
            if m and m.group(1) != "Await":
                seq.append(m.group(1))
        # Leading stubs of infrastructure awaits (e.g. get_Task) are not user frames.
        while seq and not any(seq[0] == n or (pre and seq[0].startswith(n)) for sh in exp_shapes for n, pre in sh):
            seq.pop(0)
        if seq:
            got[tuple(seq)] += 1

    def fits(g, shape):
        return len(g) == len(shape) and all(x.startswith(n) if pre else x == n for x, (n, pre) in zip(g, shape))

    for shape, n in exp_shapes.items():
        found = sum(c for g, c in got.items() if fits(g, shape))
        if found != n:
            problems.append(f".NET 10 chain {squeeze(x for x, _ in shape)}: expected {n}, found {found}")
    for g, c in got.items():
        if not any(fits(g, shape) for shape in exp_shapes) and expected["scenario"] != "running":
            problems.append(f".NET 10: unexpected chain {squeeze(g)} (x{c})")


def main(argv):
    args = [a for a in argv[1:]]
    runtime = "11"
    strict = False
    if "--runtime" in args:
        i = args.index("--runtime")
        runtime = args[i + 1]
        del args[i:i + 2]
    if "--tid" in args:
        i = args.index("--tid")
        check_running.tid = int(args[i + 1])
        del args[i:i + 2]
    if "--mode" in args:
        i = args.index("--mode")
        check_running.mode = args[i + 1]
        del args[i:i + 2]
    if "--strict-abc" in args:
        strict = True
        args.remove("--strict-abc")
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        oracle = json.load(f)
    with open(args[1]) as f:
        expected = json.load(f)
    problems = []
    if runtime == "10":
        check10(oracle, expected, problems)
    else:
        check11(oracle, expected, problems, strict)
    for p in problems:
        print(f"check_oracle: {expected['scenario']}: {p}")
    if not problems:
        print(f"check_oracle: {expected['scenario']} (.NET {runtime}): ok, {len(oracle['chains'])} chains, "
              f"{len(oracle['continuations'])} continuations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
