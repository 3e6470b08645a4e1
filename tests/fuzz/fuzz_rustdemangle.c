// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the Rust v0 demangler (rdm_demangle): the input is
 * a symbol name, given "_R" in front when it has none so that most inputs
 * reach the parser.  Beyond the sanitizers, it checks what the header
 * promises: one of three results, a NUL-terminated output that is valid
 * UTF-8, and the same name, or a prefix of it cut at a character boundary,
 * whatever the size of the buffer.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iuserspace \
 *     tests/fuzz/fuzz_rustdemangle.c userspace/rustdemangle.c \
 *     -o fuzz_rustdemangle &&
 *   ./fuzz_rustdemangle -max_total_time=300 \
 *     -dict=tests/fuzz/rustdemangle.dict CORPUS
 *
 * A good corpus: the _R symbols of a Rust binary, one a file (nm | grep).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rustdemangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool valid_utf8(const unsigned char *s)
{
	size_t more;

	while (*s) {
		if (*s < 0x80)
			more = 0;
		else if (*s >= 0xc2 && *s < 0xe0)
			more = 1;
		else if (*s >= 0xe0 && *s < 0xf0)
			more = 2;
		else if (*s >= 0xf0 && *s < 0xf5)
			more = 3;
		else
			return false;
		for (s++; more; more--, s++)
			if ((*s & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static void check_out(int err, const char *out, size_t cap)
{
	if (err != 0 && err != -EINVAL && err != -ENAMETOOLONG)
		abort();
	if (!memchr(out, 0, cap))
		abort();
	if (err == -EINVAL && out[0])
		abort();
	if (!valid_utf8((const unsigned char *)out))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char big[64 * 1024], small[64];
	bool prefix = !(size >= 2 && data[0] == '_' && data[1] == 'R');
	size_t n = prefix ? size + 2 : size, len;
	char *name, *cut;
	int err, err_small, err_cut;

	/* exactly the string and its NUL: a read past it is caught */
	name = malloc(n + 1);
	if (!name)
		return 0;
	if (prefix)
		memcpy(name, "_R", 2);
	memcpy(name + (prefix ? 2 : 0), data, size);
	name[n] = 0;

	err = rdm_demangle(name, big, sizeof(big));
	check_out(err, big, sizeof(big));
	err_small = rdm_demangle(name, small, sizeof(small));
	check_out(err_small, small, sizeof(small));

	/* less room prints less of the same, and refuses no more */
	if (err_small == -EINVAL && err != -EINVAL)
		abort();
	if (err_small == 0 && (err != 0 || strcmp(small, big)))
		abort();
	if (err_small == -ENAMETOOLONG && err != -EINVAL &&
	    strncmp(small, big, strlen(small)))
		abort();

	/* a demangled name cut to half its length */
	len = strlen(big);
	if (err == 0 && len > 1) {
		cut = malloc(len / 2 + 1);
		if (cut) {
			err_cut = rdm_demangle(name, cut, len / 2 + 1);
			check_out(err_cut, cut, len / 2 + 1);
			if (err_cut != -ENAMETOOLONG ||
			    strncmp(cut, big, strlen(cut)) ||
			    strlen(cut) + 4 < len / 2)
				abort();
			free(cut);
		}
	}
	free(name);
	return 0;
}
