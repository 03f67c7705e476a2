"""lldb.foreign: the plugin loaded into an LLDB it was not built for refuses with one clear line
and LLDB goes on (issue 11).

A plugin linked against liblldb-22 loaded by lldb-16 pulls a second, uninitialised liblldb into the
process, and its first SB call crashes LLDB. lldb-16 cannot be installed next to lldb-22 (the
packages conflict), so the test makes lldb-22 look like a foreign host: a stub library named
liblldb-16.so.1 preloaded into it is the "other" liblldb. PluginInitialize must see it before any SB
call, say so on stderr in one line, and return false (LLDB then says it refused the plug-in).
"""
import os
import subprocess

import adactest as t


def main():
    tmp = t.tmpdir()
    src = os.path.join(tmp, "stub.c")
    with open(src, "w") as f:
        f.write("int asyncdac_stub_liblldb;\n")
    stub = os.path.join(tmp, "liblldb-16.so.1")
    rc, out, err = t.run(["cc", "-shared", "-fPIC", "-Wl,-soname,liblldb-16.so.1", "-o", stub, src])
    t.check_eq((rc, err), (0, ""), "cc: the stub liblldb-16.so.1")
    env = {"LD_PRELOAD": stub}
    refusal = ("error: asyncdac: this plugin is built for the LLDB of liblldb-22.so.1, but this LLDB runs "
               "liblldb-16.so.1: load it into the LLDB it was built for\n"
               "error: plug-in refused to load (lldb::PluginInitialize(lldb::SBDebugger) returned false)\n")

    rc, out, err = t.run([t.LLDB, "-b", "-x", "-o", f"plugin load {t.PLUGIN}"], env=env)
    t.check_eq((rc, err), (1, refusal), "lldb -b: exit code and stderr")

    # Interactive: LLDB goes on after the refusal, without the plugin's commands.
    p = subprocess.run([t.LLDB, "-x"], input=f"plugin load {t.PLUGIN}\nscript print('still here')\nhelp async\nquit\n",
                       capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    t.check_eq(p.returncode, 0, "interactive lldb: exit code")
    t.check("still here" in p.stdout, f"LLDB goes on after the refusal:\n{p.stdout}")
    t.check("error: 'async' is not a known command." in p.stderr,
            f"no async command was registered:\n{p.stderr}")
    t.check_eq(p.stderr.count("error: asyncdac: "), 1, "one line from the plugin")

    # The same LLDB without the stub loads it.
    rc, out, err = t.run([t.LLDB, "-b", "-x", "-o", f"plugin load {t.PLUGIN}", "-o", "help async"])
    t.check_eq((rc, err), (0, ""), "lldb-22 without the stub: exit code and stderr")
    t.finish()


main()
