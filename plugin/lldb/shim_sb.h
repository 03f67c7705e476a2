// shim_sb.h - what the two C++ files (shim.cpp, entry.cpp) share: the SB objects behind shim.h's
// opaque handles. C++ only; C sees the handles through shim.h.
#ifndef ADAC_LLDB_SHIM_SB_H
#define ADAC_LLDB_SHIM_SB_H

#include <lldb/API/LLDB.h>

#include <memory>
#include <string>

// A debugger's progress report, if one was made (ends with this), its title, total and the units
// reported so far.
struct adac_lldb_progress {
	lldb::SBDebugger debugger;
	std::unique_ptr<lldb::SBProgress> report = nullptr;
	std::string title = {};
	uint64_t total = 0, done = 0;
};

struct adac_lldb_cmd {
	lldb::SBDebugger debugger;
	lldb::SBCommandReturnObject *result;
	adac_lldb_progress progress = {debugger};  // the command's (ends with it)
	std::string held = {};   // output not yet in the result (adac_lldb_cmd_write): all of it ...
	bool past_hold = false;  // ... until it passed the size where the result is set up to print
	                         // as it is written, at LLDB's prompt; since, up to a chunk
};

// Puts the output a command holds into its result: when it ends, and before another command
// writes into the same result.
void adac_lldb_cmd_flush(adac_lldb_cmd *cmd);

struct adac_lldb_process {
	lldb::SBProcess process;  // holds lldb's Process weakly
};

#endif
