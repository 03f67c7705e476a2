/* test_nibble.c - the nibble stream reader: the runtime's documented encodings, end of data,
 * over-long values. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "code/nibble.h"

static struct adac_nibble_reader reader(const uint8_t *b, size_t n)
{
	struct adac_nibble_reader r;
	adac_nibble_init(&r, adac_cursor_make(b, n));
	return r;
}

/* The examples of nibblestream.h / DebugInfo.md ("X" = the unused high nibble, here 0). Those tables
 * give 64 as "F9 X0" and 65 as "F9 X1", which contradicts their own rule (and the writer):
 * 64 = 001 000 000 is written as the nibbles 9 8 0, i.e. the bytes 89 X0. */
static void test_examples(void)
{
	static const struct {
		uint32_t value;
		uint8_t bytes[2];
		size_t n;
	} ex[] = {
		{0, {0x00}, 1}, {1, {0x01}, 1}, {7, {0x07}, 1}, {8, {0x09}, 1}, {9, {0x19}, 1}, {63, {0x7f}, 1},
		{64, {0x89, 0x00}, 2}, {65, {0x89, 0x01}, 2}, {511, {0xff, 0x07}, 2}, {512, {0x89, 0x08}, 2},
		{513, {0x89, 0x18}, 2},
	};
	for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
		struct adac_nibble_reader r = reader(ex[i].bytes, ex[i].n);
		uint32_t v = 0;
		CHECK(adac_nibble_u32(&r, &v) == 0);
		CHECK_EQ_U64(v, ex[i].value);
		CHECK_EQ_U64(adac_nibble_byte_index(&r), ex[i].n);
	}
}

static void test_sequence(void)
{
	/* 3, 64, 5 as nibbles 3 | 9 8 0 | 5 -> bytes 0x93 0x08 0x50 ... low nibble first. */
	const uint8_t b[] = {0x93, 0x08, 0x05};
	struct adac_nibble_reader r = reader(b, sizeof b);
	uint32_t v;
	CHECK(adac_nibble_u32(&r, &v) == 0 && v == 3);
	CHECK_EQ_U64(adac_nibble_byte_index(&r), 1); /* (1 + 1) / 2 */
	CHECK(adac_nibble_u32(&r, &v) == 0 && v == 64);
	CHECK_EQ_U64(adac_nibble_byte_index(&r), 2);
	CHECK(adac_nibble_u32(&r, &v) == 0 && v == 5);
	CHECK(adac_nibble_u32(&r, &v) == 0 && v == 0); /* the padding nibble reads as 0 */
	CHECK(adac_nibble_u32(&r, &v) != 0);
	CHECK(r.status == ADAC_NIBBLE_END);
	CHECK_EQ_STR(adac_nibble_why(&r), "truncated");
}

static void test_signed(void)
{
	/* I32: (|x| << 1) | sign. 0 -> 0, 1 -> 2, -1 -> 3, -16 -> 33 (0x21: nibbles 0xc, 0x1). */
	const uint8_t b[] = {0x20, 0xc3, 0x01};
	struct adac_nibble_reader r = reader(b, sizeof b);
	int32_t x;
	CHECK(adac_nibble_i32(&r, &x) == 0 && x == 0);
	CHECK(adac_nibble_i32(&r, &x) == 0 && x == 1);
	CHECK(adac_nibble_i32(&r, &x) == 0 && x == -1);
	CHECK(adac_nibble_i32(&r, &x) == 0);
	CHECK_EQ_U64((uint32_t)x, (uint32_t)-16);
	/* INT32_MAX and -INT32_MAX through 11 nibbles. */
	const uint8_t big[] = {0xfb, 0xff, 0xff, 0xff, 0xff, 0x06};
	r = reader(big, sizeof big);
	CHECK(adac_nibble_i32(&r, &x) == 0 && x == INT32_MAX);
	const uint8_t neg[] = {0xfb, 0xff, 0xff, 0xff, 0xff, 0x07};
	r = reader(neg, sizeof neg);
	CHECK(adac_nibble_i32(&r, &x) == 0 && x == -INT32_MAX);
}

static void test_limits(void)
{
	/* UINT32_MAX: 11 nibbles, the first 3 (bits 30-31). */
	const uint8_t max[] = {0xfb, 0xff, 0xff, 0xff, 0xff, 0x07};
	struct adac_nibble_reader r = reader(max, sizeof max);
	uint32_t v;
	CHECK(adac_nibble_u32(&r, &v) == 0 && v == UINT32_MAX);
	/* 2^32: 11 nibbles whose value needs 33 bits. */
	const uint8_t wide[] = {0x8c, 0x88, 0x88, 0x88, 0x88, 0x00};
	r = reader(wide, sizeof wide);
	CHECK(adac_nibble_u32(&r, &v) != 0);
	CHECK(r.status == ADAC_NIBBLE_OVERLONG);
	CHECK_EQ_U64(r.pos, 0); /* nothing consumed */
	CHECK_EQ_STR(adac_nibble_why(&r), "value wider than 32 bits");
	/* 12 nibbles of leading zeros with continuation bits: over-long even though the value is 0. */
	const uint8_t zeros[] = {0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x00};
	r = reader(zeros, sizeof zeros);
	CHECK(adac_nibble_u32(&r, &v) != 0 && r.status == ADAC_NIBBLE_OVERLONG);
	/* A value cut by the end of data. */
	const uint8_t cut[] = {0x99};
	r = reader(cut, sizeof cut);
	CHECK(adac_nibble_u32(&r, &v) != 0 && r.status == ADAC_NIBBLE_END);
	CHECK_EQ_U64(r.pos, 0);
	/* Nothing at all. */
	r = reader(cut, 0);
	uint8_t n;
	CHECK(adac_nibble_read(&r, &n) != 0);
	CHECK(adac_nibble_u32(&r, &v) != 0);
	CHECK_EQ_U64(adac_nibble_byte_index(&r), 0);
}

static void test_unencoded(void)
{
	/* WriteUnencodedU32: 8 nibbles, least-significant first (so the bytes are little endian when
	 * aligned); here after one nibble, to cross byte boundaries. */
	const uint8_t b[] = {0x85, 0x76, 0x54, 0x32, 0x01, 0xff};
	struct adac_nibble_reader r = reader(b, sizeof b);
	uint8_t n;
	uint32_t v;
	CHECK(adac_nibble_read(&r, &n) == 0 && n == 5);
	CHECK(adac_nibble_unencoded_u32(&r, &v) == 0);
	CHECK_EQ_U64(v, 0x13254768); /* nibbles 8 6 7 4 5 2 3 1 */
	CHECK_EQ_U64(adac_nibble_byte_index(&r), 5);
	CHECK(adac_nibble_unencoded_u32(&r, &v) != 0); /* 3 nibbles left */
	CHECK_EQ_U64(adac_nibble_left(&r), 3);
}

int main(void)
{
	test_examples();
	test_sequence();
	test_signed();
	test_limits();
	test_unencoded();
	return check_report("test_nibble");
}
