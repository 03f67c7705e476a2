// entry.cpp - PluginInitialize (the plugin's one exported LLDB symbol): wiring only. Refuses a foreign
// LLDB before any SB call; registers every entry of the shared command table, `threads` and the `bt`
// override under `_async`, each SB command object calling its C function (commands.c, or
// probe.c in the test build); then starts the Python adapter (asyncdac_lldb.py, next to the
// plugin), which puts asyncdac's frames and threads into LLDB itself and adds `async <command>` and
// `bt` as commands LLDB completes, running those of `_async`. Without the adapter the SB commands
// are `async <command>` and `bt` themselves.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>

#include "adapter.h"
#include "commands.h"
#include "help.h"
#include "host_check.h"
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

// A command holds the selected target's API lock, then the plugin's (adapter.h): asyncdac's frame
// provider may run on another thread meanwhile (LLDB's event thread printing a stop), and it
// touches the plugin's state only under the same two locks.
class Serialized {
public:
	explicit Serialized(lldb::SBDebugger &debugger) : api_(debugger.GetSelectedTarget().GetAPIMutex())
	{
		api_.lock();
		adac_lldb_lock();
	}
	~Serialized()
	{
		adac_lldb_unlock();
		api_.unlock();
	}
	Serialized(const Serialized &) = delete;
	Serialized &operator=(const Serialized &) = delete;

private:
	lldb::SBMutex api_;
};

// A command that ended puts the output it holds into its result (adac_lldb_cmd_write), and one
// that worked says so: SB API callers (HandleCommand) read the status, and a plugin command's
// result otherwise stays "started". Forwarded commands keep the status they set.
bool finish(adac_lldb_cmd &cmd, bool ok)
{
	adac_lldb_cmd_flush(&cmd);
	if (ok && !cmd.result->Succeeded())
		cmd.result->SetStatus(lldb::eReturnStatusSuccessFinishResult);
	return ok;
}

// `async <name> ...`: one instance per entry of the shared command table.
class AsyncCommand : public lldb::SBCommandPluginInterface {
public:
	explicit AsyncCommand(const char *name) : name_(name) {}
	bool DoExecute(lldb::SBDebugger debugger, char **args, lldb::SBCommandReturnObject &result) override
	{
		Serialized lock(debugger);
		adac_lldb_cmd cmd{debugger, &result};
		return finish(cmd, adac_lldb_async(&cmd, name_, args) == 0);
	}

private:
	const char *name_;
};

// Before a command that shows frames: the symbols of this stop (symbols_lldb.c), under the same
// locks as a command. Returns false: the command itself runs next.
bool refresh_symbols(void *baton, const char **)
{
	lldb::SBDebugger debugger = *static_cast<lldb::SBDebugger *>(baton);
	Serialized lock(debugger);
	lldb::SBCommandReturnObject ignored;
	adac_lldb_cmd cmd{debugger, &ignored};
	adac_lldb_symbols_refresh(&cmd);
	adac_lldb_cmd_flush(&cmd);
	return false;
}

// A command of its own: `async threads`, `bt` (commands.c), `async symbols` (symbols_lldb.c),
// `async-probe` (probe.c).
class Command : public lldb::SBCommandPluginInterface {
public:
	using Fn = int (*)(adac_lldb_cmd *cmd, char **args);
	explicit Command(Fn fn) : fn_(fn) {}
	bool DoExecute(lldb::SBDebugger debugger, char **args, lldb::SBCommandReturnObject &result) override
	{
		Serialized lock(debugger);
		adac_lldb_cmd cmd{debugger, &result};
		return finish(cmd, fn_(&cmd, args) == 0);
	}

private:
	Fn fn_;
};

void add_async_command(lldb::SBCommand &async, const adac_command_info *c)
{
	std::string syntax = std::string("async ") + c->name + (c->syntax[0] ? " " : "") + c->syntax;
	lldb::SBCommandPluginInterface *impl =
		std::string(c->name) == "symbols" ? static_cast<lldb::SBCommandPluginInterface *>(new Command(adac_lldb_symbols))
		                                  : new AsyncCommand(c->name);
	lldb::SBCommand sub = async.AddCommand(c->name, impl, c->summary, syntax.c_str());
	if (c->details[0]) {
		char *help_long = adac_lldb_help_long(c->details);
		if (help_long)
			sub.SetHelpLong(help_long);
		free(help_long);
	}
}

// "path" quoted for LLDB's command line, 'path' for a Python string literal.
std::string quoted(const std::string &s, char q)
{
	std::string out(1, q);
	for (char c : s) {
		if (c == q || c == '\\')
			out += '\\';
		out += c;
	}
	return out + q;
}

bool run(lldb::SBDebugger &debugger, const std::string &line, std::string *why)
{
	lldb::SBCommandReturnObject result;
	debugger.GetCommandInterpreter().HandleCommand(line.c_str(), result, false);
	if (result.Succeeded())
		return true;
	if (why)
		*why = result.GetError() ? result.GetError() : "failed";
	while (why && !why->empty() && (why->back() == '\n' || why->back() == ' '))
		why->pop_back();
	return false;
}

std::string setting(lldb::SBDebugger &debugger, const char *name)
{
	char buf[4096] = "";
	debugger.GetSetting(name).GetStringValue(buf, sizeof buf);
	return buf;
}

