// SPDX-License-Identifier: MIT
/*
 * config_disk.c: a folder given as a disk becomes a scratch ext4 image of
 * its files, made by e2fsprogs' mke2fs -d (no root needed, no mount), so
 * that a user's own programs reach a guest in one step:
 * `vpmu run --kernel ... --disk rootfs.ext4 --disk ./mine` (/dev/vdb).
 * What the guest writes there stays in the scratch image, which is gone
 * once the VMM opened it.
 */
#include "vm_config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm_config_priv.h"

#define IMAGE_FREE_BYTES (64ULL << 20) /* room for what the guest writes */
#define IMAGE_MIN_BYTES  (16ULL << 20)

static uint64_t tree_bytes; /* nftw() has no context argument */

static int add_bytes(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	/* Blocks and one inode's worth per entry, as ext4 will spend them. */
	tree_bytes += (uint64_t)st->st_blocks * 512 + 4096;
	return 0;
}

/* mke2fs -d (src) into the new file (img) of (bytes). */
static int make_image(const char *src, const char *img, uint64_t bytes,
		      char *err, size_t errlen)
{
	static char prog[] = "mke2fs", quiet[] = "-q", force[] = "-F",
		    type[] = "-t", ext4[] = "ext4", dir[] = "-d";
	char size[32], srcbuf[PATH_MAX], imgbuf[PATH_MAX];
	char *argv[] = {prog, quiet,  force,  type, ext4,
			dir,  srcbuf, imgbuf, size, NULL};
	posix_spawn_file_actions_t fa;
	int ret, status;
	pid_t pid;

	snprintf(size, sizeof(size), "%lluk",
		 (unsigned long long)(bytes >> 10));
	snprintf(srcbuf, sizeof(srcbuf), "%s", src);
	snprintf(imgbuf, sizeof(imgbuf), "%s", img);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					 O_WRONLY, 0);
	ret = posix_spawnp(&pid, "mke2fs", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		vmm_config_errf(err, errlen,
				"--disk %s: cannot run mke2fs (%s): install "
				"e2fsprogs",
				src, strerror(ret));
		return -ret;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		vmm_config_errf(err, errlen,
				"--disk %s: mke2fs could not make an image of "
				"it (status %d; its message is above)",
				src,
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		unlink(img);
		return -EIO;
	}
	return 0;
}

int vmm_config_disk_images(struct vmm_config *cfg, const char *dir, char *err,
			   size_t errlen)
{
	struct vmm_disk_config *d;
	char img[PATH_MAX];
	uint64_t bytes;
	unsigned int i;
	int fd, ret;

	for (i = 0; i < cfg->nr_disks; i++) {
		d = &cfg->disks[i];
		if (!d->from_dir)
			continue;
		tree_bytes = 0;
		if (nftw(d->path, add_bytes, 16, FTW_PHYS)) {
			vmm_config_errf(err, errlen, "--disk %s: %s", d->path,
					strerror(errno));
			return -errno;
		}
		bytes = tree_bytes + tree_bytes / 4 + IMAGE_FREE_BYTES;
		if (bytes < IMAGE_MIN_BYTES)
			bytes = IMAGE_MIN_BYTES;
		if ((size_t)snprintf(img, sizeof(img),
				     "%s/vpmu-disk%u-XXXXXX.ext4", dir,
				     i) >= sizeof(img)) {
			vmm_config_errf(err, errlen, "--disk %s: path too long",
					d->path);
			return -ENAMETOOLONG;
		}
		fd = mkstemps(img, strlen(".ext4"));
		if (fd < 0) {
			ret = -errno;
			vmm_config_errf(err, errlen,
					"--disk %s: cannot make an image in "
					"%s: %s",
					d->path, dir, strerror(-ret));
			return ret;
		}
		close(fd);
		ret = make_image(d->path, img, bytes, err, errlen);
		if (ret)
			return ret;
		snprintf(d->path, sizeof(d->path), "%s", img);
		d->from_dir          = false;
		d->remove_after_open = true;
	}
	return 0;
}
