/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builds for fuzzing (tests/fuzz/fuzz.mk defines the conventional
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) treat checksums over stored
 * bytes as advisory: a fuzzer cannot forge a CRC, and the checks behind
 * one must hold anyway against whoever can write the bytes.
 */
#ifndef EP_FUZZING_H
#define EP_FUZZING_H

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define FUZZING_CRC_ADVISORY 1
#else
#define FUZZING_CRC_ADVISORY 0
#endif

#endif
