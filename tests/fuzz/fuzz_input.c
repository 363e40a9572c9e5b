// SPDX-License-Identifier: MIT
/*
 * fuzz_input.c: the in-memory file and the input cursor of fuzz_input.h.
 */
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

bool fuzz_replaying;

static int memfd = -1;
static char path[64];
static size_t file_size; /* what the file holds now */

const char *fuzz_file(const void *data, size_t size)
{
	if (memfd < 0) {
		memfd = memfd_create("vpmu-fuzz", MFD_CLOEXEC);
		if (memfd < 0) {
			perror("fuzz: memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	/* Truncated only when shorter: one system call for most inputs. */
	if ((size && pwrite(memfd, data, size, 0) != (ssize_t)size) ||
	    (size < file_size && ftruncate(memfd, (off_t)size))) {
		perror("fuzz: writing the input file");
		abort();
	}
	file_size = size;
	return path;
}

uint64_t fuzz_take(struct fuzz_in *in, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n && in->left; i++, in->left--)
		v |= (uint64_t)*in->p++ << (8 * i);
	return v;
}
