"""refs.mixed: `refs <object>` on a createdump core of targets/dotnet/mixed, for every task, awaited
object and state machine box `ps` prints, against the oracle (ClrMD's GCDesc walk: every heap object
referencing it, `oracle objects --refs-to`): the same referencing objects, in heap order, each named
with its type and the field that holds the reference, and that field (oracle `fields`) holds it.
One line per slot: an object holding the reference twice is listed twice. The heap walked in one
part and in four (ASYNCDAC_HEAP_PARTS) gives the same lines. A continuation's slot is
named by the awaited local saved there ("gate (saved local)"): a local `frame variable --address
<continuation>` shows, holding the object.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402


def main():
    tmp = t.tmpdir()
    core = b.sample_core("mixed", "Debug", tmp, parked=True)
    try:
        ps = b.cli_json(["ps", core], "ps")
        named = 0

        def saved(cont, name):
            """The object the local `name` saved in continuation cont holds (frame variable)."""
            d = b.cli_json(["frame", core, "variable", "--address", hex(cont)], "frame variable")
            for v in (d["locals"] if d else []):
                if v["name"] == name and isinstance(v.get("value"), dict):
                    return h(v["value"].get("address") or "0x0")
            return None
        targets = set()
        for st in ps["chains"]:
            targets.add(h(st["task"]["address"]))
            targets.add(h(st["awaiting"]["object"]))
            targets.update(h(f["box"]) for f in st["frames"] if f.get("box"))
        targets = sorted(targets)
        t.check(len(targets) >= 9, f"objects to look up: {len(targets)}")
        argv = []
        for a in targets:
            argv += ["--refs-to", hex(a)]
        d = b.dn()
        out = os.path.join(tmp, "refs.json")
        rc, _, err = t.run(["dotnet", d["DN_ORACLE"], "objects", core, "--dac", d["DN_DAC11"], "--out", out] + argv,
                           timeout=600, env=b._oracle_env())
        if not t.check_eq(rc, 0, f"oracle objects --refs-to: {err[-2000:]}"):
            t.finish()
        import json
        with open(out) as f:
            oracle = {h(k): [h(x) for x in v] for k, v in json.load(f)["refs_to"].items()}
        for a in targets:
            rc, text, err = b.cli(["refs", core, hex(a)])
            t.check_eq((rc, err), (0, ""), f"refs 0x{a:x}: exit code and stderr")
            # The heap walked in one part and in four (ASYNCDAC_HEAP_PARTS, run at once by the
            # threads there are) must list the same slots, in the same order.
            for parts in ("1", "4"):
                prc, ptext, perr = t.run([t.CLI, "refs", core, hex(a)], env={"ASYNCDAC_HEAP_PARTS": parts})
                t.check_eq((prc, ptext, perr), (rc, text, err), f"refs 0x{a:x} in {parts} part(s) of the heap")
            lines = text.splitlines()
            rows = [re.fullmatch(r"  0x([0-9a-f]{16}) (\S.*?), (.+)", l) for l in lines[1:-1]]
            t.check(all(rows), f"refs 0x{a:x}: row format:\n{text}")
            slots = [int(m.group(1), 16) for m in rows if m]
            got = list(dict.fromkeys(slots))  # one line per slot: an object may hold it twice
            t.check_eq(got, oracle[a], f"refs 0x{a:x}: the referencing objects (oracle)")
            t.check_eq(lines[-1], f"{len(slots)} reference{'' if len(slots) == 1 else 's'} (heap objects only: statics, "
                                  "handles and stacks are roots, not listed)", f"refs 0x{a:x}: summary")
            objs = b.oracle_objects(core, tmp, addresses=got)["objects"] if got else {}
            for m in rows:
                if not m:
                    continue
                ref, typ, where = int(m.group(1), 16), m.group(2), m.group(3)
                # The runtime's continuation layout subtypes have no metadata: ClrMD names them
                # Continuation_<layout>, asyncdac by the Continuation class they derive from.
                want = b.display(objs[ref]["type"])
                if want.startswith("Continuation_"):
                    want = "System.Runtime.CompilerServices.Continuation"
                t.check_eq(typ, want, f"refs 0x{a:x}: type of 0x{ref:x} (oracle)")
                m = re.fullmatch(r"(\S+) \(saved local\)", where)
                if m:
                    named += 1
                    t.check_eq(saved(ref, m.group(1)), a, f"refs 0x{a:x}: 0x{ref:x}'s saved local {m.group(1)} holds it (ps --locals)")
                if re.fullmatch(r"[\w<>$.]+", where):
                    t.check_eq(h(objs[ref]["fields"].get(where)), a, f"refs 0x{a:x}: 0x{ref:x}.{where} holds it (oracle)")
        t.check(named >= 3, f"continuation slots named by their saved locals: {named}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
