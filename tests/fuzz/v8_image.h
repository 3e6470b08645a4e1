/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process image for V8's reader of optimized frames (interp_v8_code.c),
 * shared by its unit test and the v8frame fuzz target's seed: node 20's
 * layout (V8 11.3), addresses from V8_IMAGE_BASE, 2048 bytes, a
 * JSFunction at its start and a frame whose pc is V8_IMAGE_PC, in
 * TurboFan code where mid was inlined into outer and inner into mid.
 *
 *   0     JSFunction (shared: outer)
 *   64    SharedFunctionInfos outer, mid, inner (128, 192): names at
 *         384, 416, 448, the Script at 320 (name at 480, source at 512)
 *   1024  the Code: deoptimization data 1152, positions 1280,
 *         instructions at 1920 (128 bytes), kind 13 (TurboFan)
 *   1152  DeoptimizationData: 2 inlined, literals 1232, InliningPositions
 *         1344 (1: mid called at outer's line 2; 2: inner at mid's 4)
 *   1408  maps (instance type at +12)
 *   1904  the InstructionStream's header: its map, its Code
 * The pc's position: inner's line 5, inlining id 2.
 */
#ifndef EP_TESTS_V8_IMAGE_H
#define EP_TESTS_V8_IMAGE_H

#include <stdint.h>
#include <string.h>

#define V8_IMAGE_BASE 0x10000ULL
#define V8_IMAGE_SIZE 2048
#define V8_IMAGE_PC (V8_IMAGE_BASE + 2040)

static inline void v8i_put(uint8_t *b, unsigned at, uint64_t v)
{
	memcpy(b + at, &v, 8);
}

/* a tagged pointer to the object at to */
static inline void v8i_ptr(uint8_t *b, unsigned at, unsigned to)
{
	v8i_put(b, at, V8_IMAGE_BASE + to + 1);
}

/* a one-byte sequential string: map, length, characters */
static inline void v8i_str(uint8_t *b, unsigned at, unsigned map,
			   const char *s)
{
	uint32_t n = (uint32_t)strlen(s);

	v8i_ptr(b, at, map);
	memcpy(b + at + 12, &n, 4);
	memcpy(b + at + 16, s, n);
}

/* a zigzag VLQ at *at (source position tables) */
static inline void v8i_vlq(uint8_t *b, unsigned *at, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);

	do {
		b[(*at)++] = (uint8_t)((z & 0x7f) | (z > 0x7f ? 0x80 : 0));
		z >>= 7;
	} while (z);
}

/* a raw source position: script offset, inlining id */
static inline uint64_t v8i_pos(unsigned offset, unsigned inlining)
{
	return ((uint64_t)inlining << 31) | ((uint64_t)(offset + 1) << 1);
}

/* an InliningPosition (entry id - 1 of the array at 1360) */
static inline void v8i_inlining(uint8_t *b, unsigned id, uint64_t pos,
				uint32_t fn)
{
	v8i_put(b, 1360 + 16 * (id - 1), pos);
	memcpy(b + 1360 + 16 * (id - 1) + 8, &fn, 4);
}

static inline void v8_inline_image(uint8_t b[V8_IMAGE_SIZE])
{
	enum { M_SFI = 1408, M_STR = 1440, M_SCRIPT = 1472, M_CODE = 1504,
	       M_ISTREAM = 1536, M_BYTES = 1568, M_FIXED = 1600 };
	static const uint16_t maps[][2] = {
		{ M_SFI, 262 }, { M_STR, 8 }, { M_SCRIPT, 167 }, { M_CODE, 245 },
		{ M_ISTREAM, 252 }, { M_BYTES, 190 }, { M_FIXED, 175 } };
	static const char *const names[] = { "outer", "mid", "inner" };
	unsigned i, at;

	memset(b, 0, V8_IMAGE_SIZE);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		memcpy(b + maps[i][0] + 12, &maps[i][1], 2);
	v8i_ptr(b, 24, 64);
	for (i = 0; i < 3; i++) {
		v8i_ptr(b, 64 * (i + 1), M_SFI);
		v8i_ptr(b, 64 * (i + 1) + 16, 384 + 32 * i);
		v8i_ptr(b, 64 * (i + 1) + 32, 320);
		v8i_str(b, 384 + 32 * i, M_STR, names[i]);
	}
	v8i_ptr(b, 320, M_SCRIPT);
	v8i_ptr(b, 320 + 16, 480);
	v8i_str(b, 480, M_STR, "/srv/inline.js");
	v8i_ptr(b, 320 + 8, 512);
	/* lines 1..5 start at offsets 0, 2, 4, 6, 8 */
	v8i_str(b, 512, M_STR, "a\nb\nc\nd\ne\n");
	v8i_ptr(b, 1024, M_CODE);
	v8i_ptr(b, 1024 + 16, 1152);
	v8i_ptr(b, 1024 + 24, 1280);
	v8i_put(b, 1024 + 40, V8_IMAGE_BASE + 1920);
	v8i_put(b, 1024 + 48, 13);		/* flags: TurboFan */
	v8i_put(b, 1024 + 56, 128);		/* instruction size */
	v8i_ptr(b, 1904, M_ISTREAM);
	v8i_ptr(b, 1904 + 8, 1024);
	v8i_ptr(b, 1152, M_FIXED);
	v8i_put(b, 1152 + 8, 8ULL << 32);	/* 8 slots */
	v8i_put(b, 1152 + 16 + 8, 2ULL << 32); /* 1: 2 inlined */
	v8i_ptr(b, 1152 + 16 + 16, 1232);	/* 2: literals */
	v8i_ptr(b, 1152 + 16 + 56, 1344);	/* 7: InliningPositions */
	v8i_ptr(b, 1232, M_FIXED);
	v8i_put(b, 1232 + 8, 2ULL << 32);
	v8i_ptr(b, 1232 + 16, 192);		/* 0: inner, weakly */
	b[1232 + 16] |= 2;
	v8i_ptr(b, 1232 + 24, 128);		/* 1: mid */
	/* the position table: one entry, at the function's entry (-1) */
	v8i_ptr(b, 1280, M_BYTES);
	at = 1296;
	v8i_vlq(b, &at, 0);
	v8i_vlq(b, &at, (int64_t)v8i_pos(8, 2));
	v8i_put(b, 1280 + 8, (uint64_t)(at - 1296) << 32);
	v8i_ptr(b, 1344, M_BYTES);
	v8i_put(b, 1344 + 8, 32ULL << 32);
	v8i_inlining(b, 1, v8i_pos(2, 0), 1);
	v8i_inlining(b, 2, v8i_pos(6, 1), 0);
}

#endif
