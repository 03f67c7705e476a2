"""robust.sweep: many random corruptions of a real core; asyncdac stays well-behaved and the chains
the corruption did not touch are still reported exactly.

A createdump core of targets/dotnet/shapes (Debug: 17 chains of every shape) is copied and patched,
one round per fixed seed, with 1 to 40 random 64-bit words written into the objects and runtime data
the oracle (ClrMD + Microsoft's DAC) names: continuations, their MethodTables and ResumeInfos, the
MethodDescs of their frames, the owning tasks and their MethodTables. The words written are zero,
all ones, random bits, one flipped bit, a neighbouring pointer, another target's address or an
unmapped address. On every patched core, `ps`, `ps --locals`, `ps --coalesce --json` and
`bt --locals` must:
  - exit 0 (a result, perhaps with error frames) or 1 with exactly one `asyncdac: error: ...` line;
  - finish (60 s timeout) with no AddressSanitizer/UBSan/LeakSanitizer report;
and `ps --json` must list every chain none of whose objects was patched with exactly the frames
(method names) of the intact core: one corrupt chain does not hide the others.
Set ADAC_SWEEP_ROUNDS to run more rounds (default 40), ADAC_SWEEP_CORE to sweep an existing core of
the shapes sample instead of making one.
"""
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
from btsamples import h  # noqa: E402

COMMANDS = [["ps"], ["ps", "--locals"], ["ps", "--coalesce", "--json"], ["bt", "--locals"]]
SANITIZERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")


def stack_objects(o, stack):
    """The addresses (object or structure starts) a listed stack is made of: the continuations of
    every chain stitched into it (with their MethodTables, ResumeInfos and MethodDescs, per the
    oracle) and the tasks that own them."""
    objs = set()
    for seg in stack.get("segments", []):
        task = seg.get("task") or {}
        objs |= {h(task.get("address")), h(task.get("method_table"))}
        for link in seg.get("links", []):
            c = o.conts.get(h(link))
            if not c:
                continue
            objs |= {h(c["address"]), h(c["method_table"]), h(c.get("resume_info"))}
            if c.get("method"):
                objs.add(h(c["method"]["method_desc"]))
    objs.discard(0)
    return objs


def frames_by_task(ps_json):
    out = {}
    for ch in ps_json["ps"]["chains"]:
        task = h((ch.get("task") or {}).get("address"))
        if task:
            out[task] = [f.get("method") for f in ch.get("frames", [])]
    return out


def main():
    rounds = int(os.environ.get("ADAC_SWEEP_ROUNDS", "40"))
    tmp = t.tmpdir()
    core = os.environ.get("ADAC_SWEEP_CORE") or b.sample_core("shapes", "Debug", tmp)
    o = b.oracle(core, tmp)
    intact = corecore.Core(core)
    # (start, bytes) of every patchable structure.
    targets = set()
    for c in o.conts.values():
        targets |= {(h(c["address"]), 96), (h(c["method_table"]), 64), (h(c.get("resume_info")), 16)}
        if c.get("method"):
            targets.add((h(c["method"]["method_desc"]), 32))
    for task, x in o.tasks.items():
        targets |= {(task, 72), (h(x["method_table"]), 64)}
    targets = sorted((a, n) for a, n in targets if a and intact.mapped(a))
    unmapped = intact.unmapped_address(0xDEAD0000)
    rc, out, err = b.cli(["ps", core, "--json"])
    if not t.check(rc == 0, f"ps --json on the intact core: rc {rc}, {err.strip()}"):
        t.finish()
    intact_ps = json.loads(out)
    want = frames_by_task(intact_ps)  # (tasks whose chain has user frames)
    t.check(len(want) >= 10 and set(want) <= set(o.tasks), f"ps lists {len(want)} of the oracle's task-owned chains")
    per_task = {h(st["task"]["address"]): stack_objects(o, st) for st in intact_ps["ps"]["chains"] if st.get("task")}

    patched_core = os.path.join(tmp, "patched.core")
    shutil.copyfile(core, patched_core)
    pc = corecore.Core(patched_core)
    for seed in range(rounds):
        rnd = random.Random(seed)
        hit = set()
        saved = []  # (address, original word): the copy is restored after each round
        for _ in range(rnd.choice([1, 3, 10, 40])):
            start, n = rnd.choice(targets)
            addr = start + 8 * rnd.randrange(n // 8)
            if not pc.mapped(addr):
                continue
            cur = pc.read_u64(addr)
            saved.append((addr, cur))
            value = rnd.choice([0, 2**64 - 1, rnd.getrandbits(64), cur ^ (1 << rnd.randrange(64)), cur + 8,
                                (cur - 8) % 2**64, rnd.choice(targets)[0], unmapped])
            pc.write_u64(addr, value)
            hit.add(start)
        for cmd in COMMANDS:
            what = f"seed {seed}: asyncdac {' '.join(cmd)}"
            try:
                rc, out, err = b.cli([cmd[0], patched_core] + cmd[1:], timeout=60)
            except Exception as e:  # a timeout
                t.check(False, f"{what}: {e}")
                continue
            t.check(not any(s in err for s in SANITIZERS), f"{what}: no sanitizer report\n{err[-2000:]}")
            if rc == 1:
                lines = err.strip().splitlines()
                t.check(len(lines) == 1 and lines[0].startswith("asyncdac: error: "),
                        f"{what}: fails with one 'asyncdac: error:' line, got {err.strip()[-500:]!r}")
            else:
                t.check_eq(rc, 0, f"{what}: exit code")
        rc, out, err = b.cli(["ps", patched_core, "--json"], timeout=60)  # rc 1: said in one line (above)
        if rc == 0:
            got = frames_by_task(json.loads(out))
            for task, objs in per_task.items():
                if not objs & hit:
                    t.check_eq(got.get(task), want[task], f"seed {seed}: untouched chain of task {task:#x}")
        for addr, word in reversed(saved):
            pc.write_u64(addr, word)
    t.finish()


if __name__ == "__main__":
    main()
