"""integration.ip2md: `asyncdac ip2md` on the real .NET 11.0.0 runtime agrees with Microsoft's DAC.

    test_ip2md.py [scenario [Debug|Release]]      (default: nested Debug)

Starts a sample (default "nested", scenario 1, parked with one chain C -> B -> A), makes a full core
with createdump, and checks, from the core and from the live process:
  - every continuation's DiagnosticIP (JIT code; the oracle, tests/oracle, gives the DAC's answer):
    same MethodDesc, code start and offset; also the first and last byte of each such method and
    points deep inside it (these go through the nibble map's pointer units);
  - every continuation's resume stub (a fixup precode in a RangeList section): the DAC's MethodDesc;
  - ReadyToRun CoreLib methods the DAC reports as precompiled (picked with ClrMD + the DAC through
    `dotnet fsi`): same MethodDesc and code start, kind r2r, R2R format >= 17, debug info found;
  - addresses in no managed code fail with a one-line "not in any code range" error;
  - the live process and the core give the same answers.
Needs scripts/dotnet-setup's build/dotnet (the `dotnet` test fixture); a missing piece is a failure.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from adactest import DOTNET_DIR, h  # noqa: E402

R2R_SAMPLES = 12

# ClrMD + Microsoft's DAC: what the DAC says for given IPs, and some ReadyToRun CoreLib methods
# (their current code is the precompiled one) with an IP in the middle of each.
FSX = r'''
#r "@CLRMD@"
open Microsoft.Diagnostics.Runtime
let args = fsi.CommandLineArgs |> Array.skip 1
let core, dac, count = args.[0], args.[1], int args.[2]
let ips = args |> Array.skip 3 |> Array.map (fun s -> System.Convert.ToUInt64(s, 16))
let dt = DataTarget.LoadDump(core)
let clr = dt.ClrVersions.[0]
// ClrMD cannot read the version of a .NET 11 libcoreclr.so from a core; the DAC is from the same pack.
let rt = try clr.CreateRuntime(dac) with _ -> clr.CreateRuntime(dac, true)
let hex (v: uint64) = sprintf "\"0x%x\"" v
let report (kind: string) (ip: uint64) =
    let m = rt.GetMethodByInstructionPointer(ip)
    if isNull m then printfn "{\"kind\":\"%s\",\"ip\":%s,\"method_desc\":null}" kind (hex ip)
    else printfn "{\"kind\":\"%s\",\"ip\":%s,\"method_desc\":%s,\"code_start\":%s,\"hot_size\":%d,\"compilation\":\"%O\",\"name\":%s}" kind (hex ip) (hex m.MethodDesc) (hex m.HotColdInfo.HotStart) m.HotColdInfo.HotSize m.CompilationType (System.Text.Json.JsonSerializer.Serialize(string m.Signature))
for ip in ips do report "given" ip
let corelib = rt.AppDomains |> Seq.collect (fun d -> d.Modules) |> Seq.find (fun m -> not (isNull m.Name) && m.Name.EndsWith("System.Private.CoreLib.dll"))
let r2r =
    corelib.EnumerateTypeDefToMethodTableMap()
    |> Seq.map (fun struct (mt, _) -> rt.GetTypeByMethodTable(mt))
    |> Seq.filter (fun ty -> not (isNull ty))
    |> Seq.collect (fun ty -> ty.Methods)
    |> Seq.filter (fun m -> m.CompilationType = MethodCompilationType.Ngen && m.NativeCode <> 0UL && m.NativeCode <> System.UInt64.MaxValue && m.HotColdInfo.HotSize > 8u)
    |> Seq.distinctBy (fun m -> m.NativeCode)
    |> Seq.toArray
let step = max 1 (r2r.Length / max 1 count)
for i in 0 .. step .. r2r.Length - 1 do
    let m = r2r.[i]
    report "r2r" (m.NativeCode + uint64 (m.HotColdInfo.HotSize / 2u))
'''




def ip2md(target, ip):
    """asyncdac ip2md --json on a target (["core"] or ["--pid", pid]); (result dict or None, stderr)."""
    rc, out, err = t.run([t.CLI, "ip2md", *target, hex(ip), "--json"], timeout=60)
    if rc != 0:
        return None, err.strip()
    try:
        return json.loads(out)["ip2md"], err
    except (ValueError, KeyError) as e:
        t.fail(f"ip2md {hex(ip)}: unparsable output ({e}): {out!r}")
        return None, err


def check_code(target, ip, want_md, want_start, kind, what):
    got, err = ip2md(target, ip)
    if not t.check(got is not None, f"{what}: ip2md {hex(ip)} failed: {err}"):
        return None
    t.check_eq(got["kind"], kind, f"{what}: kind")
    t.check_eq(h(got["method_desc"]), want_md, f"{what}: MethodDesc of {hex(ip)}")
    t.check_eq(h(got["code_start"]), want_start, f"{what}: code start of {hex(ip)}")
    t.check_eq(got["offset"], ip - want_start, f"{what}: offset of {hex(ip)}")
    return got


def main():
    dn = t.dotnet_env()
    scenario = sys.argv[1] if len(sys.argv) > 1 else "nested"
    config = sys.argv[2] if len(sys.argv) > 2 else "Debug"
    p = b.sample(scenario, config)
    pid = p.pid
    live = ["--pid", str(pid)]
    tmp = t.tmpdir()
    core = b.make_core(pid, os.path.join(tmp, scenario + ".core"))
    oracle = b.oracle(core, tmp).data

    # 1. DiagnosticIPs (JIT code), from the core and live.
    conts = [c for c in oracle["continuations"] if h(c.get("diagnostic_ip", "0x0"))]
    t.check(len(conts) >= 3, f"the oracle found {len(conts)} continuations with a DiagnosticIP, want 3 or more")
    seen_ips, seen_methods = set(), set()
    for c in conts:
        ip = h(c["diagnostic_ip"])
        m = c["method"]
        if ip in seen_ips:  # recursion: the same suspension point many times
            continue
        seen_ips.add(ip)
        if not t.check(m is not None, f"continuation {c['address']}: the DAC knows no method for {hex(ip)}"):
            continue
        md, start, size = h(m["method_desc"]), h(m["hot_start"]), m["hot_size"]
        what = f"DiagnosticIP of {m['name']}"
        kind = "r2r" if m["compilation"] == "Ngen" else "jit"
        core_res = check_code([core], ip, md, start, kind, what + " (core)")
        live_res = check_code(live, ip, md, start, kind, what + " (live)")
        if core_res and live_res:
            t.check_eq(live_res, core_res, f"{what}: live and core answers")
        if core_res and kind == "jit":
            t.check(h(core_res["code_header"]) != 0 and h(core_res["debug_info"]) != 0,
                    f"{what}: code header and debug info found")
        # The whole method body maps to it: first byte, deep inside (pointer units), last byte.
        if (md, start) in seen_methods:
            continue
        seen_methods.add((md, start))
        for probe in sorted({start, start + size // 3, start + 2 * size // 3, start + size - 1}):
            check_code([core], probe, md, start, kind, f"{what}, byte +{hex(probe - start)}")

    # 2. Resume stubs: fixup precodes in a RangeList section; the DAC's answer via ClrMD below.
    resumes = sorted({h(c["resume"]) for c in oracle["continuations"] if h(c.get("resume", "0x0"))})
    t.check(len(resumes) >= 1, f"{len(resumes)} resume stubs")

    # 3. ClrMD + the DAC: the resume stubs, and ReadyToRun CoreLib methods.
    fsx = os.path.join(tmp, "ms.fsx")
    with open(fsx, "w") as f:
        f.write(FSX.replace("@CLRMD@", os.path.join(DOTNET_DIR, "oracle", "Microsoft.Diagnostics.Runtime.dll")))
    fenv = {"DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1", "DOTNET_SKIP_FIRST_TIME_EXPERIENCE": "1"}
    rc, out, err = t.run(["dotnet", "fsi", "--quiet", fsx, core, dn["DN_DAC11"], str(R2R_SAMPLES),
                          *[hex(r) for r in resumes]], timeout=300, env=fenv)
    if not t.check(rc == 0, f"dotnet fsi (ClrMD) failed ({rc}): {err.strip()[-2000:]}"):
        t.finish()
    ms = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for r in [r for r in ms if r["kind"] == "given"]:
        ip = h(r["ip"])
        got, err = ip2md([core], ip)
        if not t.check(got is not None, f"resume stub {hex(ip)}: {err}"):
            continue
        t.check_eq(got["kind"], "stub", f"resume stub {hex(ip)}: kind")
        t.check_eq(got.get("precode"), "fixup", f"resume stub {hex(ip)}: precode")
        t.check(r["method_desc"] is not None, f"resume stub {hex(ip)}: the DAC knows its MethodDesc")
        if r["method_desc"] is not None:
            t.check_eq(h(got["method_desc"]), h(r["method_desc"]), f"resume stub {hex(ip)} ({r['name']}): MethodDesc")
        t.check_eq(h(got["code_start"]), ip, f"resume stub {hex(ip)}: precode entry")
        inner, _ = ip2md([core], ip + 7)  # inside the precode: the same entry and MethodDesc
        t.check(inner is not None and inner["code_start"] == got["code_start"]
                and inner["method_desc"] == got["method_desc"], f"resume stub {hex(ip)} + 7: same precode")
    r2r = [r for r in ms if r["kind"] == "r2r"]
    t.check(len(r2r) >= R2R_SAMPLES // 2, f"ClrMD found {len(r2r)} ReadyToRun CoreLib methods")
    for r in r2r:
        ip = h(r["ip"])
        what = f"R2R {r['name']}"
        got = check_code([core], ip, h(r["method_desc"]), h(r["code_start"]), "r2r", what)
        if got:
            t.check(got.get("r2r_major", 0) >= 17, f"{what}: R2R format {got.get('r2r_major')}")
            t.check(h(got["debug_info"]) != 0, f"{what}: debug info found")
            t.check(got["debug_info_flag_byte"] is False, f"{what}: no flag byte")
        got_live = check_code(live, ip, h(r["method_desc"]), h(r["code_start"]), "r2r", what + " (live)")
        if got and got_live:
            t.check_eq(got_live, got, f"{what}: live and core answers")

    # 4. Addresses in no managed code: one-line errors.
    libcoreclr = h(oracle["runtime"]["base"])
    for ip, what in ((0x1000, "a low address"), (libcoreclr + 0x1000, "libcoreclr.so's code")):
        rc, out, err = t.run([t.CLI, "ip2md", core, hex(ip)], timeout=60)
        t.check(rc != 0 and out == "" and f"{hex(ip)} is not in any code range" in err and err.count("\n") == 1,
                f"{what}: want a one-line 'not in any code range' error, got rc={rc} out={out!r} err={err!r}")

    # 5. The text form, for one DiagnosticIP.
    if conts and conts[0]["method"]:
        ip = h(conts[0]["diagnostic_ip"])
        rc, out, err = t.run([t.CLI, "ip2md", core, hex(ip)], timeout=60)
        m = conts[0]["method"]
        rc2, md_out, _ = t.run([t.CLI, "dumpmd", core, hex(h(m["method_desc"]))], timeout=60)
        name = next((l.split(":", 1)[1].strip() for l in md_out.splitlines() if l.startswith("Method Name:")), "?")
        want = (f"MethodDesc:       0x{h(m['method_desc']):016x}\n"
                f"Method Name:      {name}\n"
                "Code kind:        jit\n"
                f"Code start:       0x{h(m['hot_start']):016x}\n"
                f"IP:               0x{ip:016x} (+{hex(ip - h(m['hot_start']))})\n")
        t.check(rc == 0 and out.startswith(want), f"text form: want it to start with\n{want}got\n{out}{err}")
        t.check("Code header:" in out and "Debug info:       0x" in out and "Range section:" in out,
                f"text form lists the code header, debug info and range section:\n{out}")

    print(f"{scenario} ({config}): checked {len(conts)} DiagnosticIPs ({len(seen_ips)} distinct), {len(resumes)} resume stubs, {len(r2r)} ReadyToRun methods "
          f"(live pid {pid} and core)", flush=True)
    p.kill()
    t.finish()


main()
