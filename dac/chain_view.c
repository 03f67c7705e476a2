/* chain_view.c - resolves a chain's frames and formats them. */
#include "chain_view.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "locals.h"
#include "methoddesc.h"
#include "names.h"
#include "runtime.h"

json_t *adac_json_addr(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return json_string(buf);
}

int adac_chain_view_build(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_chain_view *v,
                          struct adac_error *err)
{
	memset(v, 0, sizeof *v);
	if (adac_chain_walk(rt, head, max_depth, &v->chain, err))
		return -1;
	v->frames = calloc(v->chain.count ? v->chain.count : 1, sizeof *v->frames);
	if (!v->frames) {
		adac_chain_free(&v->chain);
		return adac_fail(err, ADAC_E_NOMEM, head, "out of memory resolving a chain");
	}
	for (size_t i = 0; i < v->chain.count; i++) {
		adac_async_frame_resolve(rt, &v->chain.links[i], &v->frames[i]);
		/* The first infrastructure continuation from the head says what the chain waits on. */
		if (!v->has_awaiting && v->frames[i].infrastructure && i == 0)
			v->has_awaiting = adac_awaiting_of(rt, &v->chain.links[i], &v->awaiting, NULL) == 0;
	}
	return 0;
}

void adac_chain_view_free(struct adac_chain_view *v)
{
	free(v->frames);
	adac_chain_free(&v->chain);
	memset(v, 0, sizeof *v);
}

static bool shown(const struct adac_async_frame *f) { return !f->infrastructure && !f->hidden; }

/* The address shown for a frame: where it will resume. */
static uint64_t frame_ip(const struct adac_async_frame *f)
{
	return f->cont.diagnostic_ip ? f->cont.diagnostic_ip : f->cont.resume;
}

static void print_frame(const struct adac_async_frame *f, size_t index, struct adac_out *out)
{
	adac_print(out, "  async #%zu: 0x%016llx", index, (unsigned long long)frame_ip(f));
	if (f->method) {
		adac_print(out, " %s`%s", f->module ? f->module : "?", f->method);
		if (f->has_code)
			adac_print(out, " + 0x%llx", (unsigned long long)f->offset);
	} else {
		adac_print(out, " <unknown method>");
	}
	if (f->has_source) {
		const char *slash = strrchr(f->file, '/');
		adac_print(out, " at %s:%u", slash ? slash + 1 : f->file, f->line);
	}
	else if (f->has_il)
		adac_print(out, " [IL_%04x]", f->il_offset);
	adac_print(out, " [state %d]\n", f->cont.state);
	if (f->note[0])
		adac_print(out, "      note: %s\n", f->note);
}

size_t adac_chain_view_print(struct adac_runtime *rt, const struct adac_chain_view *v, struct adac_out *out,
                             size_t first_index, size_t limit, unsigned flags)
{
	if (v->has_awaiting) {
		const struct adac_awaiting *a = &v->awaiting;
		adac_print(out, "  awaiting: 0x%016llx %s", (unsigned long long)a->object, a->type ? a->type : "?");
		if (a->has_token)
			adac_print(out, " (token %d)", a->token);
		adac_print(out, "\n");
	}
	size_t printed = 0;
	for (size_t i = 0; i < v->chain.count; i++) {
		if (!shown(&v->frames[i]))
			continue;
		if (limit && printed >= limit) {
			adac_print(out, "  (shown max number of frames (%zu), use -c 0 for all)\n", limit);
			return printed;
		}
		print_frame(&v->frames[i], first_index + printed, out);
		if (flags & ADAC_VIEW_LOCALS) {
			struct adac_error err = {0};
			if (adac_frame_locals_print(rt, &v->frames[i], NULL, "      ", out, &err))
				adac_print(out, "      error: %s\n", err.msg);
		}
		printed++;
	}
	switch (v->chain.end) {
	case ADAC_CHAIN_COMPLETE:
		break;
	case ADAC_CHAIN_TRUNCATED:
		adac_print(out, "  (stopped at the chain depth limit; Continuation 0x%016llx follows)\n",
		           (unsigned long long)v->chain.end_addr);
		break;
	case ADAC_CHAIN_BROKEN:
	case ADAC_CHAIN_CYCLE:
		adac_print(out, "  async #%zu: error: %s\n", first_index + printed, v->chain.end_err.msg);
		break;
	}
	return printed;
}

