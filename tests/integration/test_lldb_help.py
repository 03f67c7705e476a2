"""`help async`, `help async <command>` and `help bt` with the plugin loaded.

`async <command>` and `bt` are LLDB parsed commands (the only kind LLDB 22 completes): LLDB writes
their syntax line ("ps [<raw-input>]"); the usage line after it names the options.

The list of commands, their summaries and syntaxes come from the table both front ends share
(adac_commands()), so they are checked against the CLI's help: every command the CLI lists is an
`async` subcommand with the same summary, and `help async <command>` shows `async <command>` with
the CLI's syntax and the same details. `async threads` is LLDB's alone (pending chains as LLDB
threads). `async <command> --help` shows `help async <command>`.
"""
import re

import adactest as t


def words(text):
    return " ".join(text.split())


def cli_commands():
    """{name: summary} from `asyncdac --help`."""
    rc, out, err = t.run([t.CLI, "--help"])
    t.check_eq(rc, 0, "asyncdac --help: exit code")
    commands = {}
    listing = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    name = None
    for line in listing.splitlines():
        m = re.match(r"  (\S+)\s+(.*)$", line)
        if m:
            name = m.group(1)
            commands[name] = m.group(2)
        elif name and line.startswith(" " * 13):  # a summary wrapped at 79 columns
            commands[name] += " " + line.strip()
        t.check(len(line) <= 79, f"asyncdac --help: line longer than 79 columns: {line!r}")
    return commands


def cli_command_help(name):
    """(syntax after the target, details) from `asyncdac <name> --help`."""
    rc, out, err = t.run([t.CLI, name, "--help"])
    t.check_eq(rc, 0, f"asyncdac {name} --help: exit code")
    m = re.search(rf"^Usage: asyncdac {re.escape(name)} (?:<core-file>|<core-A> <core-B>) ?(.*)$", out, re.M)
    syntax = m.group(1) if m else None
    t.check(syntax is not None, f"no usage line in asyncdac {name} --help:\n{out}")
    details = out.split("\n\n", 2)[2] if out.count("\n\n") >= 2 else ""
    return syntax, details


def main():
    commands = cli_commands()
    t.check("runtime" in commands, f"runtime is not among the CLI's commands: {commands}")

    rc, out, err = t.lldb(["help async"])
    t.check_eq((rc, err), (0, ""), "help async: exit code and stderr")
    t.check("asyncdac" in out, f"help async does not name asyncdac:\n{out}")
    listed = {}
    for m in re.finditer(r"^\s+(\S+)\s+--\s+(.*(?:\n\s{10,}\S.*)*)", out, re.M):
        listed[m.group(1)] = words(m.group(2))
    lldb_only = {"threads": "Show each pending async chain (suspended, on no thread) as a thread of its own, "
                            "named after its innermost method and its task's status, or stop showing them. At "
                            "most 10000 chains are threads (--max <n>; 0: every chain), one of each distinct stack "
                            "among them: one more thread then says how many were left out. Without an argument, says "
                            "which it does"}
    t.check_eq(listed, {**{name: words(summary) for name, summary in commands.items()}, **lldb_only},
               "async subcommands and summaries (help async) vs the CLI's commands and LLDB's own")
    rc, out, err = t.lldb(["help async threads"])
    t.check_eq((rc, err), (0, ""), "help async threads: exit code and stderr")
    t.check("\nUsage: async threads [enable [--max <n>] | disable]\n" in out, f"help async threads: usage line\n{out}")

    for name, summary in commands.items():
        syntax, details = cli_command_help(name)
        rc, out, err = t.lldb([f"help async {name}"])
        t.check_eq((rc, err), (0, ""), f"help async {name}: exit code and stderr")
        body = out.split(f"(lldb) help async {name}\n", 1)[-1]
        head, _, rest = body.partition("\nSyntax: ")
        t.check_eq(words(head), words(summary), f"help async {name}: summary")
        # `async <name>` is an LLDB parsed command (those complete: lldb.complete), whose syntax line
        # LLDB 22 writes itself; the usage with the command's options follows it.
        syntax_line, _, rest = rest.partition("\n")
        t.check_eq(syntax_line, f"{name} [<raw-input>]", f"help async {name}: LLDB's syntax line")
        usage, _, long_help = rest.lstrip("\n").partition("\n\n")
        t.check_eq(words(usage), words(f"Usage: async {name} {syntax}"), f"help async {name}: usage")
        long_help = "\n" + long_help
        t.check_eq(words(long_help), words(details), f"help async {name}: details")
        if details:
            t.check(long_help.startswith("\n"), f"help async {name}: no blank line before the details")
            # The details are written in lines of at most 79 columns, so LLDB (which wraps at 80)
            # shows them exactly as the CLI does, option table included.
            t.check(max(len(line) for line in details.splitlines()) <= 79,
                    f"asyncdac {name} --help: detail lines longer than 79 columns:\n{details}")
            t.check_eq(long_help.strip("\n"), details.strip("\n"), f"help async {name}: details, line by line")

    # `async <name> --help` (or -h) is `help async <name>`, as `asyncdac <name> --help` is the CLI's.
    for name, flag in (("ps", "--help"), ("dumpobj", "-h")):
        rc, out, err = t.lldb([f"help async {name}"])
        rc2, out2, err2 = t.lldb([f"async {name} {flag}"])
        t.check_eq((rc2, err2), (0, ""), f"async {name} {flag}: exit code and stderr")
        t.check_eq(out2.split(f"(lldb) async {name} {flag}\n", 1)[-1], out.split(f"(lldb) help async {name}\n", 1)[-1],
                   f"async {name} {flag}: the text of help async {name}")

    rc, out, err = t.lldb(["help bt"])
    t.check_eq((rc, err), (0, ""), "help bt: exit code and stderr")
    t.check("\nUsage: bt [<digit> | all | async [<options>]]\n" in out, f"help bt: usage line\n{out}")
    # help bt describes this bt, with async bt's details, and no longer LLDB's alias of _regexp-bt.
    _, bt_details = cli_command_help("bt")
    t.check("abbreviation for '_regexp-bt'" not in out, f"help bt: not an alias of _regexp-bt any more\n{out}")
    t.check(words(bt_details) in words(out), f"help bt: async bt's details\n{out}")
    t.check("'bt async'" in out, f"help bt does not mention 'bt async':\n{out}")
    t.finish()


main()
