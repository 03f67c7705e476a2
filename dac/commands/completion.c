/* completion.c - what completes a command line (a debugger's tab key), from the command table:
 * the options are those each command's details list under "Options:" (the help the user reads,
 * also the man pages), their values and the first argument's words those its `values` names.
 * The same list checks a command line's options before a front end opens the target. */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "commands/command.h"

/* One line of an "Options:" list: "  -s, --long <arg>  Help" or "      --long <arg>  Help". */
struct option_line {
	const char *name;  /* "--long" */
	size_t name_len;
	char short_name;   /* 's' of "-s, --long", or 0 */
	bool takes_value;  /* "<arg>" follows */
	const char *help;  /* the first line of its help */
	size_t help_len;
};

/* Parses the option line at p (its end at eol); false when p is no option line. */
static bool option_line(const char *p, const char *eol, struct option_line *o)
{
	o->short_name = 0;
	if (eol - p > 8 && strncmp(p, "      --", 8) == 0) {
		p += 6;
	} else if (eol - p > 8 && p[0] == ' ' && p[1] == ' ' && p[2] == '-' && p[3] != '-' && p[4] == ',' &&
	           p[5] == ' ' && p[6] == '-' && p[7] == '-') {
		o->short_name = p[3];
		p += 6;
	} else {
		return false;
	}
	o->name = p;
	while (p < eol && *p != ' ')
		p++;
	o->name_len = (size_t)(p - o->name);
	o->takes_value = p + 1 < eol && p[1] == '<';
	if (o->takes_value) {
		while (p < eol && *p != '>')
			p++;
		if (p < eol)
			p++;
	}
	while (p < eol && *p == ' ')
		p++;
	o->help = p;
	o->help_len = (size_t)(eol - p);
	return o->name_len > 2;
}

/* Calls fn for each option the details list under "Options:" (to the first line that is neither
 * an option nor the indented rest of one). */
static void each_option(const char *details, void (*fn)(const struct option_line *o, void *ctx), void *ctx)
{
	const char *p = strstr(details, "\nOptions:\n");
	if (!p && strncmp(details, "Options:\n", 9) == 0)
		p = details - 1;
	if (!p)
		return;
	p += strlen("\nOptions:\n");
	while (*p) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		struct option_line o;
		if (option_line(p, eol, &o))
			fn(&o, ctx);
		else if (strncmp(p, "        ", 8) != 0)
			break;
		p = *eol ? eol + 1 : eol;
	}
}

struct candidates {
	json_t *values, *descriptions;
	const char *prefix;          /* what is being completed */
};

static void add(struct candidates *c, const char *value, size_t len, const char *desc, size_t desc_len)
{
	if (len < strlen(c->prefix) || strncmp(value, c->prefix, strlen(c->prefix)) != 0)
		return;
	json_array_append_new(c->values, json_stringn(value, len));
	json_array_append_new(c->descriptions, json_stringn(desc, desc_len));
}

static void add_option(const struct option_line *o, void *ctx)
{
	add(ctx, o->name, o->name_len, o->help, o->help_len);
}

/* The option arg ("--format" or "-F") names, found in a list by each_option. */
struct option_find {
	const char *arg;
	bool found;
	struct option_line line;
};

static void match_option(const struct option_line *o, void *ctx)
{
	struct option_find *f = ctx;
	bool is_long = strlen(f->arg) == o->name_len && strncmp(o->name, f->arg, o->name_len) == 0;
	bool is_short = o->short_name && f->arg[1] == o->short_name && !f->arg[2];
	if (!f->found && (is_long || is_short)) {
		f->found = true;
		f->line = *o;
	}
}

/* The line of the details' "Options:" list that names arg, NULL when none does. */
static const struct option_line *find_option(const char *details, const char *arg, struct option_find *f)
{
	*f = (struct option_find){.arg = arg};
	if (arg[0] == '-' && arg[1])
		each_option(details, match_option, f);
	return f->found ? &f->line : NULL;
}

/* The values `values` gives key ("--format", or "" for the first argument). */
static void add_values(struct candidates *c, const char *values, const char *key, size_t key_len)
{
	for (const char *p = values; p && *p;) {
		const char *end = strchr(p, ' ');
		if (!end)
			end = p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		if (eq && (size_t)(eq - p) == key_len && strncmp(p, key, key_len) == 0) {
			for (const char *v = eq + 1; v < end;) {
				const char *bar = memchr(v, '|', (size_t)(end - v));
				if (!bar)
					bar = end;
				add(c, v, (size_t)(bar - v), "", 0);
				v = bar < end ? bar + 1 : end;
			}
		}
		p = *end ? end + 1 : end;
	}
}

static int complete(const char *details, const char *values, int n, const char *const *words, char **json,
                    struct adac_error *err);

bool adac_command_option_takes_value(const struct adac_command_info *info, const char *arg)
{
	struct option_find f;
	const struct option_line *o = info ? find_option(info->details, arg, &f) : NULL;
	return o && o->takes_value;
}

int adac_command_check_options(const struct adac_command_info *info, int argc, char **argv, struct adac_error *err)
{
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || !argv[i][1])
			continue;
		struct option_find f;
		const struct option_line *o = find_option(info->details, argv[i], &f);
		if (!o)
			return adac_opt_unknown(info->name, argv[i], err);
		const char *value;
		if (o->takes_value && adac_opt_value(info->name, argc, argv, &i, &value, err))
			return -1;
	}
	return 0;
}

int adac_command_complete(const char *name, int n, const char *const *words, char **json, struct adac_error *err)
{
	const struct adac_command_info *info = adac_command_find(name);
	if (!info)
		return adac_fail(err, ADAC_E_USAGE, 0, "'%s' is not a valid command", name);
	return complete(info->details, info->values, n, words, json, err);
}

int adac_command_complete_values(const char *values, int n, const char *const *words, char **json,
                                 struct adac_error *err)
{
	return complete("", values, n, words, json, err);
}

static int complete(const char *details, const char *values, int n, const char *const *words, char **json,
                    struct adac_error *err)
{
	struct candidates c = {json_array(), json_array(), n > 0 && words[n - 1] ? words[n - 1] : ""};
	if (!c.values || !c.descriptions) {
		json_decref(c.values);
		json_decref(c.descriptions);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	}
	struct option_find f;
	const struct option_line *option = n > 1 && words[n - 2] ? find_option(details, words[n - 2], &f) : NULL;
	if (option && option->takes_value) {
		add_values(&c, values, option->name, option->name_len);
	} else if (c.prefix[0] == '-') {
		each_option(details, add_option, &c);
	} else {
		/* The first argument: only options before it (an option's value counts as an argument). */
		bool first = true;
		for (int i = 0; i < n - 1 && first; i++)
			first = words[i][0] == '-';
		if (first)
			add_values(&c, values, "", 0);
	}
	json_t *doc = json_pack("{s:o, s:o}", "values", c.values, "descriptions", c.descriptions);
	*json = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!*json)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return 0;
}
