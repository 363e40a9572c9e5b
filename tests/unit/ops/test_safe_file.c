// SPDX-License-Identifier: MIT
/*
 * test_safe_file.c: `vpmu record -o FILE` writes FILE.tmp without
 * following what another user planted there: a symlink
 * at FILE.tmp is replaced, never written through, and the record still
 * ends as FILE; a failed record leaves neither file.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_file.h"

static char dir[] = "/tmp/vpmu-safe-XXXXXX";
static char path[128], tmp[136], victim[128];

static void setup(void)
{
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(path, sizeof(path), "%s/t.rec", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert(eq(int, system(cmd), 0));
}

TestSuite(vmm_safe_file, .init = setup, .fini = teardown);

static void header(struct rec_header *h, struct rec_vm *vm)
{
	memset(h, 0, sizeof(*h));
	memset(vm, 0, sizeof(*vm));
	snprintf(h->event, sizeof(h->event), "hv_guest_cycles");
	h->period    = 1000;
	h->nr_events = 1;
	snprintf(h->events[0], sizeof(h->events[0]), "hv_guest_cycles");
	snprintf(vm->uuid, sizeof(vm->uuid),
		 "11111111-2222-3333-4444-555555555555");
	snprintf(vm->name, sizeof(vm->name), "a");
	snprintf(vm->image, sizeof(vm->image), "/x.elf");
	vm->nr_vcpus = 1;
	h->vms       = vm;
	h->nr_vms    = 1;
}

static void write_victim(void)
{
	FILE *f = fopen(victim, "w");

	cr_assert(f != NULL);
	fputs("precious\n", f);
	cr_assert(eq(int, fclose(f), 0));
}

static void expect_victim_intact(void)
{
	char buf[64] = "";
	FILE *f      = fopen(victim, "r");

	cr_assert(f != NULL);
	cr_expect(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	cr_expect(eq(str, buf, "precious\n"), "the symlink's target was "
					      "written");
}

/* Record three samples into (path); the read-back sample count. */
static unsigned int record_three(void)
{
	struct rec_sample s = {.nr_vals = 1};
	struct rec_header h, back;
	struct rec_writer w;
	struct rec_vm vm;
	char err[256];
	unsigned int i;

	header(&h, &vm);
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	for (i = 0; i < 3; i++) {
		s.ip = 0x1000 + i;
		cr_assert(eq(int, rec_sample(&w, &s), 0));
	}
	cr_assert(eq(int, rec_finish(&w, 0, 1, "done"), 0));
	cr_assert(
		eq(int, rec_read(path, &back, NULL, NULL, err, sizeof(err)), 0),
		"%s", err);
	rec_header_free(&back);
	return (unsigned int)w.samples;
}

Test(vmm_safe_file, planted_symlink_is_not_followed)
{
	struct stat st;

	write_victim();
	cr_assert(eq(int, symlink(victim, tmp), 0));
	cr_expect(eq(u32, record_three(), 3));
	expect_victim_intact();
	cr_expect(eq(int, lstat(path, &st), 0));
	cr_expect(eq(u32, st.st_mode & S_IFMT, S_IFREG), "FILE not regular");
	cr_expect(ne(int, lstat(tmp, &st), 0), "FILE.tmp left behind");
}

/* A dangling symlink must not create its target either. */
Test(vmm_safe_file, dangling_symlink_creates_nothing)
{
	cr_assert(eq(int, symlink(victim, tmp), 0));
	cr_expect(eq(u32, record_three(), 3));
	cr_expect(ne(int, access(victim, F_OK), 0), "target created");
}

/* A stale FILE.tmp of an earlier, killed record is replaced. */
Test(vmm_safe_file, stale_tmp_is_replaced)
{
	FILE *f = fopen(tmp, "w");

	cr_assert(f != NULL);
	fputs("half a record", f);
	fclose(f);
	cr_expect(eq(u32, record_three(), 3));
}

/*
 * The helper itself: a new regular file, opened for writing; what is in
 * the way is removed (unlinked, not followed); a path it cannot create
 * gives -errno.
 */
Test(vmm_safe_file, create_new_file)
{
	struct stat st;
	int fd;

	write_victim();
	cr_assert(eq(int, symlink(victim, tmp), 0));
	fd = ops_file_create_new(tmp);
	cr_assert(fd >= 0, "%s", strerror(-fd));
	cr_expect(eq(int, (int)write(fd, "x", 1), 1));
	cr_assert(eq(int, fstat(fd, &st), 0));
	cr_expect(eq(u32, st.st_mode & S_IFMT, S_IFREG));
	cr_expect(eq(int, (int)st.st_nlink, 1));
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	expect_victim_intact();
	cr_expect(eq(int, ops_file_create_new("/nonexistent/dir/f"), -ENOENT));
}

/* Abort: no FILE.tmp and no FILE. */
Test(vmm_safe_file, abort_removes_the_tmp)
{
	struct rec_header h;
	struct rec_writer w;
	struct rec_vm vm;

	header(&h, &vm);
	cr_assert(eq(int, symlink(victim, tmp), 0));
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	rec_abort(&w);
	cr_expect(ne(int, access(tmp, F_OK), 0));
	cr_expect(ne(int, access(path, F_OK), 0));
	cr_expect(ne(int, access(victim, F_OK), 0));
}
