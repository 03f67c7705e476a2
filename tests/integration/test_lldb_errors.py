"""Errors of `async runtime` in lldb-22: one line on stderr, `lldb -b` exits 1, nothing after runs.

  test_lldb_errors.py no_process   no target; a target without a process
  test_lldb_errors.py not_dotnet   a process without .NET; libcoreclr.so without a descriptor
  test_lldb_errors.py bad_option   unknown option, stray argument
  test_lldb_errors.py running      the process runs (lldb in asynchronous mode)
  test_lldb_errors.py corrupt      damaged descriptors (bad magic, absurd size, invalid JSON, wild
                                   JSON pointer), live and from a core; same line as the CLI's
"""
import os
import shutil
import sys

import adactest as t

TARGET = os.path.join(t.SYNTHETIC, "synthetic-target")
NODESC = os.path.join(t.SYNTHETIC, "synthetic-target-nodesc")
NO_PROCESS = "error: no process (use 'process attach', 'process launch' or 'target create --core')\n"
# Printed after the failing command if batch mode did not stop there.
SENTINEL = "script print('after')"


def check_error(commands, expected, what, pre=()):
    """expected: the exact stderr, or a predicate on it."""
    rc, out, err = t.lldb(commands + [SENTINEL], pre=pre)
    t.check_eq(rc, 1, f"{what}: exit code")
    if callable(expected):
        t.check(expected(err), f"{what}: unexpected stderr {err!r}")
    else:
        t.check_eq(err, expected, f"{what}: stderr")
    t.check(SENTINEL not in out, f"{what}: commands after the error ran:\n{out}")
    return out, err


def one_error_line(err):
    return err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1


def test_no_process():
    check_error(["async runtime"], NO_PROCESS, "no target")
    check_error([f"file {TARGET}", "async runtime"], NO_PROCESS, "target without a process")
    check_error(["async runtime --json"], NO_PROCESS, "no target, --json")
    # A process that ran to its end is gone too.
    check_error([f"file {TARGET}", "run bp", "async runtime"], NO_PROCESS, "exited process")


def test_not_dotnet():
    # Stopped at its entry point: only the program, ld.so and the vDSO are loaded.
    check_error(["file /bin/sleep", "process launch -s -- 1", "async runtime"],
                "error: no .NET runtime in the target: no libcoreclr.so and no module exports "
                "DotNetRuntimeContractDescriptor\n", "process without .NET")
    lib = os.path.join(t.SYNTHETIC, "nodesc", "libcoreclr.so")
    # Preloaded: the linker may drop the program's DT_NEEDED on it, as nothing of it is used.
    out, err = check_error([f"file {NODESC}", f"settings set target.env-vars LD_PRELOAD={lib}", "b stop_here",
                            "run bp", "async runtime"], one_error_line,
                           "libcoreclr.so without a descriptor")
    t.check(t.normalize(err) == f"error: {lib} at 0xADDR exports no DotNetRuntimeContractDescriptor (a .NET "
            "runtime older than 9, or a build without data contracts)\n", f"nodesc: stderr {err!r}")


def test_bad_option():
    live = [f"file {TARGET}", "b stop_here", "run bp"]
    check_error(live + ["async runtime --bogus"], "error: unknown option '--bogus' for 'runtime'\n", "unknown option")
    check_error(live + ["async runtime extra"], "error: unexpected argument 'extra' for 'runtime'\n", "stray argument")
    # The option is checked before the runtime is looked for: same error on a non-.NET process.
    check_error(["file /bin/sleep", "process launch -s -- 1", "async runtime -x"],
                "error: unknown option '-x' for 'runtime'\n", "unknown option, no .NET")
    # ... and before the target: no process, or a mistyped option, says the option.
    check_error(["async ps --stats --bogus"], "error: unknown option '--bogus' for 'ps'\n", "unknown option, no target")
    check_error(["async ps --method"], "error: option --method of 'ps' requires a value\n",
                "option without its value, no target")


def test_running():
    # In asynchronous mode a launched process runs while commands are taken. The failing command
    # goes through HandleCommand from Python so that the batch can go on and kill the process
    # (lldb -b ending on the error would wait 20 s for the running process).
    expected = "error: the process is running (use 'process interrupt' to stop it)\n"
    rc, out, err = t.lldb(["file /bin/sleep", "process launch -- 30", "script import time; time.sleep(0.5)",
                           "script r = lldb.SBCommandReturnObject(); "
                           "lldb.debugger.GetCommandInterpreter().HandleCommand('async runtime', r); "
                           "print('result', repr(r.GetError()), r.Succeeded())",
                           "script lldb.debugger.SetAsync(False)", "process kill"],
                          pre=["script lldb.debugger.SetAsync(True)"])
    t.check_eq((rc, err), (0, ""), "running process: lldb exit code and stderr")
    t.check(f"result {expected!r} False\n" in out, f"running process: no {expected!r} in:\n{out}")
    t.check("exited with status = 9" in out, f"running process: not killed:\n{out}")


def cli_error(args):
    """The CLI's error line for the same input (as lldb prints it)."""
    rc, out, err = t.run([t.CLI] + args)
    t.check_eq(rc, 1, f"asyncdac {' '.join(args)}: exit code")
    prefix = "asyncdac: error: "
    t.check(err.startswith(prefix), f"asyncdac {' '.join(args)}: stderr {err!r}")
    return "error: " + err[len(prefix):]


def test_corrupt(tmp):
    for how in ("badmagic", "hugesize", "badjson", "wildjson"):
        out, live_err = check_error([f"file {TARGET}", "b stop_here", f"run bp {how}", "async runtime"],
                                    one_error_line, f"{how} (live)")
        t.check("contract descriptor" in live_err, f"{how}: the error names the descriptor: {live_err!r}")
        t.check(".NET runtime" not in out, f"{how}: printed a runtime anyway:\n{out}")
        proc, _ = t.start([TARGET, "spin", how])
        core = t.gcore(proc.pid, os.path.join(tmp, f"{how}.core"))
        proc.kill()
        proc.wait()
        out, core_err = check_error([f"target create --core {core}", "async runtime"], one_error_line,
                                    f"{how} (core)")
        t.check_eq(t.normalize(core_err), t.normalize(live_err), f"{how}: core vs live error")
        t.check_eq(core_err, cli_error(["runtime", core]), f"{how}: lldb vs CLI error on the same core")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "no_process"
    tmp = t.tmpdir()
    try:
        {"no_process": test_no_process, "not_dotnet": test_not_dotnet, "bad_option": test_bad_option,
         "running": test_running,
         "corrupt": lambda: test_corrupt(tmp)}[mode]()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.finish()


main()
