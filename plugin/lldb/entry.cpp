// entry.cpp - PluginInitialize (the plugin's one exported symbol): wiring only. Registers `async
// <command>` for every entry of the shared command table and the `bt` override; each SB command
// object calls its C function in commands.c (or probe.c in the test build).
#include <cstdlib>
#include <string>

#include "commands.h"
#include "shim_sb.h"
#include "shim_symbols.h"
#include "symbols_lldb.h"
#ifdef ADAC_LLDB_PROBE
#include "probe.h"
#endif

extern "C" {
#include "asyncdac.h"
}

namespace {

// `async <name> ...`: one instance per entry of the shared command table.
// A command that worked says so: SB API callers (HandleCommand) read the status, and a plugin
// command's result otherwise stays "started". Forwarded commands keep the status they set.
bool finish(lldb::SBCommandReturnObject &result, bool ok)
{
	if (ok && !result.Succeeded())
		result.SetStatus(lldb::eReturnStatusSuccessFinishResult);
	return ok;
}

class AsyncCommand : public lldb::SBCommandPluginInterface {
public:
	explicit AsyncCommand(const char *name) : name_(name) {}
	bool DoExecute(lldb::SBDebugger debugger, char **args, lldb::SBCommandReturnObject &result) override
	{
		adac_lldb_cmd cmd{debugger, &result};
		return finish(result, adac_lldb_async(&cmd, name_, args) == 0);
	}

private:
	const char *name_;
};

// `async symbols ...`: the shared command, plus `--auto on|off` (symbols_lldb.c).
class SymbolsCommand : public lldb::SBCommandPluginInterface {
public:
	bool DoExecute(lldb::SBDebugger debugger, char **args, lldb::SBCommandReturnObject &result) override
	{
		adac_lldb_cmd cmd{debugger, &result};
		return finish(result, adac_lldb_symbols(&cmd, args) == 0);
	}
};

// Before a command that shows frames: the symbols of this stop (symbols_lldb.c). Returns false:
// the command itself runs next.
bool refresh_symbols(void *baton, const char **)
{
	lldb::SBCommandReturnObject ignored;
	adac_lldb_cmd cmd{*static_cast<lldb::SBDebugger *>(baton), &ignored};
	adac_lldb_symbols_refresh(&cmd);
	return false;
}

// `bt ...`: takes precedence over LLDB's `bt` alias (user commands win), see commands.c.
class BtCommand : public lldb::SBCommandPluginInterface {
public:
	bool DoExecute(lldb::SBDebugger debugger, char **args, lldb::SBCommandReturnObject &result) override
	{
		adac_lldb_cmd cmd{debugger, &result};
		return finish(result, adac_lldb_bt(&cmd, args) == 0);
	}
};

#ifdef ADAC_LLDB_PROBE
// `async-probe ...`: the test build's backend probe (probe.c).
class ProbeCommand : public lldb::SBCommandPluginInterface {
public:
	bool DoExecute(lldb::SBDebugger debugger, char **args, lldb::SBCommandReturnObject &result) override
	{
		adac_lldb_cmd cmd{debugger, &result};
		return finish(result, adac_lldb_probe(&cmd, args) == 0);
	}
};
#endif

void add_async_command(lldb::SBCommand &async, const adac_command_info *c)
{
	std::string syntax = std::string("async ") + c->name + (c->syntax[0] ? " " : "") + c->syntax;
	lldb::SBCommandPluginInterface *impl =
		std::string(c->name) == "symbols" ? static_cast<lldb::SBCommandPluginInterface *>(new SymbolsCommand)
		                                  : new AsyncCommand(c->name);
	lldb::SBCommand sub = async.AddCommand(c->name, impl, c->summary, syntax.c_str());
	if (c->details[0]) {
		char *help_long = adac_lldb_help_long(c->details);
		if (help_long)
			sub.SetHelpLong(help_long);
		free(help_long);
	}
}

}  // namespace

// ---- PluginInitialize: wiring only ----

// The one exported symbol (everything else is hidden, see exports.map).
namespace lldb {
__attribute__((visibility("default"))) bool PluginInitialize(lldb::SBDebugger debugger);
}

bool lldb::PluginInitialize(lldb::SBDebugger debugger)
{
	lldb::SBCommandInterpreter ci = debugger.GetCommandInterpreter();
	lldb::SBCommand async = ci.AddMultiwordCommand("async", adac_lldb_async_help);
	for (const adac_command_info *c = adac_commands(); c->name; c++)
		add_async_command(async, c);
	ci.AddCommand("bt", new BtCommand, adac_lldb_bt_help, adac_lldb_bt_syntax, nullptr);
	adac_lldb_symbols_init();
	adac_lldb_add_summaries(debugger);
	lldb::SBDebugger *baton = new lldb::SBDebugger(debugger);  // lives as long as the commands
	for (const char *const *name = adac_lldb_symbols_watched; *name; name++)
		ci.SetCommandOverrideCallback(*name, refresh_symbols, baton);
#ifdef ADAC_LLDB_PROBE
	ci.AddCommand("async-probe", new ProbeCommand, "Drive the LLDB data target (test build only)");
#endif
	return true;
}

