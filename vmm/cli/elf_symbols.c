// SPDX-License-Identifier: MIT
/*
 * elf_symbols.c: ELF64 .symtab reader (see elf_symbols.h). Small on purpose:
 * the section headers, the SHT_SYMTAB section and its linked string table.
 */
#include "elf_symbols.h"

#include <elf.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static bool in_file(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Copy the FUNC symbols of (symtab) with names from (strtab). */
static int collect(struct symtab *t, const unsigned char *f, size_t size,
		   const Elf64_Shdr *sh, const Elf64_Shdr *str)
{
	const Elf64_Sym *s = (const void *)(f + sh->sh_offset);
	size_t i, n = sh->sh_size / sizeof(Elf64_Sym);

	t->strs = malloc(str->sh_size + 1);
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	if (!t->strs || !t->syms)
		return -ENOMEM;
	memcpy(t->strs, f + str->sh_offset, str->sh_size);
	t->strs[str->sh_size] = '\0';
	for (i = 0; i < n; i++) {
		if (ELF64_ST_TYPE(s[i].st_info) != STT_FUNC ||
		    s[i].st_name >= str->sh_size || !s[i].st_value)
			continue;
		t->syms[t->nr++] = (struct sym){.addr = s[i].st_value,
						.size = s[i].st_size,
						.name = t->strs + s[i].st_name};
	}
	qsort(t->syms, t->nr, sizeof(*t->syms), by_addr);
	(void)size;
	return 0;
}

static int parse(struct symtab *t, const unsigned char *f, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Shdr *sh;
	unsigned int i;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(size, eh->e_shoff,
		     (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    eh->e_shoff % 8)
		return -ENOEXEC;
	sh = (const void *)(f + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		if (!in_file(size, sh[i].sh_offset, sh[i].sh_size) ||
		    sh[i].sh_offset % 8 ||
		    !in_file(size, sh[sh[i].sh_link].sh_offset,
			     sh[sh[i].sh_link].sh_size))
			return -ENOEXEC;
		return collect(t, f, size, &sh[i], &sh[sh[i].sh_link]);
	}
	return 0; /* stripped: no symbols */
}

int symtab_load(struct symtab *t, const char *path)
{
	struct stat st;
	void *f;
	int fd, ret;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		ret = -ENOEXEC;
		close(fd);
		return ret;
	}
	f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return -errno;
	ret = parse(t, f, (size_t)st.st_size);
	munmap(f, (size_t)st.st_size);
	if (ret)
		symtab_free(t);
	return ret;
}

const struct sym *symtab_find(const struct symtab *t, uint64_t ip)
{
	size_t lo = 0, hi = t->nr;
	const struct sym *s;

	/* The last symbol starting at or below ip. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	/* Sized symbols must contain ip; size 0 (asm) owns up to the next. */
	if (s->size && ip - s->addr >= s->size)
		return NULL;
	return s;
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof(*t));
}
