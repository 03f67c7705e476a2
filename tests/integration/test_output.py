"""output.<part>: what asyncdac prints for people and tools (issue 17), on a createdump core of the
nested sample (and the deep and fanout samples where a part says so).
  exit_codes  one convention for every command of the CLI: 0 ok, 1 the target or its analysis
              failed, 2 the command line is wrong
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402
import btsamples as b  # noqa: E402


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
    t.check_eq(sorted(names), sorted(["runtime", "bt", "ip2md", "dumpmd", "frame", "dumpheap", "ps", "symbols"]),
               "the commands --help lists")
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


PARTS = {"exit_codes": exit_codes}


def main():
    part = sys.argv[1]
    tmp = t.tmpdir()
    PARTS[part](tmp)
    t.finish()


if __name__ == "__main__":
    main()
