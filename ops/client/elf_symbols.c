// SPDX-License-Identifier: MIT
/*
 * elf_symbols.c: guest symbols with elfutils (see elf_symbols.h). libelf
 * walks the symbol tables and bounds-checks the file; libdw answers source
 * lines; libdwelf finds the GNU build-id note.
 */
#include "elf_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vpmu_file.h>

#define MAP_FILE_MAX (256u << 20) /* a System.map is a few MiB */

/* Open (path) read-only if it is a regular file (vpmu_file.h). */
static int open_regular(const char *path, struct stat *st)
{
	return vpmu_file_open(path, O_RDONLY, 0, st, NULL, 0);
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The STT_FUNC symbols of one symbol-table section. */
static int collect(struct symtab *t, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;
	GElf_Sym s;

	if (!data || !sh->sh_entsize)
		return -ENOEXEC;
	n       = sh->sh_size / sh->sh_entsize;
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &s))
			return -ENOEXEC;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(t->elf, sh->sh_link, s.st_name);
		if (!name)
			continue;
		t->syms[t->nr++] = (struct sym){
			.addr = s.st_value, .size = s.st_size, .name = name};
	}
	qsort(t->syms, t->nr, sizeof(*t->syms), by_addr);
	return 0;
}

/* .symtab, else .dynsym (a stripped image), else no symbols. */
static int read_symbols(struct symtab *t)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dsh;
	size_t shnum;

	if (elf_kind(t->elf) != ELF_K_ELF || gelf_getclass(t->elf) == 0 ||
	    elf_getshdrnum(t->elf, &shnum) < 0)
		return -ENOEXEC;
	while ((scn = elf_nextscn(t->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type == SHT_SYMTAB)
			return collect(t, scn, &sh);
		if (sh.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dsh = sh;
		}
	}
	if (elf_errno())
		return -ENOEXEC;
	return dyn ? collect(t, dyn, &dsh) : 0;
}

