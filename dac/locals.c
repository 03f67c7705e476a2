/* locals.c - awaited locals (placeholder until implemented). */
#include "locals.h"

#include <jansson.h>

#include "asyncdac.h"

int adac_frame_locals_print(struct adac_runtime *rt, const struct adac_async_frame *f, const char *name,
                            const char *indent, struct adac_out *out, struct adac_error *err)
{
	(void)rt, (void)f, (void)name, (void)err;
	adac_print(out, "%s(locals are not available yet)\n", indent);
	return 0;
}

json_t *adac_frame_locals_json(struct adac_runtime *rt, const struct adac_async_frame *f, struct adac_error *err)
{
	(void)rt, (void)f;
	adac_fail(err, ADAC_E_UNSUPPORTED, 0, "locals are not available yet");
	return NULL;
}
