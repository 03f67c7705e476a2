/* check.h - the unit tests' only harness: CHECK, CHECK_EQ_*, CHECK_ERR, printing file and line. */
#ifndef ADAC_CHECK_H
#define ADAC_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

static int check_failures;

#define CHECK(cond)                                                              \
	do {                                                                         \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                                    \
		}                                                                        \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                        \
	do {                                                                                          \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                          \
		if (a_ != b_) {                                                                           \
			fprintf(stderr, "%s:%d: %s == 0x%" PRIx64 ", want 0x%" PRIx64 "\n", __FILE__, __LINE__, #a, \
			        a_, b_);                                                                      \
			check_failures++;                                                                     \
		}                                                                                         \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                            \
	do {                                                                                              \
		const char *a_ = (a), *b_ = (b);                                                              \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                      \
			fprintf(stderr, "%s:%d: %s == \"%s\", want \"%s\"\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", \
			        b_ ? b_ : "(null)");                                                              \
			check_failures++;                                                                         \
		}                                                                                             \
	} while (0)

/* The call failed with `code` and a message containing `substr`. */
#define CHECK_ERR(rc, errp, want_code, substr)                                                            \
	do {                                                                                                  \
		if ((rc) == 0 || (errp)->code != (want_code) || !strstr((errp)->msg, (substr))) {                  \
			fprintf(stderr, "%s:%d: want error %s containing \"%s\", got rc=%d %s \"%s\"\n", __FILE__, __LINE__, \
			        #want_code, substr, (int)(rc), adac_errstr((errp)->code), (errp)->msg);              \
			check_failures++;                                                                             \
		}                                                                                                 \
	} while (0)

static inline int check_report(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

#endif
