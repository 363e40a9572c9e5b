// SPDX-License-Identifier: MIT
/*
 * snap_read.c: checking and indexing a snapshot file (vmm_snap.h). Every
 * check runs before the caller gets a section; each refusal names the
 * header or the section (by number, type and vCPU index).
 */
#include "vmm_snap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <vpmu_common.h>
#include <vpmu_file.h>

const char *vmm_snap_type_name(uint32_t type)
{
	switch (type) {
	case VMM_SNAP_VM:
		return "VM";
	case VMM_SNAP_VCPU:
		return "vCPU";
	case VMM_SNAP_DEVICES:
		return "devices";
	case VMM_SNAP_VPMU:
		return "vPMU";
	case VMM_SNAP_VM_PMU:
		return "VM PMU";
	case VMM_SNAP_MEMORY:
		return "memory";
	case VMM_SNAP_END:
		return "end";
	default:
		return "unknown";
	}
}

static uint32_t crc_of(const void *p, uint64_t n)
{
	const Bytef *b = p;
	uLong c        = crc32(0L, Z_NULL, 0);

	while (n) {
		uInt chunk = n > (1U << 30) ? (1U << 30) : (uInt)n;

		c = crc32(c, b, chunk);
		b += chunk;
		n -= chunk;
	}
	return (uint32_t)c;
}

/* A fixed-size text field, compared as a C string within its bytes. */
static bool field_is(const char *field, size_t n, const char *want)
{
	size_t len = strlen(want);

	return len <= n && memcmp(field, want, len) == 0 &&
	       (len == n || field[len] == '\0');
}

static int check_hdr(const struct vmm_snap_hdr *h, size_t len,
		     const struct vmm_snap_expect *exp, char *err,
		     size_t errlen)
{
	struct vmm_snap_hdr c = *h;

	if (len < sizeof(*h))
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: file of %zu bytes is too short", len);
	if (memcmp(h->magic, VMM_SNAP_MAGIC, sizeof(h->magic)) != 0)
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: not a vpmu snapshot (magic)");
	if (h->version != VMM_SNAP_VERSION)
		return vpmu_fail(
			err, errlen, -EINVAL,
			"header: format version %u, this vpmu reads %u",
			h->version, VMM_SNAP_VERSION);
	c.hdr_crc = 0;
	if (h->hdr_size != sizeof(*h) || crc_of(&c, sizeof(c)) != h->hdr_crc)
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: checksum mismatch (damaged)");
	if (h->page_size != VMM_SNAP_PAGE_SIZE || h->flags ||
	    h->mem_size % VMM_SNAP_PAGE_SIZE || !h->mem_size)
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: bad page or memory size");
	if (h->nr_sections == 0)
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: no sections (the snapshot was not "
				 "finished)");
	if (h->nr_sections > VMM_SNAP_MAX_SECTIONS || !h->nr_vcpus ||
	    h->nr_vcpus > 4096)
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: %u sections, %u vCPUs",
				 h->nr_sections, h->nr_vcpus);
	if (exp && exp->vendor &&
	    !field_is(h->vendor, sizeof(h->vendor), exp->vendor))
		return vpmu_fail(
			err, errlen, -EINVAL,
			"header: taken on a %.16s host, this host is %s",
			h->vendor, exp->vendor);
	if (exp && exp->pmu_model &&
	    !field_is(h->pmu_model, sizeof(h->pmu_model), exp->pmu_model))
		return vpmu_fail(err, errlen, -EINVAL,
				 "header: PMU model %.16s, this VM would be %s",
				 h->pmu_model, exp->pmu_model);
	return 0;
}

/* Word (i) of a section payload, which may sit at any file offset. */
static uint64_t word_at(const void *base, uint64_t i)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)base + i * 8, sizeof(v));
	return v;
}

