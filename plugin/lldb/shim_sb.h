// shim_sb.h - what the two C++ files (shim.cpp, entry.cpp) share: the SB objects behind shim.h's
// opaque handles. C++ only; C sees the handles through shim.h.
#ifndef ADAC_LLDB_SHIM_SB_H
#define ADAC_LLDB_SHIM_SB_H

#include <lldb/API/LLDB.h>

#include <memory>
#include <string>

struct adac_lldb_cmd {
	lldb::SBDebugger debugger;
	lldb::SBCommandReturnObject *result;
	// The command's progress report, if it made one (ends with the command), its title, total
	// and the units reported so far.
	std::unique_ptr<lldb::SBProgress> progress = nullptr;
	std::string progress_title = {};
	uint64_t progress_total = 0, progress_done = 0;
};

struct adac_lldb_process {
	lldb::SBProcess process;  // holds lldb's Process weakly
};

#endif
