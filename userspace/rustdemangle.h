/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rust v0 symbol names ("_R...", RFC 2603) to readable names, printed the
 * way rustc-demangle's alternate form ({:#}) prints them: no crate hashes,
 * no type suffixes on constants.
 *
 *   std::thread::main_thread::MAIN
 *   <alloc::vec::Vec<u8> as core::clone::Clone>::clone
 *   t::main::{closure#0}
 *
 * Self-contained (no allocation, no globals, thread safe).  Recursion is
 * bounded, and so is the work spent on a name, whatever the name holds.
 */
#ifndef EP_RUSTDEMANGLE_H
#define EP_RUSTDEMANGLE_H

#include <stddef.h>

/*
 * Demangle the NUL-terminated name mangled ("_R" <path> [<instantiating
 * crate>], then an optional ".suffix": ".llvm.<hex>" is dropped, any other
 * suffix is kept as is) into out, a buffer of out_len bytes that the caller
 * owns.  Never reads mangled past its NUL.
 *
 * Returns 0 with a NUL-terminated name in out; -EINVAL when mangled is not a
 * valid v0 name (out holds "" when out_len > 0); -ENAMETOOLONG when the name
 * does not fit in out_len bytes, or would take more work than a real name
 * ever needs (a chain of back references can make a short name expand
 * without end): out then holds what fits, NUL-terminated, cut at a UTF-8
 * character boundary.
 */
int rdm_demangle(const char *mangled, char *out, size_t out_len);

#endif
