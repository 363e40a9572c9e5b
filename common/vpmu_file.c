// SPDX-License-Identifier: MIT
/*
 * vpmu_file.c: see vpmu_file.h.
 */
#include "vpmu_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vpmu_common.h"

const char *vpmu_file_kind(unsigned int st_mode)
{
	switch (st_mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	}
	return "not a file";
}

int vpmu_file_open(const char *path, int oflags, unsigned int accept,
		   struct stat *st, char *err, size_t errlen)
{
	struct stat own;
	int fd, fl, ret;

	if (!st)
		st = &own;
	fd = open(path, oflags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return vpmu_fail(err, errlen, -errno, "%s: %s", path,
				 strerror(errno));
	if (fstat(fd, st) < 0) {
		ret = vpmu_fail(err, errlen, -errno, "%s: %s", path,
				strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st->st_mode) &&
	    !(S_ISBLK(st->st_mode) && (accept & VPMU_FILE_OR_BLOCKDEV))) {
		ret = vpmu_fail(err, errlen, -EINVAL,
				"%s: not a regular file%s (it is %s)", path,
				accept & VPMU_FILE_OR_BLOCKDEV
					? " or a block device"
					: "",
				vpmu_file_kind(st->st_mode));
		goto out_close;
	}
	/* Reads of the file itself should wait for the disk as usual. */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		ret = vpmu_fail(err, errlen, -errno, "%s: %s", path,
				strerror(errno));
		goto out_close;
	}
	return fd;
out_close:
	close(fd);
	return ret;
}
