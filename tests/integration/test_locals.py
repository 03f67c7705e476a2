"""integration.locals: awaited locals (`bt --locals`, `frame variable`) on the real .NET 11.0.0 runtime.

    test_locals.py <nested|shapes> <Debug|Release>   every chain of the sample, from a createdump core
                                                     and live; lldb on the core (nested Debug)
    test_locals.py running                           the chain a thread runs: frame select by thread
    test_locals.py corrupt                           patched copies of a nested Debug core

What must be shown comes from the samples' sources and expected.json (names, types, values written
in the source) and from the oracle (tests/oracle: ClrMD + Microsoft's DAC) for the chain heads, never
from asyncdac itself:
  - Debug: every argument, local and `this` listed in expected.json for a frame is shown, with its
    name, its static type in asyncdac's C# style (keywords, generic parameters resolved: T = int,
    T = string through the generic context in shared code) and its value, both as JSON and as the
    exact text line (addresses normalised); the types inside values (an object's dynamic type, a
    boxed value's, an array's elements) are spelled in the same style in text and JSON;
  - Release: the JIT saves fewer variables; whatever is shown under a name from expected.json must
    be right (a shared-code T may show as System.__Canon when the JIT kept no generic context);
  - exactly the variables the async debug info lists for Continuation.State, at their offsets (the
    chunk decoded here, in Python, from the core's bytes);
  - the same text from the core and from the live process, and from lldb's `async` commands;
  - corrupt: State out of range, an absurd count and a truncated variable list in the async debug
    info give one error line on that frame only; the other frames keep all their locals.
"""
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
import corecore  # noqa: E402
from btsamples import h  # noqa: E402

KEYWORDS = {
    "System.Boolean": "bool", "System.Char": "char", "System.SByte": "sbyte", "System.Byte": "byte",
    "System.Int16": "short", "System.UInt16": "ushort", "System.Int32": "int", "System.UInt32": "uint",
    "System.Int64": "long", "System.UInt64": "ulong", "System.Single": "float", "System.Double": "double",
    "System.IntPtr": "nint", "System.UIntPtr": "nuint", "System.String": "string", "System.Object": "object",
}
# Declared types of the sample fields whose values print with an address (their text carries it).
FIELD_TYPES = {("AsyncdacSamples.Pair", "Tag"): "object"}
ADDR = re.compile(r"0x[0-9a-f]{16}")


def keyword_type(name, generic):
    """A type name from expected.json (the DAC's spelling) in asyncdac's C# style."""
    name = generic.get(name, name)
    return re.sub(r"System\.[A-Za-z0-9]+", lambda m: KEYWORDS.get(m.group(0), m.group(0)), name)


def shortest(d):
    r = repr(float(d))
    return r[:-2] if r.endswith(".0") else r


