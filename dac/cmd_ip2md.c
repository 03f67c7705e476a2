/* cmd_ip2md.c - `ip2md <address>`: the method whose code contains an address (like SOS ip2md). */
#include "command.h"

const struct adac_command_info adac_cmd_ip2md_info = {
	.name = "ip2md",
	.summary = "Show the managed method whose code contains an address",
	.syntax = "<address> [--json]",
	.details = "",
};

int adac_cmd_ip2md(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err)
{
	(void)t, (void)fe, (void)argc, (void)argv, (void)out;
	return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "'ip2md' is not implemented yet");
}