static const char *end_name(enum adac_chain_end e)
{
	switch (e) {
	case ADAC_CHAIN_COMPLETE: return "complete";
	case ADAC_CHAIN_TRUNCATED: return "truncated";
	case ADAC_CHAIN_BROKEN: return "broken";
	case ADAC_CHAIN_CYCLE: return "cycle";
	}
	return "?";
}

json_t *adac_chain_view_json(struct adac_runtime *rt, const struct adac_chain_view *v, size_t limit, unsigned flags)
{
	json_t *c = json_object();
	json_object_set_new(c, "head", adac_json_addr(v->chain.count ? v->chain.links[0].addr : v->chain.end_addr));
	json_object_set_new(c, "task", v->task ? adac_json_addr(v->task) : json_null());
	if (v->has_awaiting) {
		json_t *a = json_object();
		json_object_set_new(a, "object", adac_json_addr(v->awaiting.object));
		json_object_set_new(a, "type", v->awaiting.type ? json_string(v->awaiting.type) : json_null());
		json_object_set_new(a, "field", json_string(v->awaiting.via));
		if (v->awaiting.has_token)
			json_object_set_new(a, "token", json_integer(v->awaiting.token));
		json_object_set_new(c, "awaiting", a);
	} else {
		json_object_set_new(c, "awaiting", json_null());
	}
	json_t *ips = json_array(), *frames = json_array();
	size_t printed = 0;
	for (size_t i = 0; i < v->chain.count; i++) {
		const struct adac_async_frame *f = &v->frames[i];
		if (!shown(f) || (limit && printed >= limit))
			continue;
		json_array_append_new(ips, adac_json_addr(frame_ip(f)));
		json_t *j = json_object();
		json_object_set_new(j, "index", json_integer((json_int_t)printed));
		json_object_set_new(j, "continuation", adac_json_addr(f->cont.addr));
		json_object_set_new(j, "method_table", adac_json_addr(f->cont.mt));
		json_object_set_new(j, "ip", adac_json_addr(frame_ip(f)));
		json_object_set_new(j, "diagnostic_ip", f->cont.diagnostic_ip ? adac_json_addr(f->cont.diagnostic_ip) : json_null());
		json_object_set_new(j, "resume", f->cont.resume ? adac_json_addr(f->cont.resume) : json_null());
		json_object_set_new(j, "state", json_integer(f->cont.state));
		json_object_set_new(j, "method_desc", f->method_desc ? adac_json_addr(f->method_desc) : json_null());
		json_object_set_new(j, "method", f->method ? json_string(f->method) : json_null());
		json_object_set_new(j, "module", f->module ? json_string(f->module) : json_null());
		json_object_set_new(j, "token", f->token ? json_integer(f->token) : json_null());
		json_object_set_new(j, "code_start", f->has_code ? adac_json_addr(f->code_start) : json_null());
		json_object_set_new(j, "offset", f->has_code ? json_integer((json_int_t)f->offset) : json_null());
		json_object_set_new(j, "il_offset", f->has_il ? json_integer(f->il_offset) : json_null());
		json_object_set_new(j, "file", f->has_source ? json_string(f->file) : json_null());
		json_object_set_new(j, "line", f->has_source ? json_integer(f->line) : json_null());
		json_object_set_new(j, "resume_method_desc", f->resume_md ? adac_json_addr(f->resume_md) : json_null());
		json_object_set_new(j, "note", f->note[0] ? json_string(f->note) : json_null());
		if (flags & ADAC_VIEW_LOCALS) {
			struct adac_error err = {0};
			json_t *locals = adac_frame_locals_json(rt, f, &err);
			json_object_set_new(j, "locals", locals ? locals : json_null());
			if (!locals)
				json_object_set_new(j, "locals_error", json_string(err.msg));
		}
		json_array_append_new(frames, j);
		printed++;
	}
	json_object_set_new(c, "ips", ips);
	json_object_set_new(c, "frames", frames);
	json_object_set_new(c, "end", json_string(end_name(v->chain.end)));
	json_object_set_new(c, "error", v->chain.end_err.code ? json_string(v->chain.end_err.msg) : json_null());
	return c;
}