static void read_loads(struct symtab *t)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(t->elf, &n))
		return;
	for (i = 0; i < n && t->nr_loads < SYMTAB_LOADS_MAX; i++) {
		if (!gelf_getphdr(t->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->loads[t->nr_loads].offset   = ph.p_offset;
		t->loads[t->nr_loads].vaddr    = ph.p_vaddr;
		t->loads[t->nr_loads++].filesz = ph.p_filesz;
	}
}

int symtab_vaddr_of(const struct symtab *t, uint64_t offset, uint64_t *vaddr)
{
	unsigned int i;

	for (i = 0; i < t->nr_loads; i++) {
		if (offset >= t->loads[i].offset &&
		    offset - t->loads[i].offset < t->loads[i].filesz) {
			*vaddr =
				offset - t->loads[i].offset + t->loads[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int symtab_load(struct symtab *t, const char *path)
{
	const void *id;
	struct stat st;
	ssize_t n;
	int fd, ret;

	memset(t, 0, sizeof(*t));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open_regular(path, &st);
	if (fd < 0)
		return fd;
	/* Mapped whole; FDREAD makes libelf let go of the descriptor. */
	t->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (t->elf && elf_cntl(t->elf, ELF_C_FDREAD))
		ret = -ENOEXEC;
	else
		ret = t->elf ? read_symbols(t) : -ENOEXEC;
	close(fd);
	if (ret)
		goto fail;
	read_loads(t);
	n = dwelf_elf_gnu_build_id(t->elf, &id);
	if (n > 0 && (size_t)n <= sizeof(t->build_id)) {
		memcpy(t->build_id, id, (size_t)n);
		t->build_id_len = (size_t)n;
	}
	/* NULL without debug info: then there are no source lines. */
	t->dwarf = dwarf_begin_elf(t->elf, DWARF_C_READ, NULL);
	return 0;
fail:
	symtab_free(t);
	return ret;
}

/* Read all of a regular file, NUL-terminated. */
static int slurp(const char *path, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf;
	int fd = open_regular(path, &st);

	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > MAP_FILE_MAX) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	buf[got] = '\0';
	*out     = buf;
	*len     = got;
	return 0;
}

/* "ADDRESS TYPE NAME[ \t[module]]": a text symbol, or false. */
static bool map_line(char *line, struct sym *s)
{
	char *end, *name;
	char type;

	errno   = 0;
	s->addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ')
		return false;
	type = end[1];
	if (!type || end[2] != ' ' || !strchr("tTwW", type))
		return false;
	name                         = end + 3;
	name[strcspn(name, " \t\r")] = '\0';
	s->name                      = name;
	s->size                      = 0;
	return *name && s->addr;
}

int symtab_load_map(struct symtab *t, const char *path)
{
	size_t len, lines = 1, i;
	char *p, *nl;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = slurp(path, &t->strs, &len);
	if (ret)
		return ret;
	for (i = 0; i < len; i++)
		lines += t->strs[i] == '\n';
	t->syms = calloc(lines, sizeof(*t->syms));
	if (!t->syms) {
		symtab_free(t);
		return -ENOMEM;
	}
	for (p = t->strs; p && *p; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		if (map_line(p, &t->syms[t->nr]))
			t->nr++;
	}
	if (!t->nr) {
		symtab_free(t);
		return -ENOEXEC;
	}
	qsort(t->syms, t->nr, sizeof(*t->syms), by_addr);
	/* Each symbol ends where the next begins. */
	for (i = 0; i + 1 < t->nr; i++)
		t->syms[i].size = t->syms[i + 1].addr - t->syms[i].addr;
	return 0;
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

int symtab_srcline(const struct symtab *t, uint64_t ip, const char **file,
		   int *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;

	if (!t->dwarf || !dwarf_addrdie(t->dwarf, ip, &cu))
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, ip);
	if (!l || dwarf_lineno(l, line) != 0)
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	return *file ? 0 : -ENOENT;
}

/* A string attribute of (die), through its abstract origin. */
static const char *die_str(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

static int die_udata(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_formudata(dwarf_attr(die, name, &a), &w) || w > INT_MAX)
		return 0;
	return (int)w;
}

/* The file (idx) of (cu)'s line table header, or NULL. */
static const char *cu_file(Dwarf_Die *cu, int idx)
{
	Dwarf_Files *files;
	size_t n;

	if (idx <= 0 || dwarf_getsrcfiles(cu, &files, &n) || (size_t)idx >= n)
		return NULL;
	return dwarf_filesrc(files, (size_t)idx, NULL, NULL);
}

int symtab_src_frames(const struct symtab *t, uint64_t ip, struct src_frame *f,
		      int max)
{
	Dwarf_Die cu, *scopes = NULL, *d;
	const char *file = NULL;
	int n = 0, i, nr, line = 0, tag;
	Dwarf_Line *l;

	if (!t->dwarf || max <= 0 || !dwarf_addrdie(t->dwarf, ip, &cu))
		return 0;
	l = dwarf_getsrc_die(&cu, ip);
	if (l && !dwarf_lineno(l, &line))
		file = dwarf_linesrc(l, NULL, NULL);
	/*
	 * dwarf_getscopes() goes on from an inlined instance into its
	 * abstract definition; its parents in the concrete tree are the
	 * functions it was inlined into.
	 */
	nr = dwarf_getscopes(&cu, ip, &scopes);
	if (nr > 0) {
		Dwarf_Die in = scopes[0];

		free(scopes);
		scopes = NULL;
		nr     = dwarf_getscopes_die(&in, &scopes);
	}
	for (i = 0; i < nr; i++) {
		d   = &scopes[i];
		tag = dwarf_tag(d);
		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram)
			continue;
		/* Too deep: the innermost ones, and the function last. */
		if (n < max - 1 || tag == DW_TAG_subprogram) {
			f[n] = (struct src_frame){
				.func      = die_str(d, DW_AT_name),
				.decl_file = dwarf_decl_file(d),
				.file      = file,
				.line      = line};
			dwarf_decl_line(d, &f[n].decl_line);
			n++;
		}
		if (tag == DW_TAG_subprogram)
			break;
		/* The caller's position is this inlined call. */
		file = cu_file(&cu, die_udata(d, DW_AT_call_file));
		line = die_udata(d, DW_AT_call_line);
	}
	free(scopes);
	return n;
}

void symtab_build_id_hex(const struct symtab *t, char *buf, size_t len)
{
	size_t i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < t->build_id_len && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", t->build_id[i]);
}

void symtab_free(struct symtab *t)
{
	if (t->dwarf)
		dwarf_end(t->dwarf);
	if (t->elf)
		elf_end(t->elf);
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof(*t));
}
