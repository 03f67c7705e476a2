"""Tab completion of asyncdac's commands in lldb-22 (issue 17): LLDB's own completer
(SBCommandInterpreter.HandleCompletionWithDescriptions, what the tab key calls), run inside the
real lldb-22 with the plugin loaded, on command lines typed up to the cursor; and the tab key
itself, typed into lldb-22 on a pseudo-terminal.

The options each command completes are those its `asyncdac <command> --help` lists under
"Options:", in that order; enumerated values (ps --format and --status, symbols --dwarf and
--auto, frame's subcommands, async threads' enable and disable) complete to exactly their
values; `bt` completes `all`, `async` and, after `async`, async bt's options. A single match
completes the rest of the word and a space, as LLDB does for its own commands. The words a
command forwards to `_async` (quoted by the adapter) arrive there exactly as typed. Without the
adapter, the plugin's own commands are `async <command>` and `bt` (without completion).
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import adactest as t  # noqa: E402

DRIVER = '''
import json, lldb
import asyncdac_lldb
from lldb.plugins.parsed_cmd import ParsedCommand

class Echo(ParsedCommand):
    """Prints the words LLDB hands a parsed command without options (as asyncdac's get them)."""
    def setup_command_definition(self):
        p = self.get_parser()
        p.add_argument_set([p.make_argument_element(lldb.eArgRawInput, "star")])
    def get_short_help(self):
        return "echo"
    def __call__(self, debugger, args, exe_ctx, result):
        result.AppendMessage(json.dumps([args.GetItemAtIndex(i).GetStringValue(1 << 20) for i in range(args.GetSize())]))

def __lldb_init_module(debugger, internal_dict):
    ci = debugger.GetCommandInterpreter()
    out = {}
    # The words asyncdac's commands forward to _async: quoted, then split by LLDB again.
    r = lldb.SBCommandReturnObject()
    ci.HandleCommand("command script add -p -c %(module)s.Echo adac-echo", r)
    words = json.load(open(%(words)r))
    ci.HandleCommand("adac-echo " + " ".join(asyncdac_lldb._quoted(w) for w in words), r)
    out["forwarded"] = json.loads(r.GetOutput() or "null")
    for line in json.load(open(%(lines)r)):
        matches, descriptions = lldb.SBStringList(), lldb.SBStringList()
        n = ci.HandleCompletionWithDescriptions(line, len(line), 0, -1, matches, descriptions)
        out[line] = [n, [matches.GetStringAtIndex(i) for i in range(matches.GetSize())],
                     [descriptions.GetStringAtIndex(i) for i in range(descriptions.GetSize())]]
    json.dump(out, open(%(out)r, "w"))
'''


def cli_options(name):
    """[(long option, first line of its help)] from `asyncdac <name> --help`, in order."""
    rc, out, err = t.run([t.CLI, name, "--help"])
    t.check_eq(rc, 0, f"asyncdac {name} --help")
    block = out.split("\nOptions:\n", 1)[1] if "\nOptions:\n" in out else ""
    options = []
    for line in block.splitlines():
        m = re.match(r"^  (?:-\S, |    )(--[a-z-]+)(?: <[^>]*>)? +(.*)$", line)
        if m:
            options.append((m.group(1), m.group(2)))
        elif not line.startswith(" " * 8):
            break
    return options


def cli_commands():
    rc, out, err = t.run([t.CLI, "--help"])
    listing = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  (\S+)\s", listing, re.M)]


def interactive(steps):
    """lldb-22 with the plugin on a pseudo-terminal of 120x40: for each (text, key) types text, then
    key, and returns what the terminal showed after the key (the line is cleared after each)."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm"
        os.execvp(t.LLDB, [t.LLDB, "-x", "-O", f"plugin load {t.PLUGIN}"])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def read(quiet=0.5, limit=20.0):
        out, end, last = b"", time.time() + limit, time.time()
        while time.time() < end and time.time() - last < quiet:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    out += os.read(fd, 65536)
                except OSError:
                    break
                last = time.time()
        return out.decode(errors="replace")

    shown = []
    try:
        read(quiet=1.5)
        for text, key in steps:
            os.write(fd, text.encode())
            read()
            os.write(fd, key.encode())
            shown.append(read())
            os.write(fd, b"\x15")  # ^U: clear the line
            read()
        os.write(fd, b"quit\n")
        read()
    finally:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    return shown


def main():
    tmp = t.tmpdir()
    commands = cli_commands()
    want = {  # line -> the matches LLDB lists (before them: the common part it inserts)
        "async ": sorted(commands + ["threads"]),
        "async p": ["pe", "ps", "pstacks"],
        "async ps --format ": ["tree", "folded", "dot"],
        "async ps --status Wait": ["WaitingForActivation", "WaitingToRun", "WaitingForChildrenToComplete"],
        "async symbols --dwarf ": ["4", "5"],
        "async symbols --auto ": ["on", "off"],
        "async frame ": ["select", "variable", "info"],
        "async frame v": ["variable"],
        "async threads ": ["enable", "disable"],
        "bt ": ["all", "async"],
        "bt a": ["all", "async"],
        "async ps --method ": [],   # free text: nothing to offer
        "async ps 0x10 --js": ["--json", "--jsonl"],
        "async dumpmd 0x1": [],     # an address
    }
    single = {  # line -> the one match, and what LLDB inserts
        "async ps --f": ("--format", "ormat "),
        "async ps --format f": ("folded", "olded "),
        "async ps -F d": ("dot", "ot "),
        "async ps 0x10 --coa": ("--coalesce", "lesce "),
        "async ps --coalesce --meth": ("--method", "od "),
        "bt async --lo": ("--locals", "cals "),
        "bt as": ("async", "ync "),
        "async bt --thr": ("--thread", "ead "),
    }
    options = {name: cli_options(name) for name in commands}
    t.check(len(options["ps"]) >= 10 and ("--format", "tree: as --coalesce; folded: one line per distinct") in options["ps"],
            f"ps --help lists its options: {options['ps']}")
    for name, opts in options.items():
        want[f"async {name} --"] = [o for o, _ in opts]
    want["bt async --"] = [o for o, _ in options["bt"]]

    lines = list(want) + list(single)
    with open(os.path.join(tmp, "lines.json"), "w") as f:
        json.dump(lines, f)
    driver = os.path.join(tmp, "complete_driver.py")
    result = os.path.join(tmp, "completions.json")
    words = ["a b", 'x"y', "it's", "back\\slash", "tick`x`", "$HOME", "-c", "--", "", "tab\there"]
    with open(os.path.join(tmp, "words.json"), "w") as f:
        json.dump(words, f)
    with open(driver, "w") as f:
        f.write(DRIVER % {"lines": os.path.join(tmp, "lines.json"), "out": result, "module": "complete_driver",
                          "words": os.path.join(tmp, "words.json")})
    rc, out, err = t.lldb([f"command script import {driver}"])
    if not t.check_eq((rc, err), (0, ""), f"lldb-22: the completion driver\n{out[-2000:]}"):
        t.finish()
    with open(result) as f:
        got = json.load(f)

    t.check_eq(got["forwarded"], words, "words forwarded to _async arrive as typed")
    for line, matches in want.items():
        n, m, d = got[line]
        t.check_eq((n, m[1:]), (len(matches), matches), f"completions of {line!r}")
    for line, (match, inserted) in single.items():
        n, m, d = got[line]
        t.check_eq((n, m), (1, [inserted, match]), f"the one completion of {line!r}")
    # Options come with the first line of their help (LLDB shows it beside each).
    n, m, d = got["async ps --"]
    t.check_eq(list(zip(m[1:], d[1:])), options["ps"], "async ps --: each option with its help")

    # The tab key itself: lldb-22 on a terminal (a pty with a window size: LLDB 22's editline
    # completes nothing on a 0x0 terminal), typing, then tab.
    typed = interactive([("async ps --f", "\t"), ("async ps --format ", "\t"), ("bt async --lo", "\t")])
    t.check(re.match(r"\r\x1b\[\d+Gormat \x1b", typed[0]) is not None, f"tab after 'async ps --f' inserts 'ormat ': {typed[0]!r}")
    t.check(re.search(r"Available completions:\r\n +tree *\r\n +folded *\r\n +dot *\r\n", typed[1]) is not None,
            f"tab after 'async ps --format ' lists tree, folded, dot: {typed[1]!r}")
    t.check(re.match(r"\r\x1b\[\d+Gcals \x1b", typed[2]) is not None, f"tab after 'bt async --lo' inserts 'cals ': {typed[2]!r}")

    # Without the adapter (no asyncdac_lldb.py beside the plugin) the plugin's own commands are
    # `async <command>` and `bt`, as before: no completion, LLDB's syntax line is the table's.
    alone = os.path.join(tmp, "alone")
    os.makedirs(alone)
    shutil.copy(t.PLUGIN, alone)
    rc, out, err = t.lldb([f"plugin load {os.path.join(alone, os.path.basename(t.PLUGIN))}", "help async ps", "help bt"],
                          plugin=False)
    t.check(rc == 0 and "\nSyntax: async ps [--coalesce" in out and "\nSyntax: bt [<digit> | all | async [<options>]]" in out
            and "asyncdac_lldb.py not found" in err, f"the plugin without its adapter:\n{out[-1500:]}{err}")
    t.finish()


main()