def value_text(v, static):
    """The text asyncdac must print for expected value v of static type `static` (keyword style)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return shortest(v)
    if isinstance(v, str):
        quoted = '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return quoted if static == "string" else "0xADDR string " + quoted
    if "char" in v:
        return "'" + v["char"] + "'"
    if "enum" in v:
        return v["name"]
    if "boxed" in v:
        boxed = keyword_type(v["boxed"], {})
        return "0xADDR %s %s" % (boxed, value_text(v["value"], boxed))
    if "array" in v:
        elem = keyword_type(v["array"], {})
        return "%s[%d] { %s }" % (elem, len(v["values"]), ", ".join(value_text(x, elem) for x in v["values"]))
    kind = "class" if "class" in v else "struct"
    parts = []
    for k, x in v["fields"].items():
        declared = FIELD_TYPES.get((v[kind], k))
        if declared:
            parts.append("%s = (%s) %s" % (k, declared, value_text(x, declared)))
        else:
            parts.append("%s = %s" % (k, value_text(x, "string" if isinstance(x, str) else None)))
    body = "{ " + ", ".join(parts) + " }"
    if kind == "struct":
        return body
    dyn = "" if keyword_type(v["class"], {}) == static else keyword_type(v["class"], {}) + " "
    return "0xADDR " + dyn + body


def text_checkable(v):
    """Values whose whole text expected.json determines (all fields listed, no notes)."""
    if not isinstance(v, dict):
        return True
    if "note" in v or v.get("class", "").startswith("System."):
        return False
    return all(text_checkable(x) for x in v.get("fields", {}).values()) and \
        all(text_checkable(x) for x in v.get("values", []))


def value_diff(want, got, path="value"):
    """Differences between an expected.json value and asyncdac's JSON value ([] when equal)."""
    if isinstance(want, bool) or want is None:
        return [] if got == want else [f"{path}: {got!r}, want {want!r}"]
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        ok = isinstance(got, (int, float)) and not isinstance(got, bool) and float(got) == float(want)
        return [] if ok else [f"{path}: {got!r}, want {want!r}"]
    if isinstance(want, str):
        return [] if got == want else [f"{path}: {got!r}, want {want!r}"]
    if not isinstance(got, dict):
        return [f"{path}: {got!r}, want {want!r}"]
    diffs = []
    for key in ("char", "code", "enum", "name", "value", "boxed", "class", "struct", "array"):
        if key not in want:
            continue
        # Type names: as the text spells them (C# style).
        w = keyword_type(want[key], {}) if key in ("enum", "boxed", "class", "struct", "array") else want[key]
        if key == "value" and "boxed" in want:
            diffs += value_diff(want["value"], got.get("value"), path + ".value")
        elif got.get(key) != w:
            diffs.append(f"{path}.{key}: {got.get(key)!r}, want {w!r}")
    for k, x in want.get("fields", {}).items():
        diffs += value_diff(x, got.get("fields", {}).get(k, "<missing>"), f"{path}.{k}")
    if "values" in want:
        gv = got.get("values", [])
        if len(gv) != len(want["values"]):
            diffs.append(f"{path}: {len(gv)} values, want {len(want['values'])}")
        for i, (x, y) in enumerate(zip(want["values"], gv)):
            diffs += value_diff(x, y, f"{path}[{i}]")
    return diffs


def method_matches(exp_frame, oracle_frame):
    name = (oracle_frame.get("method") or "").split("[[")[0]
    if oracle_frame.get("method_type") != exp_frame["type"]:
        return False
    if exp_frame.get("method") is not None:
        return name == exp_frame["method"]
    return name.startswith(exp_frame.get("method_prefix", "\0"))


def match_chains(exp, o):
    """[(expected chain, oracle head)] for every expected chain."""
    result = []
    used = set()
    for ec in exp["chains"]:
        for oc in o.chains:
            uf = o.user_frames(oc)
            if h(oc["head"]) in used or len(uf) != len(ec["frames"]):
                continue
            if all(method_matches(ef, of) for ef, of in zip(ec["frames"], uf)):
                result.append((ec, h(oc["head"])))
                used.add(h(oc["head"]))
                break
        else:
            t.fail(f"chain {ec['name']}: not found in the oracle's chains")
    return result


def expected_vars(ef):
    """(name, kind, expected type, value) of each variable expected.json lists for a frame."""
    out = []
    if "this" in ef:
        out.append(("this", "this", ef["this"]["class"], ef["this"]))
    for a in ef.get("args", []):
        out.append((a["name"], "arg", a["type"], a["value"]))
    for v in ef.get("locals", []):
        out.append((v["name"], "local", v["type"], v["value"]))
    return out


CHECKED = {"variables": 0, "lines": 0}


def check_frame(what, ef, locals_json, text_lines, config):
    generic = {k: v for k, v in ef.get("generic", {}).items()}
    by_name = {v["name"]: v for v in locals_json}
    for name, kind, typ, value in expected_vars(ef):
        got = by_name.get(name)
        if got is None:
            if config == "Debug":
                t.fail(f"{what}: {name} is not shown (Debug keeps every local live across the await)")
            continue
        CHECKED["variables"] += 1
        t.check_eq(got["kind"], kind, f"{what}: {name}: kind")
        want_type = keyword_type(typ, generic)
        if kind == "this":
            want_type = keyword_type(typ, {})
        shared_ok = config == "Release" and ef.get("shared_code") and got["type"] == "System.__Canon"
        if not shared_ok:
            t.check_eq(got["type"], want_type, f"{what}: {name}: type")
        if got.get("error"):
            t.fail(f"{what}: {name}: {got['error']}")
            continue
        for d in value_diff(value, got["value"]):
            t.fail(f"{what}: {name}: {d}")
        if text_checkable(value) and not shared_ok:
            line = "(%s) %s = %s" % (want_type, name, value_text(value, want_type))
            CHECKED["lines"] += 1
            t.check(line in text_lines, f"{what}: the line {line!r} is printed (got: {by_name[name]['text']!r})")


