/* cmd_dumpmd.c - `dumpmd <MethodDesc>`: what the runtime knows of a method (like SOS dumpmd). */
#include "command.h"

const struct adac_command_info adac_cmd_dumpmd_info = {
	.name = "dumpmd",
	.summary = "Show a MethodDesc: its method, type, module and flags",
	.syntax = "<MethodDesc address> [--json]",
	.details = "",
};

int adac_cmd_dumpmd(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                    struct adac_error *err)
{
	(void)t, (void)fe, (void)argc, (void)argv, (void)out;
	return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "'dumpmd' is not implemented yet");
}
