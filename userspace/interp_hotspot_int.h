/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to HotSpot's module: interp_hotspot.c (detection, attach, the
 * module), interp_hotspot_vm.c (the VM's own tables: every C++ offset),
 * interp_hotspot_scope.c (compressed streams: line-number tables and an
 * nmethod's scopes) and interp_hotspot_names.c (a frame's names).  Not
 * for other modules.
 */
#ifndef EP_INTERP_HOTSPOT_INT_H
#define EP_INTERP_HOTSPOT_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp.h"
#include "interp_hotspot.h"

/* Bytes of the JVM at addr (0: never mapped, read as a fault). */
static inline int hs_rd(interp_read_fn read, void *arg, pid_t pid,
			uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return read(arg, pid, addr, buf, len);
}

static inline int hs_rd64(interp_read_fn read, void *arg, pid_t pid,
			  uint64_t addr, uint64_t *v)
{
	*v = 0;
	return hs_rd(read, arg, pid, addr, v, 8);
}

/* Whether the field at byte offset at of struct hs_vm was found in the
 * VM's tables (an offset may be 0). */
bool hs_vm_has(const struct hs_vm *vm, size_t at);

#endif
