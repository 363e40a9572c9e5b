// SPDX-License-Identifier: MIT
/*
 * safe_file.c: create a file under a name someone else may have prepared
 * (see record_file.h). `vpmu record -o FILE` writes FILE.tmp, a name any
 * user with write access to the directory can guess: a symlink planted
 * there must not redirect the write to a file of the recording user.
 */
#include "record_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ops_file_create_new(const char *path)
{
	int fd;

	/*
	 * unlink() removes a symlink itself, never its target. In a sticky
	 * directory (/tmp) another user's file cannot be removed; O_EXCL
	 * then fails with EEXIST rather than writing anywhere.
	 */
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0666);
	return fd < 0 ? -errno : fd;
}
