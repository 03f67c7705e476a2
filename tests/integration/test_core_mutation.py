"""robust.core_mutation: random byte and word mutations anywhere in a real core (ELF header and program
headers, notes, the runtime data and heap the commands read, any segment, any byte), and on every
mutated core `ps`, `bt`, `frame variable`, `dumpheap --stat`, `ps --stats` with a listing helper
thread (ASYNCDAC_LIST_HELPERS=1), `dumpheap --json` (a core's objects printed as they are walked),
`report --json` (every section, and the blocked threads' wait chains), `locks` (the sync table and
every object's header), `threadpool --items` (the pool's queues, threads and work items) and
`clrthreads` (every managed thread and what it does) and `pstacks` (every thread's stack) stay bounded
and well-behaved:
  - exit 0, or 1 with exactly one `asyncdac: error: ...` line;
  - no AddressSanitizer/UBSan/LeakSanitizer report;
  - at most 10 s of CPU time and 1 GiB of RSS each, for a ~110 MB core (3x the time and 2x the memory
    under the sanitizers), and no hang (wall-clock limit: 6x the CPU limit).
Every fourth round, lldb-22 with the plugin opens the mutated core too (the plugin reads it with the
CLI's core reader and through LLDB) and runs `async ps --stats` and `bt async all`: exit 0 or 1, no
crash of LLDB, no UBSan report from the plugin, no hang (the CLI's limits, 3x the CPU for LLDB's own
work, 60 s of wall time). LLDB alone hangs or crashes on some mutated cores (in `target create`):
when it does, stock lldb-22 (no plugin, `thread list` and `bt all`) runs on the same core, and the
round fails only when stock LLDB does not.

The core is a createdump core of targets/dotnet/shapes (Debug: 13 chains of every shape). The pages the
commands read are found by running them once through tests/fuzz/make_image.c's recorder. A round
applies 1 to 32 mutations to a working copy, runs the eight commands, and restores the copy. Every
round has its own seed (ADAC_MUTATION_SEED * 1000003 + round), and a failure prints the round's
mutations and how to rerun it.

  ADAC_MUTATION_ROUNDS   rounds to run (default 40: the suite's fixed-seed short version)
  ADAC_MUTATION_SECONDS  run rounds until this many seconds have passed instead (scripts/fuzz core_mutation)
  ADAC_MUTATION_SEED     base seed (default 15); ADAC_MUTATION_FIRST: first round number (default 0)
  ADAC_MUTATION_CORE     mutate this core (of the shapes sample, or another with a suspended chain) instead
                         of making one
The last line is the summary scripts/fuzz records: rounds, command runs, failures, worst CPU and RSS.
"""
import json
import os
import random
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402

SANITIZED = bool(os.environ.get("ASAN_OPTIONS") or os.environ.get("UBSAN_OPTIONS"))
CPU_LIMIT = 10.0 * (3 if SANITIZED else 1)
RSS_LIMIT = (1 << 30) * (2 if SANITIZED else 1)
SANITIZERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")
LLDB_EVERY = 4                        # rounds: one in LLDB_EVERY also runs lldb-22 on the mutated core
LLDB_CRASH = "PLEASE submit a bug report"  # what LLDB prints when it crashes
LLDB_WALL = 60.0                      # seconds an lldb-22 run may take


def lldb_failure(core, plugin):
    """What went wrong running lldb-22 on core (with the plugin: `async ps --stats`, `bt async all`;
    without: `thread list`, `bt all`), or None."""
    argv = [t.LLDB, "-b", "-x"] + (["-O", f"plugin load {t.PLUGIN}"] if plugin else [])
    argv += ["-o", f"target create --core {core}"]
    argv += sum((["-o", c] for c in (("async ps --stats", "bt async all") if plugin else ("thread list", "bt all"))), [])
    rc, err, cpu, rss, hung = measured(argv, 3 * CPU_LIMIT, wall=LLDB_WALL)
    if hung or cpu > 3 * CPU_LIMIT:
        return f"{'hung' if hung else 'took'} {cpu:.1f} s of CPU (limit {3 * CPU_LIMIT:.0f})"
    if rss > RSS_LIMIT:
        return f"RSS {rss >> 20} MB (limit {RSS_LIMIT >> 20})"
    if LLDB_CRASH in err or any(s in err for s in SANITIZERS) or rc not in (0, 1):
        return f"exit code {rc}: {err.strip()[-3000:]!r}"
    return None


def measured(argv, limit, env=None, wall=None):
    """Runs argv (with env added to the environment); (rc, stderr, CPU seconds, max RSS bytes, timed
    out: after `wall` seconds, 6x the CPU limit by default) of that process alone (wait4)."""
    with tempfile.TemporaryFile() as errf:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errf,
                             env=dict(os.environ, **env) if env else None)
        deadline = time.time() + (wall or 6 * limit)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                timed_out = True
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait for it again
        errf.seek(0)
        err = errf.read().decode(errors="replace")
    return p.returncode, err, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, timed_out


