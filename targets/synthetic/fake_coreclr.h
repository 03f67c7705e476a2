/* fake_coreclr.h - what the synthetic target program sees of its fake runtime. */
#ifndef FAKE_CORECLR_H
#define FAKE_CORECLR_H

#include <stdint.h>

struct fake_object {
	void *method_table;
	struct fake_object *next;
	int32_t state;
	int32_t flags;
};

#define FAKE_EXPORT __attribute__((visibility("default")))
FAKE_EXPORT extern struct fake_object g_fake_object;
FAKE_EXPORT void fake_coreclr_corrupt(const char *how);

#endif
