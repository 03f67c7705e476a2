"""integration.dumpheap: `asyncdac dumpheap` walks the real .NET 11.0.0 GC heap exactly as ClrMD +
Microsoft's DAC enumerate it (tests/oracle/HeapCommand.cs, `oracle heap`).

    test_dumpheap.py default     fanout (10,000 pending chains, Release): a createdump core, a gcore
                                 core, and the live process
    test_dumpheap.py flavours    fanout under server regions (DOTNET_gcServer=1, DATAS off: one heap
                                 per CPU), workstation segments (DOTNET_GCName=libclrgc.so) and
                                 server segments: a createdump core each

On every core:
  - `dumpheap --json`: the (address, MT, size) of every object, in order, equals the oracle's list
    (ClrMD's heap.EnumerateObjects() without free objects); free object count and bytes, per-MT
    counts and sizes, totals equal; no region errors;
  - `dumpheap --stat` (text): the table's per-MT counts and sizes and the Total line equal the oracle's;
  - `dumpheap` (text): the header, then exactly the oracle's objects, then the statistics;
  - `dumpheap --mt <RuntimeAsyncTaskContinuation MT> --short`: exactly the oracle's addresses of it;
  - `dumpheap --type RuntimeAsyncTaskContinuation --stat`: that type only, 10,000 objects;
  - `dumpheap --segments --json`: the regions/segments (address, kind, object range) and the
    allocation contexts equal ClrMD's.
Live: the types with 1,000 or more objects have the same counts as in the core (the parked process
allocates nothing else of them). Bad arguments: one-line errors.
Needs scripts/dotnet-setup's build/dotnet (the `dotnet` test fixture); a missing piece is a failure.
"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
from adactest import h  # noqa: E402

CHAINS = 10000
KINDS = {"Generation0": "gen0", "Generation1": "gen1", "Generation2": "gen2", "Large": "loh", "Pinned": "poh",
         "Frozen": "frozen", "Ephemeral": "ephemeral"}
FLAVOURS = {
    "server-regions": {"DOTNET_gcServer": "1", "DOTNET_GCDynamicAdaptationMode": "0"},
    "workstation-segments": {"DOTNET_GCName": "libclrgc.so"},
    "server-segments": {"DOTNET_GCName": "libclrgc.so", "DOTNET_gcServer": "1"},
}
IDENTIFIERS = {"default": "workstation, regions", "server-regions": "server, regions",
               "workstation-segments": "workstation, segments", "server-segments": "server, segments"}




def dumpheap(target, *args, what):
    """asyncdac dumpheap on a target; (stdout, ok)."""
    rc, out, err = t.run([t.CLI, "dumpheap", *target, *args], timeout=300)
    ok = t.check(rc == 0 and err == "", f"{what}: dumpheap {' '.join(args)} failed ({rc}): {err.strip()[-2000:]}")
    return out, ok


def check_core(core, oracle, flavour, what):
    objects = [(h(a), h(m), s) for a, m, s in oracle["objects"]]
    stats = {h(s["mt"]): (s["count"], s["size"]) for s in oracle["stats"]}
    t.check(oracle["can_walk"] and not oracle["bad_objects"], f"{what}: ClrMD walked the whole heap")

    # 1. Every object, in order.
    out, ok = dumpheap([core], "--json", what=what)
    if ok:
        d = json.loads(out)["dumpheap"]
        t.check(d["gc"].startswith(IDENTIFIERS[flavour]), f"{what}: GC flavour {d['gc']!r}")
        got = [(h(o["address"]), h(o["mt"]), o["size"]) for o in d["objects"]]
        if not t.check_eq(len(got), len(objects), f"{what}: object count"):
            extra, missing = sorted(set(got) - set(objects)), sorted(set(objects) - set(got))
            print(f"  only asyncdac: {[(hex(a), hex(m), s) for a, m, s in extra[:10]]}")
            print(f"  only oracle:   {[(hex(a), hex(m), s) for a, m, s in missing[:10]]}")
        elif got != objects:
            i = next(i for i in range(len(got)) if got[i] != objects[i])
            t.fail(f"{what}: object {i} is {(hex(got[i][0]), hex(got[i][1]), got[i][2])}, "
                   f"the oracle's {(hex(objects[i][0]), hex(objects[i][1]), objects[i][2])}")
        t.check_eq({h(s["mt"]): (s["count"], s["total_size"]) for s in d["statistics"]}, stats, f"{what}: statistics")
        t.check_eq(d["total"], {"objects": oracle["object_count"], "bytes": oracle["total_size"]}, f"{what}: totals")
        t.check_eq(d["free"], {"objects": oracle["free"]["count"], "bytes": oracle["free"]["size"]}, f"{what}: free")
        t.check_eq(d["errors"], [], f"{what}: region errors")
        t.check(d["scan"]["bytes_scanned"] > 0 and d["scan"]["bytes_read"] > 0, f"{what}: scan figures {d['scan']}")

    # 2. --stat as text: the table and the totals.
    out, ok = dumpheap([core], "--stat", what=what)
    if ok:
        rows = {}
        for line in out.splitlines():
            m = re.match(r"^(0x[0-9a-f]{16}) +(\d+) +(\d+) (.*)$", line)
            if m:
                rows[int(m.group(1), 16)] = (int(m.group(2)), int(m.group(3)))
        t.check_eq(rows, stats, f"{what}: --stat table")
        t.check(f"Total {oracle['object_count']:,} objects, {oracle['total_size']:,} bytes" in out,
                f"{what}: --stat Total line:\n{out[-400:]}")
        t.check(f"Free (not listed): {oracle['free']['count']:,} objects, {oracle['free']['size']:,} bytes" in out,
                f"{what}: --stat Free line:\n{out[-400:]}")
        t.check(out.startswith("Statistics:\n"), f"{what}: --stat starts with Statistics:")
        # --stat walks the heap in parts at once (a large heap: one per CPU); this small heap walked
        # in one part and in four (ASYNCDAC_HEAP_PARTS) must print the same.
        for parts in ("1", "4"):
            rc, got, err = t.run([t.CLI, "dumpheap", core, "--stat"], timeout=300, env={"ASYNCDAC_HEAP_PARTS": parts})
            t.check(rc == 0 and got == out, f"{what}: --stat in {parts} heap parts differs from the default")

    # 3. The text listing: a header, every object, then the statistics.
    out, ok = dumpheap([core], what=what)
    if ok:
        lines = out.splitlines()
        t.check_eq(lines[0].split(), ["Address", "MT", "Size"], f"{what}: listing header")
        listed = []
        for line in lines[1:]:
            m = re.match(r"^0x([0-9a-f]{16}) 0x([0-9a-f]{16}) +(\d+)$", line)
            if not m:
                break
            listed.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))))
        t.check(listed == objects, f"{what}: the text listing has {len(listed)} objects, the oracle {len(objects)}")
        t.check("\nStatistics:\n" in out, f"{what}: the listing ends with the statistics")

    # 4. Filters: one MethodTable; a type name.
    rtc = [s for s in oracle["stats"] if s["name"] == "System.Runtime.CompilerServices.RuntimeAsyncTaskContinuation"]
    if t.check(len(rtc) == 1 and rtc[0]["count"] == CHAINS, f"{what}: the oracle sees {CHAINS} RuntimeAsyncTaskContinuation"):
        mt = h(rtc[0]["mt"])
        out, ok = dumpheap([core], "--mt", hex(mt), "--short", what=what)
        if ok:
            t.check_eq([int(x, 16) for x in out.split()], [a for a, m, _ in objects if m == mt], f"{what}: --mt --short")
        out, ok = dumpheap([core], "--type", "RuntimeAsyncTaskContinuation", "--stat", "--json", what=what)
        if ok:
            d = json.loads(out)["dumpheap"]
            got = {h(s["mt"]): s["count"] for s in d["statistics"]}
            want = {h(s["mt"]): s["count"] for s in oracle["stats"] if "RuntimeAsyncTaskContinuation" in (s["name"] or "")}
            t.check_eq(got, want, f"{what}: --type RuntimeAsyncTaskContinuation")
            t.check("objects" not in d, f"{what}: --stat --json lists no objects")

    # 5. The regions/segments and the allocation contexts.
    out, ok = dumpheap([core], "--segments", "--json", what=what)
    if ok:
        g = json.loads(out)["dumpheap"]
        got = sorted((h(s["address"]), s["kind"], s["heap"], h(s["start"]), h(s["end"])) for s in g["segments"])
        want = sorted((h(s["address"]), KINDS.get(s["kind"], s["kind"]), s["heap"], h(s["start"]), h(s["end"]))
                      for s in oracle["segments"])
        t.check_eq(got, want, f"{what}: segments")
        t.check_eq(sorted((h(c["pointer"]), h(c["limit"])) for c in g["allocation_contexts"]),
                   sorted((h(a), h(b)) for a, b in oracle["allocation_contexts"]), f"{what}: allocation contexts")
        t.check_eq(len(g["heaps"]), oracle["subheaps"], f"{what}: heap count")
        t.check(g["structures_valid"], f"{what}: GC structures valid")
    out, ok = dumpheap([core], "--segments", what=what)
    t.check(ok and out.startswith("GC: " + IDENTIFIERS[flavour]) and "Allocation contexts:" in out,
            f"{what}: --segments text:\n{out[:600]}")
    return stats


def check_bad_arguments(core):
    for args, msg in ((["--segments", "--stat"], "--segments of 'dumpheap' takes no object filter"),
                      (["--mt", "nothex"], "invalid value 'nothex' for option --mt of 'dumpheap'"),
                      (["--mt"], "option --mt of 'dumpheap' requires a value"),
                      (["--short", "--json"], "--short of 'dumpheap' cannot be combined"),
                      (["--bogus"], "unknown option '--bogus' for 'dumpheap'")):
        rc, out, err = t.run([t.CLI, "dumpheap", core, *args], timeout=60)
        t.check(rc != 0 and out == "" and msg in err and err.count("\n") == 1,
                f"dumpheap {' '.join(args)}: want a one-line error with {msg!r}, got rc={rc} out={out!r} err={err!r}")


def run_flavour(dn, tmp, flavour, env, cores, live):
    app = os.path.join(dn["DN_APPS"], "11", "Release", "fanout", "fanout.dll")
    p, ready = t.start([dn["DN_HOST"], dn["DN_RUNTIME11"], app], timeout=120, env=env)
    pid = p.pid
    for how in cores:
        core = os.path.join(tmp, f"fanout-{flavour}.{how}")
        rc, out, err = t.run([os.path.join(t.SOURCE, "scripts", "make-core"), str(pid), core, "--" + how], timeout=300)
        if not t.check(rc == 0, f"{flavour}: make-core --{how}: {err.strip()}"):
            continue
        oracle_json = core + ".oracle.json"
        rc, out, err = t.run(["dotnet", dn["DN_ORACLE"], "heap", core, "--dac", dn["DN_DAC11"], "--out", oracle_json],
                             timeout=300)
        if not t.check(rc == 0, f"{flavour}: oracle heap failed ({rc}): {err.strip()[-2000:]}"):
            continue
        with open(oracle_json) as f:
            oracle = json.load(f)
        stats = check_core(core, oracle, flavour, f"{flavour} {how} core")
        if flavour == "default" and how == "createdump":
            check_bad_arguments(core)
        print(f"{flavour} {how} core: {oracle['object_count']} objects, {oracle['free']['count']} free, "
              f"{len(oracle['segments'])} segments, {len(stats)} types", flush=True)
        os.unlink(core)
        if live:
            out, ok = dumpheap(["--pid", str(pid)], "--stat", "--json", what=f"{flavour} live")
            if ok:
                got = {h(s["mt"]): (s["count"], s["total_size"]) for s in json.loads(out)["dumpheap"]["statistics"]}
                big = {mt: v for mt, v in stats.items() if v[0] >= 1000}
                t.check_eq({mt: v for mt, v in got.items() if mt in big}, big, f"{flavour} live: the 1,000+ object types")
                # The listing of a held process: counted first, then printed as it is walked again
                # (no object kept); the same objects as its own statistics and the core's.
                out, ok = dumpheap(["--pid", str(pid)], "--json", what=f"{flavour} live listing")
                if ok:
                    d = json.loads(out)["dumpheap"]
                    listed = collections.Counter(h(o["mt"]) for o in d["objects"])
                    t.check_eq({mt: listed[mt] for mt in big}, {mt: v[0] for mt, v in big.items()},
                               f"{flavour} live listing: the 1,000+ object types")
                    t.check_eq(dict(listed), {h(s["mt"]): s["count"] for s in d["statistics"]},
                               f"{flavour} live listing: its objects are its statistics")
                    addrs = [int(o["address"], 16) for o in d["objects"]]
                    t.check(addrs == sorted(set(addrs)), f"{flavour} live listing: each object once, in address order")
            live = False
    p.kill()


def main():
    dn = t.dotnet_env()
    which = sys.argv[1] if len(sys.argv) > 1 else "default"
    tmp = t.tmpdir()
    if which == "default":
        run_flavour(dn, tmp, "default", {}, ["createdump", "gcore"], live=True)
    elif which == "flavours":
        for flavour, env in FLAVOURS.items():
            run_flavour(dn, tmp, flavour, env, ["createdump"], live=False)
    else:
        t.fail(f"unknown test set '{which}' (want default or flavours)")
    t.finish()


main()