def touched_offsets(core, commands, tmp):
    """File offsets of the pages the commands read (per fuzz-make-image's recorder)."""
    image = os.path.join(tmp, "touched.img")
    argv = [os.path.join(t.BUILD, "bin", "fuzz-make-image"), "--bytes", core, image]
    for i, c in enumerate(commands):
        argv += (["--"] if i else []) + [w for w in c if w != core]
    rc, _, err = t.run(argv, timeout=600)
    if not t.check(rc == 0, f"fuzz-make-image: rc {rc}: {err[-500:]}"):
        t.finish()
    with open(image, "rb") as f:
        data = f.read()
    c = corecore.Core(core)
    pages, i = [], 0
    while i < len(data):
        tag = data[i]
        i += 1
        if tag == ord("R"):
            addr, n = struct.unpack_from("<QI", data, i)
            i += 12 + n
            for a in range(addr, addr + n, corecore.PAGE):
                try:
                    pages.append(c.file_offset(a, corecore.PAGE))
                except ValueError:
                    pass
        elif tag == ord("M"):
            i += 16 + 2 + struct.unpack_from("<H", data, i + 16)[0]
        elif tag == ord("T"):
            i += 8 + 8 * 18
        elif tag == ord("C"):
            i += 2 + struct.unpack_from("<H", data, i)[0]
        else:
            break
    return pages


class Places:
    """Where a mutation may land, by kind, as file offsets."""

    def __init__(self, core, touched):
        self.size = os.path.getsize(core)
        c = corecore.Core(core)
        self.notes, self.headers = c.notes, c.headers_end
        self.touched = touched
        self.segments = [(off, filesz) for _, _, off, filesz in c.loads if filesz]

    def pick(self, rnd):
        kind = rnd.choices(["headers", "notes", "touched", "segment", "anywhere"], [5, 15, 50, 20, 10])[0]
        if kind == "headers":
            return kind, rnd.randrange(self.headers)
        if kind == "notes" and self.notes:
            off, n = rnd.choice(self.notes)
            return kind, off + rnd.randrange(n)
        if kind == "touched" and self.touched:
            return kind, rnd.choice(self.touched) + rnd.randrange(corecore.PAGE)
        if kind == "segment":
            off, n = rnd.choice(self.segments)
            return kind, off + rnd.randrange(n)
        return "anywhere", rnd.randrange(self.size)


def new_bytes(rnd, old, pointers):
    """A mutation of the bytes old (8 of them, fewer at the end of the file)."""
    n = len(old)
    how = rnd.choices(["word", "byte", "dword", "run"], [40, 30, 20, 10])[0]
    if how == "word" and n == 8:
        cur, = struct.unpack("<Q", old)
        v = rnd.choice([0, 2**64 - 1, rnd.getrandbits(64), cur ^ (1 << rnd.randrange(64)), (cur + 8) % 2**64,
                        (cur - 8) % 2**64, rnd.choice(pointers), 0xDEAD0000])
        return struct.pack("<Q", v)
    if how == "dword" and n >= 4:
        cur, = struct.unpack_from("<I", old)
        v = rnd.choice([0, 2**32 - 1, rnd.getrandbits(32), cur ^ (1 << rnd.randrange(32)), rnd.randrange(1, 0x10000),
                        0x7FFFFFFF, 0x80000000])
        return struct.pack("<I", v) + old[4:]
    if how == "run":
        fill = rnd.choice([b"\0", b"\xff", None])
        return bytes(fill[0] if fill else rnd.getrandbits(8) for _ in range(n))
    b_ = bytearray(old)
    i = rnd.randrange(n)
    b_[i] = rnd.choice([rnd.getrandbits(8), b_[i] ^ (1 << rnd.randrange(8))])
    return bytes(b_)


