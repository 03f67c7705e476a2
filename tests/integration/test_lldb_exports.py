"""The plugin exports exactly one symbol, the entry point lldb looks up after `plugin load`:
lldb::PluginInitialize(lldb::SBDebugger). dac/ (a static library) and the shim stay hidden."""
import adactest as t

rc, out, err = t.run(["nm", "-D", "--defined-only", t.PLUGIN])
t.check_eq((rc, err), (0, ""), "nm: exit code and stderr")
symbols = [line.split()[-1] for line in out.splitlines() if line.strip()]
t.check_eq(symbols, ["_ZN4lldb16PluginInitializeENS_10SBDebuggerE"], "dynamic symbols defined by the plugin")

rc, out, err = t.lldb(["plugin load " + t.PLUGIN], plugin=False)
t.check_eq((rc, err), (0, ""), "plugin load: exit code and stderr")
t.finish()