// The Python adapter: imported from the plugin's directory, given the plugin's path (it reaches
// the C side through ctypes), and made LLDB's OS plugin for every process (the hook that registers
// the frame provider on each new target, live or core, before any frame is built). Without it the
// plugin still works: `async ...` and `bt async` print, LLDB's own frames stay as they are.
bool start_adapter(lldb::SBDebugger &debugger, const std::string &plugin)
{
	std::string dir = plugin.substr(0, plugin.find_last_of('/') + 1);
	std::string py = dir + "asyncdac_lldb.py", why;
	struct stat st;
	if (stat(py.c_str(), &st) != 0) {
		std::fprintf(stderr, "warning: asyncdac: %s not found: LLDB's frames and threads stay its own "
		             "(async commands and 'bt async' work)\n", py.c_str());
		return false;
	}
	if (!run(debugger, "command script import " + quoted(py, '"'), &why) ||
	    !run(debugger, "script asyncdac_lldb.start(lldb.debugger, " + quoted(plugin, '\'') + ")", &why)) {
		std::fprintf(stderr, "warning: asyncdac: the Python adapter did not start (%s): LLDB's frames and "
		             "threads stay its own (async commands and 'bt async' work)\n", why.c_str());
		return false;
	}
	// The commands as LLDB parsed commands (they complete their options), running those of _async.
	bool commands = run(debugger, "script asyncdac_lldb.add_commands(lldb.debugger)", &why);
	if (!commands)
		std::fprintf(stderr, "warning: asyncdac: no completion for the async commands (%s)\n", why.c_str());
	std::string current = setting(debugger, "target.process.python-os-plugin-path");
	if (!current.empty() && current != py) {
		std::fprintf(stderr, "warning: asyncdac: target.process.python-os-plugin-path is %s: targets created "
		             "from now on get asyncdac's frames only after an asyncdac command, and 'async threads' "
		             "is not available\n", current.c_str());
		return commands;
	}
	// The OS plugin says it does not report all threads (the process's own stay): LLDB's
	// experimental.os-plugin-reports-all-threads setting is left as the user has it.
	run(debugger, "settings set target.process.python-os-plugin-path " + quoted(py, '"'), nullptr);
	return commands;
}

}  // namespace

// ---- PluginInitialize: wiring only ----

// The one exported LLDB symbol (the rest is hidden, see exports.map).
namespace lldb {
__attribute__((visibility("default"))) bool PluginInitialize(lldb::SBDebugger debugger);
}

bool lldb::PluginInitialize(lldb::SBDebugger debugger)
{
	// Which liblldb our SB calls go to, before making one.
	Dl_info lib{}, self{};
	if (dladdr(reinterpret_cast<void *>(&lldb::SBDebugger::Initialize), &lib) && lib.dli_fname) {
		char why[512];
		if (adac_lldb_host_check(lib.dli_fname, why, sizeof why)) {
			std::fprintf(stderr, "error: %s\n", why);
			return false;
		}
	}
	lldb::SBCommandInterpreter ci = debugger.GetCommandInterpreter();
	lldb::SBCommand async = ci.AddMultiwordCommand("async", adac_lldb_async_help);
	// The commands themselves are under _async: the adapter's `async <command>` and `bt` (LLDB parsed
	// commands, which LLDB asks for completions) run them; without the adapter they are `async
	// <command>` and `bt` themselves (below).
	lldb::SBCommand impl = ci.AddMultiwordCommand("_async", adac_lldb_impl_help);
	for (const adac_command_info *c = adac_commands(); c->name; c++)
		add_async_command(impl, c);
	impl.AddCommand("_bt", new Command(adac_lldb_bt), adac_lldb_bt_help, adac_lldb_bt_syntax);
	impl.AddCommand("threads", new Command(adac_lldb_threads), adac_lldb_threads_help, adac_lldb_threads_syntax);
	// `bt` takes precedence over LLDB's `bt` alias (user commands win), see commands.c. Its long
	// help is `async bt`'s; the alias goes (forms other than `bt async` call `_regexp-bt` itself),
	// so that `help bt` describes this bt instead of calling it an abbreviation of `_regexp-bt`.
	lldb::SBCommand bt = ci.AddCommand("bt", new Command(adac_lldb_bt), adac_lldb_bt_help, adac_lldb_bt_syntax, nullptr);
	const adac_command_info *bt_info = adac_command_find("bt");
	if (bt.IsValid() && bt_info && bt_info->details[0]) {
		char *help_long = adac_lldb_help_long(bt_info->details);
		if (help_long)
			bt.SetHelpLong(help_long);
		free(help_long);
	}
	run(debugger, "command unalias bt", nullptr);
	adac_lldb_symbols_init();
	adac_lldb_add_summaries(debugger);
	lldb::SBDebugger *baton = new lldb::SBDebugger(debugger);  // lives as long as the commands
	for (const char *const *name = adac_lldb_symbols_watched; *name; name++)
		ci.SetCommandOverrideCallback(*name, refresh_symbols, baton);
#ifdef ADAC_LLDB_PROBE
	ci.AddCommand("async-probe", new Command(adac_lldb_probe), "Drive the LLDB data target (test build only)");
#endif
	bool fronts = false;
	if (dladdr(reinterpret_cast<void *>(&lldb::PluginInitialize), &self) && self.dli_fname) {
		char *real = realpath(self.dli_fname, nullptr);
		fronts = start_adapter(debugger, real ? real : self.dli_fname);
		free(real);
	}
	if (!fronts) {
		for (const adac_command_info *c = adac_commands(); c->name; c++)
			add_async_command(async, c);
		async.AddCommand("threads", new Command(adac_lldb_threads), adac_lldb_threads_help, adac_lldb_threads_syntax);
	}
	return true;
}