def main():
    tmp = t.tmpdir()
    core = os.environ.get("ADAC_MUTATION_CORE") or b.sample_core("shapes", "Debug", tmp)
    rc, out, err = b.cli(["ps", core, "--json"])
    if not t.check(rc == 0, f"ps --json on the intact core: rc {rc}, {err.strip()}"):
        t.finish()
    # (A suspended chain's task: a running chain's state object is no continuation of its.)
    task = next(c["task"]["address"] for c in json.loads(out)["ps"]["chains"] if not c["running"])
    commands = [["ps", core], ["bt", core], ["frame", core, "variable", "--address", task, "--frame", "0"],
                ["dumpheap", core, "--stat"], ["ps", core, "--stats"], ["dumpheap", core, "--json"],
                ["report", core, "--json"], ["locks", core], ["threadpool", core, "--items"],
                ["clrthreads", core], ["pstacks", core]]
    # ps --stats with a listing helper: the stacks are also resolved on another thread, through a
    # second target over the same (mutated) core.
    envs = {4: {"ASYNCDAC_LIST_HELPERS": "1"}}
    for k, cmd in enumerate(commands):
        rc, err, cpu, rss, hung = measured([t.CLI] + cmd, CPU_LIMIT, envs.get(k))
        t.check(rc == 0 and not hung, f"intact core: asyncdac {' '.join(cmd)}: rc {rc}, {err.strip()[-300:]}")
    places = Places(core, touched_offsets(core, [c for c in commands[:4] + commands[-1:] if c[0] != "bt"], tmp))
    with open(core, "rb") as f:
        f.seek(places.touched[0] if places.touched else 0)
        sample = f.read(corecore.PAGE * 4)
    pointers = [v for v in struct.unpack(f"<{len(sample) // 8}Q", sample[:len(sample) // 8 * 8])
                if 0x10000 < v < 2**47] or [0x7F0000000000]
    work = os.path.join(tmp, "mutated.core")
    shutil.copyfile(core, work)

    seed = int(os.environ.get("ADAC_MUTATION_SEED", "15"))
    first = int(os.environ.get("ADAC_MUTATION_FIRST", "0"))
    seconds = float(os.environ.get("ADAC_MUTATION_SECONDS", "0"))
    rounds = int(os.environ.get("ADAC_MUTATION_ROUNDS", "40"))
    started = time.time()
    done = runs = failures = lldb_own = 0
    worst_cpu, worst_rss = (0.0, ""), (0, "")
    r = first
    with open(work, "r+b") as f:
        while (time.time() - started < seconds) if seconds else (done < rounds):
            rnd = random.Random(seed * 1000003 + r)
            saved = []
            for _ in range(rnd.choice([1, 2, 4, 8, 32])):
                kind, off = places.pick(rnd)
                f.seek(off)
                old = f.read(8)
                new = new_bytes(rnd, old, pointers)
                f.seek(off)
                f.write(new)
                saved.append((off, old, new, kind))
            f.flush()
            bad = []
            for k, cmd in enumerate(commands):
                argv = [t.CLI, cmd[0], work] + cmd[2:]
                rc, err, cpu, rss, hung = measured(argv, CPU_LIMIT, envs.get(k))
                runs += 1
                what = f"asyncdac {' '.join([cmd[0], 'mutated.core'] + cmd[2:])}"
                if cpu > worst_cpu[0]:
                    worst_cpu = (cpu, f"round {r} {cmd[0]}")
                if rss > worst_rss[0]:
                    worst_rss = (rss, f"round {r} {cmd[0]}")
                # Warnings (a core cut short: target/target_core.c) may come first; then one error.
                lines = [l for l in err.strip().splitlines() if not l.startswith("asyncdac: warning: ")]
                if hung or cpu > CPU_LIMIT:
                    bad.append(f"{what}: {'hung' if hung else 'took'} {cpu:.1f} s of CPU (limit {CPU_LIMIT:.0f})")
                elif rss > RSS_LIMIT:
                    bad.append(f"{what}: RSS {rss >> 20} MB (limit {RSS_LIMIT >> 20})")
                elif any(s in err for s in SANITIZERS):
                    bad.append(f"{what}: sanitizer report\n{err[-3000:]}")
                elif rc == 1 and not (len(lines) == 1 and lines[0].startswith("asyncdac: error: ")):
                    bad.append(f"{what}: fails without one 'asyncdac: error:' line (after warnings): {err.strip()[-500:]!r}")
                elif rc not in (0, 1):
                    bad.append(f"{what}: exit code {rc}: {err.strip()[-500:]!r}")
            if r % LLDB_EVERY == 0:
                runs += 1
                why = lldb_failure(work, True)
                if why and not lldb_failure(work, False):
                    bad.append(f"lldb-22 with the plugin on mutated.core (async ps --stats, bt async all): {why}")
                elif why:
                    lldb_own += 1
            if bad:
                failures += 1
                muts = "; ".join(f"{k} at 0x{o:x}: {a.hex()} -> {n.hex()}" for o, a, n, k in saved)
                for msg in bad:
                    t.fail(f"round {r}: {msg}\n  mutations: {muts}\n  rerun: ADAC_MUTATION_SEED={seed} "
                           f"ADAC_MUTATION_FIRST={r} ADAC_MUTATION_ROUNDS=1 ctest -R robust.core_mutation")
            for off, old, _, _ in reversed(saved):
                f.seek(off)
                f.write(old)
            f.flush()
            done += 1
            r += 1
    print(f"mutation: {done} rounds, {runs} command runs, {failures} failing rounds; worst CPU {worst_cpu[0]:.2f} s "
          f"({worst_cpu[1]}), worst RSS {worst_rss[0] >> 20} MB ({worst_rss[1]}); core {os.path.getsize(core) >> 20} MB; "
          f"{lldb_own} lldb-22 runs that stock lldb-22 fails too")
    t.finish()


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash of the CLI is reported, not dumped
    main()
