// SPDX-License-Identifier: MIT
/*
 * test_snap_file.c: the snapshot file container (vmm/snap): a
 * written file parses back with its sections and sparse memory; a
 * truncated file, a damaged section, another format version, another host
 * vendor or PMU model, an unfinished file are each refused with a message
 * naming the header or the section.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm_snap.h"

#define MEM_SIZE (64 * VMM_SNAP_PAGE_SIZE)

static unsigned char *mem;
static void *file;
static size_t file_len;

/* Memory with three non-zero pages (0, 5, 63). */
static void make_mem(void)
{
	mem = calloc(1, MEM_SIZE);
	cr_assert(not(eq(ptr, mem, NULL)));
	mem[0]                              = 1;
	mem[5 * VMM_SNAP_PAGE_SIZE + 17]    = 0xab;
	mem[63 * VMM_SNAP_PAGE_SIZE + 4095] = 0xcd;
}

/* Write a 2-vCPU snapshot; (finish) false leaves it unfinished. */
static void write_file(bool finish)
{
	struct vmm_snap_hdr h = {.mem_size = MEM_SIZE, .nr_vcpus = 2};
	struct vmm_snap_writer w;
	struct stat st;
	uint64_t stored = 0;
	int fd          = memfd_create("snap", 0);
	const char vm[] = "vm state", vpmu[] = "vpmu blob bytes";

	cr_assert(ge(int, fd, 0));
	memcpy(h.vendor, "AuthenticAMD", 12);
	strcpy(h.pmu_model, "amd-v2");
	cr_assert(eq(int, vmm_snap_write_begin(&w, fd, &h), 0));
	cr_assert(eq(int,
		     vmm_snap_write_sect(&w, VMM_SNAP_VM, 0, vm, sizeof(vm)),
		     0));
	cr_assert(
		eq(int, vmm_snap_write_sect(&w, VMM_SNAP_VCPU, 0, "c0", 2), 0));
	cr_assert(
		eq(int, vmm_snap_write_sect(&w, VMM_SNAP_VCPU, 1, "c1", 2), 0));
	cr_assert(eq(
		int,
		vmm_snap_write_sect(&w, VMM_SNAP_VPMU, 0, vpmu, sizeof(vpmu)),
		0));
	cr_assert(
		eq(int, vmm_snap_write_memory(&w, mem, MEM_SIZE, &stored), 0));
	cr_assert(eq(u64, stored, 3), "only non-zero pages stored");
	if (finish)
		cr_assert(eq(int, vmm_snap_write_end(&w), 0));
	cr_assert(eq(int, fstat(fd, &st), 0));
	file_len = (size_t)st.st_size;
	file     = malloc(file_len);
	cr_assert(eq(long, pread(fd, file, file_len, 0), (long)file_len));
	close(fd);
}

static void setup(void)
{
	make_mem();
	write_file(true);
}

static void teardown(void)
{
	free(mem);
	free(file);
}

TestSuite(snap_file, .init = setup, .fini = teardown);

static void refused(const void *buf, size_t len,
		    const struct vmm_snap_expect *exp, const char *needle)
{
	struct vmm_snap s;
	char err[256] = "";

	cr_assert(eq(int, vmm_snap_parse(buf, len, exp, &s, err, sizeof(err)),
		     -EINVAL),
		  "accepted (len %zu)", len);
	cr_assert(not(eq(ptr, strstr(err, needle), NULL)),
		  "message \"%s\" lacks \"%s\"", err, needle);
	cr_assert(eq(ptr, s.sect, NULL), "nothing kept");
}