def locals_text(out, normalise=True):
    """bt --locals text: {frame index: [local lines, addresses normalised]}."""
    frames, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"  async #(\d+): ", line)
        if m:
            cur = int(m.group(1))
            frames[cur] = []
        elif cur is not None and line.startswith("      ") and not line.startswith("      note:"):
            frames[cur].append(ADDR.sub("0xADDR", line[6:]) if normalise else line[6:])
    return frames


def scenario_test(scenario, config, tmp):
    exp = b.expected(scenario)
    s = b.sample(scenario, config)
    core = b.make_core(s.pid, os.path.join(tmp, f"{scenario}.core"))
    o = b.oracle(core, tmp)
    whole = corecore.Core(core)
    chains = match_chains(exp, o)
    for ec, head in chains:
        what = f"{scenario} {config} chain {ec['name']}"
        addr = hex(head)
        j = b.cli_json(["bt", core, "--address", addr, "--locals"], what)
        rc, text, err = b.cli(["bt", core, "--address", addr, "--locals"])
        t.check(rc == 0 and err == "", f"{what}: bt --locals: rc {rc}, stderr {err!r}")
        rc, live, err = b.cli(["bt", "--pid", str(s.pid), "--address", addr, "--locals"])
        t.check_eq(live, text, f"{what}: bt --locals live vs core")
        if not j:
            continue
        frames = j["chains"][0]["frames"]
        texts = locals_text(text)
        raw = locals_text(text, normalise=False)
        if not t.check_eq(len(frames), len(ec["frames"]), f"{what}: frames"):
            continue
        for i, (ef, gf) in enumerate(zip(ec["frames"], frames)):
            fwhat = f"{what} #{i} {ef.get('method') or ef.get('method_prefix')}"
            if not t.check(gf.get("locals") is not None, f"{fwhat}: locals: {gf.get('locals_error')}"):
                continue
            # Exactly the variables the debug info lists for State (decoded here), at their offsets.
            want = sorted(debug_info_vars(core, whole, h(gf["diagnostic_ip"]), gf["state"]))
            got = sorted((v["var_number"], v["offset"]) for v in gf["locals"] if v["kind"] != "slot")
            t.check_eq(got, want, f"{fwhat}: (VarNumber, Offset) of the variables shown")
            check_frame(fwhat, ef, gf["locals"], texts.get(i, []), config)
            # frame variable <name> prints exactly the bt line of that variable.
            for v in gf["locals"][:3]:
                if v["kind"] == "slot" or v.get("temporary"):
                    continue  # bt shows these with --internals only
                rc, out, err = b.cli(["frame", core, "variable", v["name"], "--address", addr, "--frame", str(i)])
                want = next((ln for ln in raw.get(i, []) if re.match(r"\([^)]*\) %s = " % re.escape(v["name"]), ln)),
                            None)
                if want and rc == 0 and out.startswith(want + "\n"):
                    continue
                t.fail(f"{fwhat}: frame variable {v['name']}: rc {rc} {err!r}: {out!r}, want {want!r}")
    if scenario == "nested" and config == "Debug" and chains:
        lldb_nested(core, chains[0][1])
    print(f"{scenario} {config}: {len(chains)} chains, {CHECKED['variables']} variables checked "
          f"({CHECKED['lines']} of them as exact text lines)")
    t.check(CHECKED["variables"] > 0, "some variable was checked")
    s.kill()


def lldb_nested(core, head):
    """lldb: async frame select / variable / info on the core give the CLI's lines."""
    addr = hex(head)
    cmds = [f"async frame select 1 --address {addr}", "async frame variable bInt", "async frame variable bPair",
            "async frame select 2", "async frame variable aArray", "async frame info",
            f"async bt --address {addr} --locals"]
    out = b.run_lldb([f"target create --core {core}"], cmds, "lldb frame")
    rc, want_bt, _ = b.cli(["bt", core, "--address", addr, "--locals"])
    t.check(b.lldb_output(out, cmds[0]).startswith("async #1: "), "lldb: frame select 1 prints frame #1")
    t.check_eq(b.lldb_output(out, cmds[1]), "(int) bInt = -200\n", "lldb: frame variable bInt")
    t.check_eq(ADDR.sub("0xADDR", b.lldb_output(out, cmds[2])),
               '(AsyncdacSamples.Pair) bPair = { Id = 22, Tag = (object) 0xADDR string "tag-b", Count = 23 }\n',
               "lldb: frame variable bPair")
    t.check(b.lldb_output(out, cmds[3]).startswith("async #2: "), "lldb: frame select 2 stays in the address chain")
    t.check_eq(b.lldb_output(out, cmds[4]), "(int[]) aArray = int[3] { 1, 2, 3 }\n", "lldb: frame variable aArray")
    t.check(b.lldb_output(out, cmds[5]).startswith("async #2: ") and "NestedApp.A(Int32)" in b.lldb_output(out, cmds[5]),
            "lldb: frame info shows the selected frame")
    t.check_eq(b.lldb_output(out, cmds[6]), want_bt, "lldb: async bt --locals equals the CLI's")


