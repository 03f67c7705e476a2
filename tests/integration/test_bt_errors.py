"""bt.errors: bad input to `bt` gives one exact error line and a failure exit, in the CLI and in lldb.

On a createdump core of targets/dotnet/nested (addresses from the oracle: the empty string
System.String::Empty, the TaskCompletionSource's task NestedApp.s_gate._task, which is a task but
owns no continuation), and live for the thread and address cases:
  --address 0x1              not an object address (misaligned); the address named once
  --address 0xdeadbeef000    unreadable; the address named once
  --address <a string>       "(System.String) is neither a Continuation nor a task ..., and no
                             pending async stack holds it" (s_gate.Task is accepted: bt.address)
  --thread 999999            no such thread
  --depth 0, --depth <cap+1> out of range (the cap is ADAC_MAX_CHAIN_DEPTH of dac/base/limits.h)
  --frobnicate, --address with no value, --address zz, --all with --thread, 65 addresses
CLI: exit code 1, nothing on stdout, exactly "asyncdac: error: <message>\\n" on stderr.
lldb-22 -b (`async bt ...` and `bt async ...`): exit code 1, nothing after the command's echo,
exactly "error: <message>\\n" on stderr (for --thread, lldb's message adds how to name a thread).
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402
from btsamples import h  # noqa: E402

EMPTY = "System.String::Empty"
GATE = "AsyncdacSamples.NestedApp::s_gate._task"


def chain_depth_cap():
    with open(os.path.join(t.SOURCE, "dac", "base", "limits.h")) as f:
        m = re.search(r"#define ADAC_MAX_CHAIN_DEPTH (\d+)u?", f.read())
    return int(m.group(1))


USAGE_MESSAGES = ("--depth must", "unknown option", "option --", "invalid value", "give either", "at most")


def main():
    tmp = t.tmpdir()
    s = b.sample("nested", "Debug")
    try:
        core = b.make_core(s.pid, os.path.join(tmp, "nested.core"))
        objs = b.oracle_objects(core, tmp, statics=[EMPTY, GATE])
        string = h(objs["statics"][EMPTY]["address"])
        gate = h(objs["statics"][GATE]["address"])
        t.check_eq(objs["statics"][EMPTY].get("type"), "System.String", "String.Empty's type (oracle)")
        cap = chain_depth_cap()
        neither = "is neither a Continuation nor a task whose state object is a Continuation"
        # (arguments, exact message or a regex that must match it whole, lldb's message if different);
        # errors in the options themselves are usage errors: the CLI exits 2 for them, 1 for the rest
        cases = [
            (["--address", "0x1"], "0x1 is not an object address", None),
            (["--address", "0xdeadbeef000"], re.compile(r"(?=.*0xdeadbeef000)(?!.*0xdeadbeef000.*0xdeadbeef000).*cannot read.*"), None),
            (["--address", hex(string)], f"{hex(string)} (System.String) {neither}, and no pending async stack holds it "
                                         "(see `ps`)", None),
            (["--thread", "999999"], "no thread 999999 in the target",
             "no thread 999999 in the target (give its index, as 'thread list' shows)"),
            (["--depth", "0"], f"--depth must be between 1 and {cap}", None),
            (["--depth", str(cap + 1)], f"--depth must be between 1 and {cap}", None),
            (["--frobnicate"], "unknown option '--frobnicate' for 'bt'", None),
            (["--address"], "option --address of 'bt' requires a value", None),
            (["--address", "zz"], "invalid value 'zz' for option --address of 'bt'", None),
            (["--all", "--thread", "1"], "give either --all or --thread, not both", None),
            (sum((["--address", hex(gate)] for _ in range(65)), []), "at most 64 addresses", None),
        ]

        def matches(want, got):
            return bool(want.fullmatch(got)) if isinstance(want, re.Pattern) else want == got

        for target, name in (([core], "core"), (["--pid", str(s.pid)], "live")):
            for args, msg, _ in cases:
                if name == "live" and args[0] not in ("--address", "--thread"):
                    continue  # argument errors do not depend on the target
                what = f"{name}: CLI bt {' '.join(args[:4])}"
                rc, out, err = b.cli(["bt"] + target + args)
                usage = isinstance(msg, str) and msg.startswith(USAGE_MESSAGES)
                want_rc = 2 if usage else 1
                t.check(rc == want_rc and out == "",
                        f"{what}: want exit {want_rc} and no output, got {rc} and {out[:300]!r}")
                m = re.fullmatch(r"asyncdac: error: (.*)\n", err)
                t.check(m is not None and matches(msg, m.group(1)),
                        f"{what}: want the one line 'asyncdac: error: {getattr(msg, 'pattern', msg)}', got {err!r}")
        for args, msg, lldb_msg in cases:
            for form in ("async bt", "bt async"):
                cmd = " ".join([form] + args)
                what = f"core: lldb {cmd[:60]}"
                rc, out, err = t.lldb(b.lldb_target(core=core) + [cmd])
                out = b.LLDB_EVENT.sub("", out)
                err = b.LLDB_NOISE.sub("", err)
                t.check_eq(rc, 1, f"{what}: exit code")
                t.check(out.rstrip("\n").endswith(f"(lldb) {cmd}"), f"{what}: no output after the command:\n{out[-500:]}")
                m = re.fullmatch(r"error: (.*)\n", err)
                want = lldb_msg or msg
                t.check(m is not None and matches(want, m.group(1)),
                        f"{what}: want the one line 'error: {getattr(want, 'pattern', want)}', got {err!r}")
    finally:
        s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
