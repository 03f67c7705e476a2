/* fake_coreclr.c - a stand-in libcoreclr.so that exports a DotNetRuntimeContractDescriptor
 * describing its own structs, so descriptor discovery is tested without .NET.
 *
 * The descriptor mirrors the real runtime's in-memory shape (contract-descriptor.md): magic
 * "DNCCDAC\0", flags (bit 1 clear: 64-bit), JSON size, JSON pointer, pointer_data count and
 * pointer. Its JSON uses every global shape and one sub-descriptor ("GC"). */
#include <stdint.h>
#include <string.h>

#include "fake_coreclr.h"

struct contract_descriptor {
	uint64_t magic;
	uint32_t flags;
	uint32_t descriptor_size;
	const char *descriptor;
	uint32_t pointer_data_count;
	uint32_t pad0;
	const void *const *pointer_data;
};

struct fake_object g_fake_object = {0};
static struct fake_object *g_pFakeObject = &g_fake_object;

static const char gc_json[] =
	"{\"version\":2,\"baseline\":\"empty\","
	"\"types\":{\"GCHeap\":{\"!\":16,\"Generations\":0}},"
	"\"globals\":{\"TotalGenerationCount\":\"0x5\",\"GCIdentifiers\":[\"workstation, regions,\",\"string\"]},"
	"\"contracts\":{\"GC\":\"c1\"}}";

static const void *const gc_pointers[] = {0};

static struct contract_descriptor gc_descriptor = {
	0x0043414443434e44ull, 0x1, sizeof gc_json, gc_json, 1, 0, gc_pointers,
};
static struct contract_descriptor *g_gc_descriptor = &gc_descriptor;

static const char main_json[] =
	"{\"version\":2,\"baseline\":\"empty\","
	"\"types\":{"
	"\"Object\":{\"!\":8,\"m_pMethTab\":[0,\"pointer\"]},"
	"\"FakeObject\":{\"!\":24,\"Next\":8,\"State\":16,\"Flags\":20}"
	"},"
	"\"globals\":{"
	"\"RuntimeProductVersionString\":[\"0.0.1-synthetic\",\"string\"],"
	"\"Architecture\":[\"x64\",\"string\"],"
	"\"MethodDescAlignment\":[\"0x8\",\"uint64\"],"
	"\"ObjectToMethodTableUnmask\":7,"
	"\"NegativeValue\":\"-3\","
	"\"FakeObjectPointer\":[[1],\"pointer\"],"
	"\"FakeObjectAddress\":[2]"
	"},"
	"\"subDescriptors\":{\"GC\":[[3],\"pointer\"]},"
	"\"contracts\":{\"Object\":\"c1\",\"RuntimeTypeSystem\":\"c1\",\"LegacyInteger\":2}}";

static const void *const main_pointers[] = {0, &g_pFakeObject, &g_fake_object, &g_gc_descriptor};

__attribute__((visibility("default"))) struct contract_descriptor DotNetRuntimeContractDescriptor = {
	0x0043414443434e44ull, 0x1, sizeof main_json, main_json, 4, 0, main_pointers,
};

/* Damages the descriptor in place so a test can check how readers report it. */
void fake_coreclr_corrupt(const char *how)
{
	static char bad_json[] = "{\"version\":2,\"types\":{\"Object\":{\"!\":8,}}}";
	if (strcmp(how, "badmagic") == 0)
		DotNetRuntimeContractDescriptor.magic = 0x4343414443434e44ull;
	else if (strcmp(how, "hugesize") == 0)
		DotNetRuntimeContractDescriptor.descriptor_size = 0x7fffffffu;
	else if (strcmp(how, "badjson") == 0) {
		DotNetRuntimeContractDescriptor.descriptor = bad_json;
		DotNetRuntimeContractDescriptor.descriptor_size = sizeof bad_json;
	} else if (strcmp(how, "wildjson") == 0)
		DotNetRuntimeContractDescriptor.descriptor = (const char *)(uintptr_t)0x10;
}
