// shim_sb.h - what the two C++ files (shim.cpp, entry.cpp) share: the SB objects behind shim.h's
// opaque handles. C++ only; C sees the handles through shim.h.
#ifndef ADAC_LLDB_SHIM_SB_H
#define ADAC_LLDB_SHIM_SB_H

#include <lldb/API/LLDB.h>

struct adac_lldb_cmd {
	lldb::SBDebugger debugger;
	lldb::SBCommandReturnObject *result;
};

struct adac_lldb_process {
	lldb::SBProcess process;  // holds lldb's Process weakly
};

#endif
