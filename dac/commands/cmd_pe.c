/* cmd_pe.c - `pe <exception|task>`: an exception, or the exceptions of a faulted task (like SOS pe). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/exception_view.h"

const struct adac_command_info adac_cmd_pe_info = {
	.name = "pe",
	.summary = "Show an exception, or the exceptions a faulted task holds: type, message, stack trace, inner "
	           "exceptions",
	.syntax = "<exception or task address>",
	.details =
		"Prints, as SOS pe does, the exception's object, type, message, inner exception,\n"
		"the stack trace the runtime recorded when it was thrown (decoded from\n"
		"_stackTrace: module`method + offset at file:line), the stack trace string when\n"
		"one is stored, and the HResult; then each inner exception the same way. Given a\n"
		"task (any task address `ps` or `bt` prints), prints its status and every\n"
		"exception it holds (a faulted task's, from\n"
		"m_contingentProperties.m_exceptionsHolder). A thread's last thrown exception is\n"
		"on its `bt` line when it crashed.\n",
};

int adac_cmd_pe(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                struct adac_error *err)
{
	(void)fe;
	uint64_t obj = 0;
	if (adac_opt_only_address("pe", "<exception or task address>", "an exception or task address", argc, argv, &obj, err))
		return -1;
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = adac_exception_print(rt, obj, out, err);
	adac_runtime_release(rt);
	return rc;
}