/* The memory section's bitmap must account for exactly its length. */
static int check_memory(const struct vmm_snap_section *s, uint64_t mem_size,
			unsigned int no, char *err, size_t errlen)
{
	const void *w = s->data;
	uint64_t nr, words, pages = 0, i;

	if (s->length < 16)
		return vpmu_fail(err, errlen, -EINVAL,
				 "section %u (memory): too short", no);
	nr = word_at(w, 1);
	if (word_at(w, 0) != VMM_SNAP_PAGE_SIZE ||
	    nr != mem_size / VMM_SNAP_PAGE_SIZE)
		return vpmu_fail(
			err, errlen, -EINVAL,
			"section %u (memory): %llu pages, the header says "
			"%llu bytes",
			no, (unsigned long long)nr,
			(unsigned long long)mem_size);
	words = (nr + 63) / 64;
	if ((s->length - 16) / 8 < words)
		return vpmu_fail(err, errlen, -EINVAL,
				 "section %u (memory): bitmap cut short", no);
	for (i = 0; i < words; i++)
		pages += (uint64_t)__builtin_popcountll(word_at(w, 2 + i));
	if (nr % 64 && (word_at(w, 2 + words - 1) >> (nr % 64)))
		return vpmu_fail(
			err, errlen, -EINVAL,
			"section %u (memory): bitmap marks pages past the "
			"end",
			no);
	if (s->length - 16 - words * 8 != pages * VMM_SNAP_PAGE_SIZE)
		return vpmu_fail(
			err, errlen, -EINVAL,
			"section %u (memory): %llu pages marked, length "
			"disagrees",
			no, (unsigned long long)pages);
	return 0;
}

static int check_sections(struct vmm_snap *out, const unsigned char *b,
			  size_t len, char *err, size_t errlen)
{
	const struct vmm_snap_hdr *h = &out->hdr;
	uint64_t off                 = sizeof(*h);
	unsigned int i, nr_vcpu = 0, nr_vm = 0, nr_mem = 0;

	for (i = 0; i < h->nr_sections; i++) {
		struct vmm_snap_sect_hdr sh;
		struct vmm_snap_section *s = &out->sect[i];
		const char *name;

		if (len - off < sizeof(sh))
			return vpmu_fail(
				err, errlen, -EINVAL,
				"section %u: file cut short before its "
				"header",
				i);
		memcpy(&sh, b + off, sizeof(sh));
		off += sizeof(sh);
		name = vmm_snap_type_name(sh.type);
		if (sh.length > len - off)
			return vpmu_fail(
				err, errlen, -EINVAL,
				"section %u (%s): file cut short (%llu "
				"bytes announced, %llu left)",
				i, name, (unsigned long long)sh.length,
				(unsigned long long)(len - off));
		if (!strcmp(name, "unknown") || sh.reserved)
			return vpmu_fail(err, errlen, -EINVAL,
					 "section %u: unknown type %u", i,
					 sh.type);
		if (crc_of(b + off, sh.length) != sh.crc) {
			char label[32];

			snprintf(label, sizeof(label), "%s", name);
			if (sh.type == VMM_SNAP_VCPU)
				snprintf(label, sizeof(label), "vCPU %u",
					 sh.index);
			return vpmu_fail(err, errlen, -EINVAL,
					 "section %u (%s): checksum mismatch "
					 "(damaged)",
					 i, label);
		}
		*s = (struct vmm_snap_section){.type   = sh.type,
					       .index  = sh.index,
					       .data   = b + off,
					       .length = sh.length};
		off += sh.length;
		if ((sh.type == VMM_SNAP_END) != (i == h->nr_sections - 1))
			return vpmu_fail(
				err, errlen, -EINVAL,
				"section %u (%s): the end section must be "
				"last",
				i, name);
		if (sh.type == VMM_SNAP_VCPU &&
		    (sh.index >= h->nr_vcpus ||
		     vmm_snap_find(out, VMM_SNAP_VCPU, sh.index) != s))
			return vpmu_fail(
				err, errlen, -EINVAL,
				"section %u (vCPU %u): index out of range "
				"or repeated",
				i, sh.index);
		if (sh.type != VMM_SNAP_VCPU &&
		    vmm_snap_find(out, sh.type, 0) != s)
			return vpmu_fail(err, errlen, -EINVAL,
					 "section %u (%s): repeated", i, name);
		nr_vcpu += sh.type == VMM_SNAP_VCPU;
		nr_vm += sh.type == VMM_SNAP_VM;
		if (sh.type == VMM_SNAP_MEMORY) {
			int ret = check_memory(s, h->mem_size, i, err, errlen);

			if (ret)
				return ret;
			nr_mem++;
		}
		out->nr = i + 1;
	}
	if (off != len)
		return vpmu_fail(err, errlen, -EINVAL,
				 "end: %llu bytes after the last section",
				 (unsigned long long)(len - off));
	if (!nr_vm || !nr_mem || nr_vcpu != h->nr_vcpus)
		return vpmu_fail(err, errlen, -EINVAL,
				 "end: %s section missing (%u of %u vCPUs)",
				 !nr_vm    ? "VM"
				 : !nr_mem ? "memory"
					   : "vCPU",
				 nr_vcpu, h->nr_vcpus);
	return 0;
}

