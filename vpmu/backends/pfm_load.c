// SPDX-License-Identifier: MIT
/*
 * pfm_load.c: libpfm4 through dlopen (see pfm_load.h), resolved by a table
 * of symbol names and the slots they fill.
 */
#include "pfm_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define PFM_SONAME "libpfm.so.4"

static const struct {
	const char *name;
	size_t off; /* of its slot in struct pfm_lib */
} syms[] = {
	{"pfm_initialize", offsetof(struct pfm_lib, initialize)},
	{"pfm_strerror", offsetof(struct pfm_lib, strerror)},
	{"pfm_get_os_event_encoding",
	 offsetof(struct pfm_lib, get_os_event_encoding)},
	{"pfm_get_pmu_info", offsetof(struct pfm_lib, get_pmu_info)},
	{"pfm_get_event_next", offsetof(struct pfm_lib, get_event_next)},
	{"pfm_get_event_info", offsetof(struct pfm_lib, get_event_info)},
	{"pfm_get_event_attr_info",
	 offsetof(struct pfm_lib, get_event_attr_info)},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct pfm_lib lib;
static const struct pfm_lib *loaded;
static char why_buf[256];

static void load(void)
{
	void *h = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);
	unsigned int i;
	void *fn;
	int err;

	if (!h) {
		snprintf(why_buf, sizeof(why_buf), "libpfm4: %s", dlerror());
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		fn = dlsym(h, syms[i].name);
		if (!fn) {
			snprintf(why_buf, sizeof(why_buf),
				 "libpfm4: %s: no symbol %s", PFM_SONAME,
				 syms[i].name);
			dlclose(h);
			return;
		}
		/* POSIX: dlsym's void * holds the function's address */
		memcpy((char *)&lib + syms[i].off, &fn, sizeof(fn));
	}
	/* Never unloaded: idempotent and process-wide, as libpfm4 is. */
	err = lib.initialize();
	if (err != PFM_SUCCESS) {
		snprintf(why_buf, sizeof(why_buf), "libpfm4 initialization: %s",
			 lib.strerror(err));
		return;
	}
	loaded = &lib;
}

const struct pfm_lib *pfm_lib_load(const char **why)
{
	pthread_once(&once, load);
	*why = loaded ? NULL : why_buf;
	return loaded;
}