def running_test(tmp):
    """The chain a thread runs: frames numbered as bt numbers them for that thread."""
    exp = b.expected("running")["running"]["dispatcher_frames"]
    s = b.sample("running", "Debug", mode="park")
    tid = s.tid
    for i, ef in enumerate(exp):
        v = ef["locals"][0]
        want = "(%s) %s = %s\n" % (keyword_type(v["type"], {}), v["name"], value_text(v["value"], keyword_type(v["type"], {})))
        rc, out, err = b.cli(["frame", "--pid", str(s.pid), "variable", v["name"], "--thread", str(tid), "--frame", str(i)])
        t.check_eq((rc, out, err), (0, want, ""), f"running: frame variable {v['name']} --thread {tid} --frame {i}")
    # lldb, in one session (pool threads come and go: LLDB's indexes can change between two
    # attaches): select the thread by its OS id.
    cmds = [f"thread select -t {tid}", "async frame select 1", "async frame variable topLocal",
            "async frame select 0", "async frame variable midLocal", "thread info"]
    out = b.run_lldb(b.lldb_target(pid=s.pid), cmds, "lldb running")
    t.check("RunTop" in b.lldb_output(out, cmds[1]), "running: lldb frame select 1 is RunTop")
    t.check_eq(b.lldb_output(out, cmds[2]), '(string) topLocal = "top-running"\n', "running: lldb topLocal")
    t.check("RunMiddle" in b.lldb_output(out, cmds[3]), "running: lldb frame select 0 is RunMiddle")
    t.check_eq(b.lldb_output(out, cmds[4]), "(long) midLocal = 909\n", "running: lldb midLocal")
    t.check(re.search(r"thread #\d+: tid = %d," % tid, b.lldb_output(out, cmds[5])), "running: lldb thread info")
    s.kill()


# ---- corrupt debug info and State, in copies of a core ------------------------------------------