int vmm_snap_parse(const void *buf, size_t len,
		   const struct vmm_snap_expect *exp, struct vmm_snap *out,
		   char *err, size_t errlen)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (len >= sizeof(out->hdr))
		memcpy(&out->hdr, buf, sizeof(out->hdr));
	ret = check_hdr(&out->hdr, len, exp, err, errlen);
	if (ret)
		return ret;
	out->sect = calloc(out->hdr.nr_sections, sizeof(*out->sect));
	if (!out->sect)
		return -ENOMEM;
	ret = check_sections(out, buf, len, err, errlen);
	if (ret) {
		free(out->sect);
		out->sect = NULL;
		out->nr   = 0;
	}
	return ret;
}

int vmm_snap_open(const char *path, const struct vmm_snap_expect *exp,
		  struct vmm_snap *out, char *err, size_t errlen)
{
	struct stat st;
	void *map;
	char why[200];
	int fd, ret;

	memset(out, 0, sizeof(*out));
	fd = vpmu_file_open(path, O_RDONLY, 0, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) {
		close(fd);
		snprintf(err, errlen, "%s: header: empty file", path);
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = vmm_snap_parse(map, (size_t)st.st_size, exp, out, why,
			     sizeof(why));
	if (ret) {
		munmap(map, (size_t)st.st_size);
		snprintf(err, errlen, "%s: %s", path, why);
		return ret;
	}
	out->map     = map;
	out->map_len = (size_t)st.st_size;
	return 0;
}

void vmm_snap_close(struct vmm_snap *s)
{
	free(s->sect);
	if (s->map)
		munmap(s->map, s->map_len);
	memset(s, 0, sizeof(*s));
}

const struct vmm_snap_section *vmm_snap_find(const struct vmm_snap *s,
					     uint32_t type, uint32_t index)
{
	unsigned int i;

	for (i = 0; s->sect && i < s->hdr.nr_sections; i++) {
		if (s->sect[i].type == type && s->sect[i].index == index &&
		    s->sect[i].data)
			return &s->sect[i];
	}
	return NULL;
}

int vmm_snap_memory_load(const struct vmm_snap_section *m, void *mem,
			 uint64_t size)
{
	const void *w = m->data;
	const unsigned char *pg;
	uint64_t nr, words, i;

	if (m->length < 16 || word_at(w, 1) * VMM_SNAP_PAGE_SIZE != size)
		return -EINVAL;
	nr    = word_at(w, 1);
	words = (nr + 63) / 64;
	pg    = (const unsigned char *)w + (2 + words) * 8;
	for (i = 0; i < nr; i++) {
		if (!(word_at(w, 2 + i / 64) & (1ULL << (i % 64))))
			continue;
		memcpy((unsigned char *)mem + i * VMM_SNAP_PAGE_SIZE, pg,
		       VMM_SNAP_PAGE_SIZE);
		pg += VMM_SNAP_PAGE_SIZE;
	}
	return 0;
}
