/* SPDX-License-Identifier: MIT */
/*
 * extable.h: the exception table convention shared by ring-0 code
 * (kernel.h) and ring-3 programs (user.h).
 *
 * An instruction that may fault is recorded with EXTABLE_ENTRY(fault,
 * resume, op) inside its inline asm: if it raises any exception (in ring 0
 * or ring 3), the kernel's trap handler writes EXTABLE_FAULT | vector
 * (never 0, even for #DE) into the saved register whose TRAP_REG_* index
 * is the asm operand named (op), and resumes at (resume) instead of
 * dying. Clear that register before the instruction, e.g.
 *   "xor %%esi, %%esi\n1: rdmsr\n2:\n" EXTABLE_ENTRY(1b, 2b, reg)
 *   : "=&S"(vec) ... : [reg] "i"(TRAP_REG_RSI)
 * (see guest_rdmsr_safe() in trap.c and user_outb_safe() in user.h).
 * The table is part of the image, so only code linked into the image can
 * add entries.
 */
#ifndef GUEST_EXTABLE_H
#define GUEST_EXTABLE_H

#include <stdint.h>

/* Index of a saved register in a struct trap_frame seen as uint64_t[]. */
#define TRAP_REG_RSI 10
#define TRAP_REG_RAX 14

#define EXTABLE_FAULT 0x100

struct extable_entry {
	uint64_t fault_rip;
	uint64_t resume_rip;
	uint64_t reg;
};

#define EXTABLE_ENTRY(fault, resume, op)                                       \
	".pushsection .extable, \"a\"\n\t"                                     \
	".balign 8\n\t"                                                        \
	".quad " #fault ", " #resume ", %c[" #op "]\n\t"                       \
	".popsection\n\t"

#endif /* GUEST_EXTABLE_H */
