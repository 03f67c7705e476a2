/* frame_view.c - `frame variable`'s text and JSON. */
#include "view/frame_view.h"

#include <jansson.h>

#include "base/json.h"
#include "base/output.h"
#include "view/chain_view.h"
#include "view/locals_view.h"

static int collect_failed(const struct adac_error *e, size_t index, struct adac_error *err)
{
	adac_error_copy(err, e);
	adac_error_wrap(err, "async frame #%llu: ", (unsigned long long)index);
	return -1;
}

int adac_frame_variables_print(struct adac_runtime *rt, const struct adac_async_frame *f, size_t index,
                               const char *name, const struct adac_value_opts *o, struct adac_out *out,
                               struct adac_error *err)
{
	struct adac_locals l;
	struct adac_error e = {0};
	if (adac_frame_locals_collect(rt, f, &l, &e))
		return collect_failed(&e, index, err);
	if (l.warning)
		adac_print(out, "warning: %s\n", l.warning);
	int rc = adac_locals_print(rt, &l, name, "", o, out, err);
	if (rc && name)
		adac_error_wrap(err, "async frame #%llu: ", (unsigned long long)index);
	adac_locals_free(&l);
	return rc;
}

int adac_frame_variables_print_json(struct adac_runtime *rt, const struct adac_async_frame *f, size_t index,
                                    const char *name, const struct adac_value_opts *o, struct adac_out *out,
                                    struct adac_error *err)
{
	struct adac_locals l;
	struct adac_error e = {0};
	if (adac_frame_locals_collect(rt, f, &l, &e)) {
		if (e.code != ADAC_E_NOT_FOUND && e.code != ADAC_E_UNSUPPORTED)
			return collect_failed(&e, index, err);
		json_t *j = json_object();
		json_object_set_new(j, "frame", adac_async_frame_json(f, index));
		json_object_set_new(j, "locals", json_null());
		json_object_set_new(j, "locals_error", adac_json_text(e.msg));
		return adac_json_print_document(out, "frame", j, err);
	}
	int rc = -1;
	json_t *locals = adac_locals_json(rt, &l, name, o, err);
	if (locals) {
		json_t *j = json_object();
		json_object_set_new(j, "frame", adac_async_frame_json(f, index));
		json_object_set_new(j, "state", json_integer(l.state));
		json_object_set_new(j, "il_offset", l.il_offset != UINT32_MAX ? json_integer(l.il_offset) : json_null());
		json_object_set_new(j, "warning", l.warning ? adac_json_text(l.warning) : json_null());
		json_object_set_new(j, "generic_context", l.context ? adac_json_text(l.context) : json_null());
		json_object_set_new(j, "locals", locals);
		rc = adac_json_print_document(out, "frame", j, err);
	}
	adac_locals_free(&l);
	return rc;
}
