"""The plugin exports the entry point lldb looks up after `plugin load`,
lldb::PluginInitialize(lldb::SBDebugger), and the two C functions its Python adapter calls through
ctypes (asyncdac_lldb_call, asyncdac_lldb_free). dac/ (a static library) and the shim stay hidden;
the adapter (asyncdac_lldb.py) lies next to the plugin."""
import os

import adactest as t

rc, out, err = t.run(["nm", "-D", "--defined-only", t.PLUGIN])
t.check_eq((rc, err), (0, ""), "nm: exit code and stderr")
symbols = [line.split()[-1] for line in out.splitlines() if line.strip()]
t.check_eq(sorted(symbols), ["_ZN4lldb16PluginInitializeENS_10SBDebuggerE", "asyncdac_lldb_call", "asyncdac_lldb_free"],
           "dynamic symbols defined by the plugin")
t.check(os.path.isfile(os.path.join(os.path.dirname(t.PLUGIN), "asyncdac_lldb.py")), "asyncdac_lldb.py next to the plugin")

rc, out, err = t.lldb(["plugin load " + t.PLUGIN], plugin=False)
t.check_eq((rc, err), (0, ""), "plugin load: exit code and stderr")
t.finish()
