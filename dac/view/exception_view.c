/* exception_view.c - see exception_view.h. */
#include "view/exception_view.h"

#include <jansson.h>

#include "base/json.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/names.h"
#include "types/vtype.h"
#include "view/value_format.h"

/* The message: Exception._message, a string reference (0: none). */
static int message_of(struct adac_runtime *rt, uint64_t obj, uint64_t *msg, struct adac_error *err)
{
	uint32_t off;
	if (adac_desc_field(rt->desc, "Exception", "_message", &off, err) || adac_read_ptr(rt->t, obj + off, msg, err))
		return -1;
	return 0;
}

/* The message as the value formatter prints a string ("text" with C escapes). */
static int format_message(struct adac_runtime *rt, uint64_t msg, struct adac_sig_text *text, json_t **json,
                          struct adac_error *err)
{
	struct adac_vtype st = {.kind = ADAC_VK_REF, .elem = ADAC_ELEM_STRING, .name = (char *)"string"};
	struct adac_value_opts vo;
	adac_value_opts_default(&vo);
	vo.max_string = ADAC_MAX_STRING_CHARS;
	return adac_value_format_ref(rt, &st, msg, &vo, text, json, err);
}

int adac_exception_summary(struct adac_runtime *rt, uint64_t obj, struct adac_sig_text *text, struct adac_error *err)
{
	struct adac_error e = {0};
	uint64_t mt = 0, msg = 0;
	const char *type = NULL;
	if (adac_sig_text_putf(text, err, "0x%016llx ", (unsigned long long)obj))
		return -1;
	if (adac_object_mt(rt, obj, &mt, &e) || !(type = adac_type_name(rt, mt, 0, &e)))
		return adac_sig_text_putf(text, err, "<error: %s>", e.msg);
	if (adac_sig_text_put(text, type, err))
		return -1;
	if (message_of(rt, obj, &msg, &e))
		return adac_sig_text_putf(text, err, ": <error: %s>", e.msg);
	if (!msg)
		return 0;
	return adac_sig_text_put(text, ": ", err) || format_message(rt, msg, text, NULL, err) ? -1 : 0;
}

json_t *adac_exception_summary_json(struct adac_runtime *rt, uint64_t obj)
{
	json_t *j = json_object();
	json_object_set_new(j, "address", adac_json_addr(obj));
	struct adac_error e = {0};
	uint64_t mt = 0, msg = 0;
	const char *type = NULL;
	if (adac_object_mt(rt, obj, &mt, &e) || !(type = adac_type_name(rt, mt, 0, &e)) || message_of(rt, obj, &msg, &e)) {
		json_object_set_new(j, "error", json_string(e.msg));
		return j;
	}
	json_object_set_new(j, "type", json_string(type));
	json_t *mj = NULL;
	struct adac_sig_text ignored = {0};
	if (msg && format_message(rt, msg, &ignored, &mj, &e) == 0 && mj)
		json_object_set_new(j, "message", mj);
	else
		json_object_set_new(j, "message", json_null());
	adac_sig_text_free(&ignored);
	return j;
}
