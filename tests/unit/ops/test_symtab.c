// SPDX-License-Identifier: MIT
/*
 * test_symtab.c: guest symbols for `vpmu report`: functions of a
 * built guest image are found by address, addresses outside any function
 * are not, and files that are not ELF64 are refused without a crash.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_symbols.h"

#define IMAGE VPMU_BUILD_DIR "/guests/op_hot.elf"

Test(vmm_symtab, finds_guest_functions)
{
	const struct sym *hot = NULL, *s;
	struct symtab t;
	size_t i;

	cr_assert(eq(int, symtab_load(&t, IMAGE), 0));
	cr_assert(lt(sz, 10, t.nr));
	for (i = 0; i < t.nr; i++) {
		if (!strcmp(t.syms[i].name, "hot_loop"))
			hot = &t.syms[i];
		if (i)
			cr_assert(le(u64, t.syms[i - 1].addr, t.syms[i].addr));
	}
	cr_assert(not(eq(ptr, (void *)hot, NULL)));
	s = symtab_find(&t, hot->addr + hot->size / 2);
	cr_assert(eq(str, (char *)s->name, "hot_loop"));
	cr_assert(eq(ptr, (void *)symtab_find(&t, 0x1000), NULL));
	cr_assert(eq(ptr, (void *)symtab_find(&t, UINT64_MAX), NULL));
	symtab_free(&t);
}

Test(vmm_symtab, refuses_non_elf)
{
	char path[] = "/tmp/vpmu-sym-XXXXXX";
	unsigned char junk[4096];
	struct symtab t;
	size_t i;
	int fd;

	cr_assert(eq(int, symtab_load(&t, "/nonexistent"), -ENOENT));
	fd = mkstemp(path);
	cr_assert(ge(int, fd, 0));
	srand(3);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rand();
	memcpy(junk, "\177ELF\2", 5); /* looks like ELF64, is garbage */
	cr_assert(eq(int, (int)write(fd, junk, sizeof(junk)), 4096));
	close(fd);
	cr_assert(eq(int, symtab_load(&t, path), -ENOEXEC));
	cr_assert(eq(sz, t.nr, 0));
	unlink(path);
}
