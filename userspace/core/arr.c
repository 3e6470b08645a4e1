// SPDX-License-Identifier: Apache-2.0
#include "arr.h"

#include <stdlib.h>
#include <string.h>

int arr_grow(void *pp, size_t *cap, size_t need, size_t size, size_t limit)
{
	size_t c = *cap;
	void *p;

	if (need <= c)
		return 0;
	if (need > limit || !size || need > SIZE_MAX / size)
		return -ENOMEM;
	/* small at first: many arrays stay short (a sample's timestamps) */
	c = c ? c : 4;
	while (c < need)
		c = c > SIZE_MAX / 2 ? SIZE_MAX : c * 2;
	if (c > limit)
		c = limit;
	if (c > SIZE_MAX / size)
		c = need; /* need * size fits, checked above */
	/* pp is the address of a pointer of any object type: copied in and
	 * out as bytes, never read through void ** */
	memcpy(&p, pp, sizeof(p));
	p = realloc(p, c * size);
	if (!p)
		return -ENOMEM;
	memcpy(pp, &p, sizeof(p));
	*cap = c;
	return 0;
}
