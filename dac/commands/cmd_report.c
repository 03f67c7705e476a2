/* cmd_report.c - `report`: one page for an incident ticket (view/report_view.h). */
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/report_view.h"

const struct adac_command_info adac_cmd_report_info = {
	.name = "report",
	.summary = "One page for an incident ticket: findings first (deadlocks, tasks whose awaiters did not resume, "
	           "crashes), then the runtime, crashed threads, async stacks grouped and top frames",
	.syntax = "",
	.details =
		"Sections, each what another command shows of the same process:\n"
		"  == Findings        await cycles (deadlocks), completed tasks whose awaiting\n"
		"                     frames have not resumed (a starved thread pool?)\n"
		"  == Runtime         as `runtime`\n"
		"  == Threads that stopped for a reason\n"
		"                     a crash core's signalled thread, as `bt` shows it (stop\n"
		"                     reason, the exception the runtime recorded, frames)\n"
		"  == Async stacks, grouped by what they await   as `ps --coalesce`\n"
		"  == Top frames      as `ps --stats`\n",
};

int adac_cmd_report(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err)
{
	(void)fe;
	if (argc > 1)
		return adac_opt_unknown("report", argv[1], err);
	struct adac_runtime *rt = adac_runtime_open(t, err);
	if (!rt)
		return -1;
	int rc = adac_report_print(rt, out, err);
	adac_runtime_close(rt);
	return rc;
}