Test(snap_file, round_trip_sparse)
{
	struct vmm_snap_expect exp = {.vendor    = "AuthenticAMD",
				      .pmu_model = "amd-v2"};
	const struct vmm_snap_section *sec;
	struct vmm_snap s;
	char err[256]       = "";
	unsigned char *back = calloc(1, MEM_SIZE);

	cr_assert(eq(int,
		     vmm_snap_parse(file, file_len, &exp, &s, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(u32, s.nr, 6));
	cr_assert(lt(sz, file_len, (size_t)(8 * VMM_SNAP_PAGE_SIZE)),
		  "61 zero pages are not in the file");
	sec = vmm_snap_find(&s, VMM_SNAP_VCPU, 1);
	cr_assert(not(eq(ptr, (void *)sec, NULL)));
	cr_assert(eq(int, memcmp(sec->data, "c1", 2), 0));
	sec = vmm_snap_find(&s, VMM_SNAP_VPMU, 0);
	cr_assert(eq(str, (char *)sec->data, "vpmu blob bytes"));
	sec = vmm_snap_find(&s, VMM_SNAP_MEMORY, 0);
	cr_assert(eq(int, vmm_snap_memory_load(sec, back, MEM_SIZE), 0));
	cr_assert(eq(int, memcmp(back, mem, MEM_SIZE), 0));
	vmm_snap_close(&s);
	free(back);
}

Test(snap_file, every_truncation_refused)
{
	size_t cut;

	for (cut = 0; cut < file_len; cut++) {
		struct vmm_snap s;
		char err[256] = "";

		cr_assert(eq(int,
			     vmm_snap_parse(file, cut, NULL, &s, err,
					    sizeof(err)),
			     -EINVAL),
			  "cut at %zu accepted", cut);
		cr_assert(strstr(err, "header") || strstr(err, "section") ||
				  strstr(err, "end"),
			  "cut at %zu: \"%s\"", cut, err);
	}
	refused(file, file_len - 1, NULL, "section 5: file cut short");
	refused(file, file_len - sizeof(struct vmm_snap_sect_hdr) - 1, NULL,
		"section 4 (memory): file cut short");
}

Test(snap_file, damaged_section_named)
{
	unsigned char *b = malloc(file_len);
	size_t off       = sizeof(struct vmm_snap_hdr);

	memcpy(b, file, file_len);
	/* Section 0 (VM): header, payload "vm state". */
	b[off + sizeof(struct vmm_snap_sect_hdr) + 1] ^= 0x40;
	refused(b, file_len, NULL, "section 0 (VM): checksum mismatch");
	memcpy(b, file, file_len);
	b[file_len - sizeof(struct vmm_snap_sect_hdr) - 1] ^= 1; /* page 63 */
	refused(b, file_len, NULL, "section 4 (memory): checksum mismatch");
	memcpy(b, file, file_len);
	b[off + 2 * sizeof(struct vmm_snap_sect_hdr) + 9 + 1] ^= 1;
	refused(b, file_len, NULL, "section 1 (vCPU 0): checksum mismatch");
	free(b);
}

Test(snap_file, wrong_version_vendor_model_refused)
{
	struct vmm_snap_hdr *h   = file;
	struct vmm_snap_expect e = {.vendor = "GenuineIntel"};

	refused(file, file_len, &e, "header: taken on a AuthenticAMD host");
	e = (struct vmm_snap_expect){.pmu_model = "intel-v2"};
	refused(file, file_len, &e, "header: PMU model amd-v2");
	h->version = 2;
	refused(file, file_len, NULL, "header: format version 2");
	h->version = VMM_SNAP_VERSION;
	h->mem_size += VMM_SNAP_PAGE_SIZE; /* without resealing */
	refused(file, file_len, NULL, "header: checksum mismatch");
}

Test(snap_file, unfinished_file_refused)
{
	free(file);
	write_file(false);
	refused(file, file_len, NULL, "not finished");
}

/* A FIFO is refused at once: opening it must not wait for a writer. */
Test(snap_file, a_fifo_is_refused_at_once, .timeout = 10)
{
	char dir[] = "/tmp/vpmu_test_XXXXXX", fifo[64], err[256] = "";
	struct vmm_snap s;

	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(fifo, sizeof(fifo), "%s/snap", dir);
	cr_assert(eq(int, mkfifo(fifo, 0600), 0));
	cr_expect(eq(int, vmm_snap_open(fifo, NULL, &s, err, sizeof(err)),
		     -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "snap: not a regular file"), NULL)),
		  "%s", err);
	unlink(fifo);
	rmdir(dir);
}

Test(snap_file, open_names_the_file)
{
	struct vmm_snap s;
	char err[256] = "", path[] = "/tmp/snapXXXXXX";
	int fd = mkstemp(path);

	cr_assert(ge(int, fd, 0));
	cr_assert(eq(long, write(fd, file, 200), 200));
	close(fd);
	cr_assert(eq(int, vmm_snap_open(path, NULL, &s, err, sizeof(err)),
		     -EINVAL));
	cr_assert(not(eq(ptr, strstr(err, path), NULL)), "%s", err);
	cr_assert(not(eq(ptr, strstr(err, "section"), NULL)), "%s", err);
	unlink(path);
}
