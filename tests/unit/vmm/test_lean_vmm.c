// SPDX-License-Identifier: MIT
/*
 * test_lean_vmm.c: the program a running VM is, vpmu-vmm, needs none of
 * the libraries only the other commands use. Its ELF dynamic section
 * (DT_NEEDED, read with libelf) names no libvirt, libxml2 (the XML config
 * is read by `vpmu run` before it execs vpmu-vmm), libdw, GnuTLS,
 * microhttpd, protobuf-c or libpfm4 (dlopen'd by the perf backend on hosts
 * with a PMU only). zlib it does need: its crc32 checks the sections of
 * `vpmu snapshot` files. The same check on the full `vpmu` program finds
 * libxml2, so the reader sees what is there.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NEEDED_MAX 64

struct needed {
	char name[NEEDED_MAX][64];
	unsigned int nr;
};

/* The DT_NEEDED entries of the ELF file (path). */
static void read_needed(const char *path, struct needed *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;
	size_t i;
	Elf *e;
	int fd;

	out->nr = 0;
	cr_assert(not(eq(uint, elf_version(EV_CURRENT), EV_NONE)));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(ge(int, fd, 0), "cannot open %s", path);
	e = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(not(eq(ptr, e, NULL)), "%s: %s", path, elf_errmsg(-1));
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && gelf_getdyn(d, (int)i, &dyn); i++) {
			if (dyn.d_tag != DT_NEEDED || out->nr == NEEDED_MAX)
				continue;
			snprintf(out->name[out->nr++], sizeof(out->name[0]),
				 "%s",
				 elf_strptr(e, sh.sh_link, dyn.d_un.d_val));
		}
	}
	elf_end(e);
	close(fd);
}

static bool needs(const struct needed *n, const char *prefix)
{
	unsigned int i;

	for (i = 0; i < n->nr; i++) {
		if (!strncmp(n->name[i], prefix, strlen(prefix)))
			return true;
	}
	return false;
}

static const char *const heavy[] = {
	"libvirt",       "libxml2",       "libdw",  "libelf",  "libgnutls",
	"libmicrohttpd", "libprotobuf-c", "libicu", "liblzma", "libpfm",
};

Test(lean_vmm, vpmu_vmm_needs_no_operator_library)
{
	struct needed n;
	unsigned int i;

	read_needed(VPMU_BUILD_DIR "/vmm/vpmu-vmm", &n);
	cr_assert(needs(&n, "libc.so"), "no DT_NEEDED read (%u entries)", n.nr);
	for (i = 0; i < sizeof(heavy) / sizeof(heavy[0]); i++)
		cr_expect(not(needs(&n, heavy[i])), "vpmu-vmm needs %s*",
			  heavy[i]);
}

Test(lean_vmm, full_program_still_needs_them)
{
	struct needed n;

	read_needed(VPMU_BUILD_DIR "/vmm/vpmu", &n);
	cr_expect(needs(&n, "libxml2"), "vpmu: no libxml2 among %u", n.nr);
	cr_expect(needs(&n, "libmicrohttpd"), "vpmu: no libmicrohttpd");
}