def nibble_u32s(data, count):
    """The first `count` nibble-encoded U32s of data, and the byte index after them."""
    vals, pos = [], 0

    def nib(i):
        byte = data[i // 2]
        return byte & 0xF if i % 2 == 0 else byte >> 4
    for _ in range(count):
        v = 0
        while True:
            n = nib(pos)
            pos += 1
            v = (v << 3) | (n & 7)
            if not n & 8:
                break
        vals.append(v)
    return vals, (pos + 1) // 2


def nibble_bytes(values):
    """U32s nibble-encoded (3-bit groups, high first, bit 3 = more), low nibble first."""
    nibs = []
    for v in values:
        groups = []
        while True:
            groups.append(v & 7)
            v >>= 3
            if not v:
                break
        groups.reverse()
        nibs += [g | 8 for g in groups[:-1]] + [groups[-1]]
    if len(nibs) % 2:
        nibs.append(0)
    return bytes(nibs[i] | nibs[i + 1] << 4 for i in range(0, len(nibs), 2))


def decode_async(data):
    """The async chunk: [(DiagnosticNativeOffset, [(VarNumber, Offset), ...]) per suspension point]."""
    (nsp, total), pos = nibble_u32s(data, 2)
    raw, _ = nibble_u32s(data, 2 + 2 * nsp + 2 * total)
    points, native, at = [], 0, 2
    for _ in range(nsp):
        u = raw[at]
        native += -(u >> 1) if u & 1 else u >> 1
        points.append([native, raw[at + 1]])
        at += 2
    result = []
    for native, n in points:
        result.append((native, [(raw[at + 2 * k] - 6, raw[at + 2 * k + 1]) for k in range(n)]))
        at += 2 * n
    return result


def debug_info_vars(core_path, whole, dip, state):
    """(VarNumber, Offset) of suspension point `state` of the code at dip, decoded here from the core."""
    rc, out, err = b.cli(["ip2md", core_path, hex(dip), "--json"])
    blob = h(json.loads(out)["ip2md"]["debug_info"])
    chunk, size = async_chunk(whole, blob)
    return decode_async(whole.read(chunk, size))[state][1]


def async_chunk(core, blob):
    """(address, length) of the async chunk of the fat debug-info blob at `blob`."""
    head = core.read(blob, 48)
    vals, nbytes = nibble_u32s(head, 7)
    if vals[0] != 0:
        raise SystemExit(f"FAIL: debug info at 0x{blob:x} has a thin header")
    sizes = vals[1:]
    return blob + nbytes + sum(sizes[:5]), sizes[5]


def corrupt_test(tmp):
    s = b.sample("nested", "Debug")
    core = b.make_core(s.pid, os.path.join(tmp, "nested.core"))
    s.kill()
    o = b.oracle(core, tmp)
    task = next(iter(o.tasks))
    chain = o.chain_of_task(task)
    head = hex(h(chain["head"]))
    c_frame = b.frame_facts(o, o.user_frames(chain)[0])
    rc, intact, err = b.cli(["bt", core, "--address", head, "--locals"])
    frames = locals_text(intact)
    if not t.check(rc == 0 and len(frames) == 3 and all(frames.values()), f"intact core: bt --locals ({err!r})"):
        return
    rc, out, err = b.cli(["ip2md", core, hex(c_frame["diagnostic_ip"]), "--json"])
    blob = h(json.loads(out)["ip2md"]["debug_info"])
    whole = corecore.Core(core)
    chunk, size = async_chunk(whole, blob)
    data = whole.read(chunk, size)
    (nsp, nvars), _ = nibble_u32s(data, 2)
    t.check_eq((nsp, nvars), (1, 18), "C's async chunk: 1 suspension point, 18 variables")

    state_at = c_frame["continuation"] + o.fields["State"]
    absurd = nibble_bytes([0xFFFFFFFF, 0xFFFFFFFF])
    # The variable count raised so that it still passes the size check but the list ends early.
    (nsp_, total, delta, spvars), after = nibble_u32s(data, 4)
    truncated = nibble_bytes([1, 40, delta, 40]) + data[after:]
    cases = [
        ("state", [(state_at, struct.pack("<I", 5))],
         "error: State 5 is out of range: the method's debug info has 1 suspension point"),
        ("absurd-count", [(chunk, absurd + data[len(absurd):])],
         "error: debug info at 0x%x: debug info async chunk: suspension point count 4294967295 does not fit in its %d bytes"
         % (blob, size)),
        ("truncated", [(chunk, (truncated + bytes(size))[:size])],
         "error: debug info at 0x%x: debug info async chunk: continuation var" % blob),
    ]
    for name, patches, want in cases:
        path = os.path.join(tmp, f"nested-{name}.core")
        corecore.patched_copy(core, path, patches)
        rc, out, err = b.cli(["bt", path, "--address", head, "--locals"])
        got = locals_text(out)
        t.check(rc == 0 and err == "", f"corrupt {name}: exit 0 (rc {rc}, {err!r})")
        t.check(len(got.get(0, [])) == 1 and got[0][0].startswith(want),
                f"corrupt {name}: frame #0 has one line starting {want!r}, got {got.get(0)!r}")
        t.check_eq(got.get(1), frames[1], f"corrupt {name}: frame #1 keeps its locals")
        t.check_eq(got.get(2), frames[2], f"corrupt {name}: frame #2 keeps its locals")
        j = b.cli_json(["bt", path, "--address", head, "--locals"], f"corrupt {name}")
        if j:
            f0 = j["chains"][0]["frames"][0]
            t.check(f0["locals"] is None and (f0.get("locals_error") or "").startswith(want[len("error: "):]),
                    f"corrupt {name}: JSON frame 0 has locals_error {f0.get('locals_error')!r}")
            t.check(j["chains"][0]["frames"][1]["locals"], f"corrupt {name}: JSON frame 1 has locals")
        os.unlink(path)


def main():
    tmp = t.tmpdir()
    mode = sys.argv[1] if len(sys.argv) > 1 else "nested"
    if mode == "running":
        running_test(tmp)
    elif mode == "corrupt":
        corrupt_test(tmp)
    else:
        scenario_test(mode, sys.argv[2] if len(sys.argv) > 2 else "Debug", tmp)
    t.finish()


main()
