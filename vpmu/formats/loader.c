// SPDX-License-Identifier: MIT
/*
 * loader.c: run-time sampling formats (spec §3.5, §3.5.8, §3.5.9) from
 * shared objects, the VMM's equivalent of perfmon2's format modules. Each
 * object exports one struct vpmu_format_desc (vpmu/vpmu_format.h), checked
 * here (version, size) and by the registry (fields, UUID unique) before
 * it is used. Every refusal is one message that names the file.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats_priv.h"

/* The first version of the descriptor: what every object must carry. */
#define DESC_SIZE_VER1 sizeof(struct vpmu_format_desc)

static int check_desc(const struct vpmu_format_desc *d, const char *path,
		      char *err, size_t errlen)
{
	if (d->abi_version != VPMU_FORMAT_ABI_VERSION) {
		snprintf(err, errlen,
			 "%s: format ABI version %u, this vpmu loads version "
			 "%u",
			 path, d->abi_version, VPMU_FORMAT_ABI_VERSION);
		return -EINVAL;
	}
	if (d->desc_size < DESC_SIZE_VER1) {
		snprintf(err, errlen,
			 "%s: descriptor of %u bytes, version %u has %zu", path,
			 d->desc_size, VPMU_FORMAT_ABI_VERSION, DESC_SIZE_VER1);
		return -EINVAL;
	}
	return 0;
}

int vpmu_format_load(const char *path, char *err, size_t errlen)
{
	const struct vpmu_format_desc *d;
	char why[384];
	void *h;
	int ret;

	/* RTLD_LOCAL: one object's symbols never resolve another's. */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s: cannot load: %s", path, dlerror());
		return -ENOEXEC;
	}
	d = dlsym(h, VPMU_FORMAT_SYMBOL);
	if (!d) {
		snprintf(err, errlen, "%s: no '%s' symbol: not a vpmu format",
			 path, VPMU_FORMAT_SYMBOL);
		ret = -EINVAL;
		goto out_close;
	}
	ret = check_desc(d, path, err, errlen);
	if (ret)
		goto out_close;
	ret = vpmu_smpl_fmt_register(&d->fmt, h, path, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out_close;
	}
	return 0;

out_close:
	dlclose(h);
	return ret;
}

static int is_object(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 3 && strcmp(e->d_name + n - 3, ".so") == 0;
}

int vpmu_format_load_dir(const char *dir, vpmu_format_err_fn fn, void *opaque)
{
	char path[4096], msg[512];
	struct dirent **ents;
	int i, n, loaded = 0;

	n = scandir(dir, &ents, is_object, alphasort);
	if (n < 0) {
		int e = errno;

		snprintf(msg, sizeof(msg), "format directory %s: %s", dir,
			 strerror(e));
		if (fn)
			fn(opaque, msg);
		return -e;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (vpmu_format_load(path, msg, sizeof(msg)) == 0)
			loaded++;
		else if (fn)
			fn(opaque, msg);
		free(ents[i]);
	}
	free(ents);
	return loaded;
}

int vpmu_format_unload(const uint8_t uuid[16])
{
	void *h = NULL;
	int ret = vpmu_smpl_fmt_unregister(uuid, &h);

	if (!ret && h)
		dlclose(h);
	return ret;
}
