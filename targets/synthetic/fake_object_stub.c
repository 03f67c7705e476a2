/* fake_object_stub.c - the fake runtime's symbols for the build against the descriptor-less
 * libcoreclr.so, which provides none of them. */
#include "fake_coreclr.h"

struct fake_object g_fake_object;
void fake_coreclr_corrupt(const char *how) { (void)how; }
