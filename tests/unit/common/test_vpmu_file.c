// SPDX-License-Identifier: MIT
/*
 * test_vpmu_file.c: vpmu_file_open() gives a regular file (or a block
 * device, where asked) as a blocking descriptor, and refuses at once, with
 * one message naming the path and what it is, a FIFO (which a blocking open
 * would wait on for ever), a directory and a character device.
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

#include <vpmu_file.h>

static char dir[] = "/tmp/vpmu-file-XXXXXX";
static char path[128];
static char err[256];

static void setup(void)
{
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(path, sizeof(path), "%s/f", dir);
	err[0] = '\0';
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

TestSuite(common_file, .init = setup, .fini = teardown);

/* (p) is refused with -EINVAL and "p: not a regular file... (it is WHAT)". */
static void refused(const char *p, unsigned int accept, const char *what)
{
	char want[256];

	cr_assert(
		eq(int,
		   vpmu_file_open(p, O_RDONLY, accept, NULL, err, sizeof(err)),
		   -EINVAL));
	snprintf(want, sizeof(want), "%s: not a regular file", p);
	cr_expect(eq(int, strncmp(err, want, strlen(want)), 0), "%s", err);
	snprintf(want, sizeof(want), "(it is %s)", what);
	cr_expect(not(eq(ptr, strstr(err, want), NULL)), "%s", err);
}

Test(common_file, fifo_is_refused_at_once, .timeout = 10)
{
	cr_assert(eq(int, mkfifo(path, 0600), 0));
	refused(path, 0, "a FIFO");
	refused(path, VPMU_FILE_OR_BLOCKDEV, "a FIFO");
}

Test(common_file, directory_and_char_device_are_refused)
{
	refused(dir, 0, "a directory");
	refused("/dev/null", 0, "a character device");
	refused("/dev/null", VPMU_FILE_OR_BLOCKDEV, "a character device");
	cr_expect(not(eq(ptr, strstr(err, "or a block device"), NULL)), "%s",
		  err);
}

Test(common_file, missing_file_says_why)
{
	cr_assert(eq(int,
		     vpmu_file_open(path, O_RDONLY, 0, NULL, err, sizeof(err)),
		     -ENOENT));
	cr_expect(not(eq(ptr, strstr(err, "No such file"), NULL)), "%s", err);
	cr_expect(eq(int, strncmp(err, path, strlen(path)), 0), "%s", err);
}

/* A regular file, also through a symlink: blocking, close-on-exec, sized. */
Test(common_file, regular_file_is_opened_blocking)
{
	char link[160];
	struct stat st;
	FILE *f;
	int fd;

	f = fopen(path, "w");
	cr_assert(not(eq(ptr, f, NULL)));
	fputs("data\n", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/l", dir);
	cr_assert(eq(int, symlink(path, link), 0));
	fd = vpmu_file_open(link, O_RDWR, 0, &st, err, sizeof(err));
	unlink(link);
	cr_assert(not(lt(int, fd, 0)), "%s", err);
	cr_expect(eq(i64, (int64_t)st.st_size, 5));
	cr_expect(eq(int, fcntl(fd, F_GETFL) & O_NONBLOCK, 0));
	cr_expect(eq(int, fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC));
	cr_expect(eq(sz, (size_t)write(fd, "x", 1), (size_t)1));
	close(fd);
}
