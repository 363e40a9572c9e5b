/* SPDX-License-Identifier: MIT */
/*
 * stdint.h for the nolibc init: nolibc's std.h (included first, through
 * -include nolibc.h) already defines the fixed-width integer types that
 * pvpmu/abi.h asks <stdint.h> for; the compiler's own stdint.h would
 * redefine uint64_t as `unsigned long` against nolibc's `unsigned long long`.
 */
#ifndef VPMU_LINUX_INIT_STDINT_H
#define VPMU_LINUX_INIT_STDINT_H
#endif
