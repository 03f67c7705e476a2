/* error.h - one error struct for all of dac/: a code, the address involved and a one-line message. */
#ifndef ADAC_ERROR_H
#define ADAC_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Codes and their short descriptions, generated from one table. */
#define ADAC_ERRORS(X)                                              \
	X(OK, "success")                                                \
	X(READ, "memory read failed")                                   \
	X(LIMIT, "limit reached")                                       \
	X(LAYOUT, "runtime layout not understood")                      \
	X(CORRUPT, "corrupt data")                                      \
	X(NO_RUNTIME, "no .NET runtime found")                          \
	X(BAD_ARG, "bad argument")                                      \
	X(USAGE, "usage error")                                         \
	X(IO, "I/O error")                                              \
	X(NOMEM, "out of memory")                                       \
	X(UNSUPPORTED, "not supported")                                 \
	X(NOT_FOUND, "not found")                                       \
	X(INTERRUPTED, "interrupted")

enum adac_errcode {
#define ADAC_X_ENUM(name, text) ADAC_E_##name,
	ADAC_ERRORS(ADAC_X_ENUM)
#undef ADAC_X_ENUM
	ADAC_E_COUNT_
};

#define ADAC_ERROR_MSG_MAX 256

struct adac_error {
	enum adac_errcode code;
	uint64_t addr;                 /* target address involved, 0 if none */
	char msg[ADAC_ERROR_MSG_MAX];  /* one line, no trailing newline */
};

const char *adac_errstr(enum adac_errcode code);

/* Records the failure unless one is already recorded (the first cause wins). err may be NULL. */
void adac_fail_record(struct adac_error *err, enum adac_errcode code, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* adac_fail_record, then -1, so callers can write `return adac_fail(err, ...)`. A macro so that
 * the compiler sees the -1 (an optimizing build then knows such a path returns early); the -1
 * comes from a call so that a statement `adac_fail(...);` is not an unused value. */
static inline int adac_fail_result(void) { return -1; }
#define adac_fail(...) (adac_fail_record(__VA_ARGS__), adac_fail_result())

/* Prepends context to the recorded message: "chain 3: " + msg. No-op if nothing recorded. */
void adac_error_wrap(struct adac_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void adac_error_clear(struct adac_error *err);

/* Records src (a failure kept aside, e.g. while trying alternatives) in err the way adac_fail
 * does: unless err already holds one; err may be NULL. Always returns -1. */
int adac_error_copy(struct adac_error *err, const struct adac_error *src);

/* Appends one message to a "; "-separated list of problems that did not stop a result (a frame's
 * note, the reasons no PDB was found). Nothing is appended once the list is within 4 bytes of full;
 * a message that does not fit is cut. */
void adac_note_add(char *list, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline int adac_failed(const struct adac_error *err) { return err && err->code != ADAC_E_OK; }

#endif
