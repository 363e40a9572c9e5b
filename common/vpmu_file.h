/* SPDX-License-Identifier: MIT */
/*
 * vpmu_file.h: open a file a user named (a guest image, --kernel,
 * --initrd, a disk, a snapshot, a configuration, a record, a symbol file,
 * a TLS certificate) without letting what the name points to hang or
 * surprise the program. The open is non-blocking, so a FIFO with no writer
 * (or a device that waits for carrier) returns at once; fstat() then
 * refuses anything but a regular file (or a block device, where the caller
 * accepts one) with one message naming the path and what it is; the
 * descriptor is then switched back to blocking reads.
 *
 * Symbolic links are followed: a user's name for an image is often one,
 * and the kind check applies to what it points to. (Files vpmu creates
 * under a guessable name are another matter: ops/client's
 * ops_file_create_new.)
 */
#ifndef VPMU_FILE_H
#define VPMU_FILE_H

#include <stddef.h>

struct stat;

/* (accept) of vpmu_file_open: a block device is fine too (disks). */
#define VPMU_FILE_OR_BLOCKDEV 0x1

/*
 * Open (path) with (oflags) (O_RDONLY or O_RDWR; O_CLOEXEC and O_NOCTTY
 * are added). Returns the descriptor and, when (st) is not NULL, its
 * fstat() there; or -errno with "PATH: why" in (err): -ENOENT etc. from
 * open(), -EINVAL for a path that is not a regular file ("PATH: not a
 * regular file (it is a FIFO)").
 */
int vpmu_file_open(const char *path, int oflags, unsigned int accept,
		   struct stat *st, char *err, size_t errlen);

/* "a FIFO", "a directory", ... for an st_mode (messages). */
const char *vpmu_file_kind(unsigned int st_mode);

#endif /* VPMU_FILE_H */
