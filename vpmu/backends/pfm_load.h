/* SPDX-License-Identifier: MIT */
/*
 * pfm_load.h: libpfm4, loaded with dlopen only where it is used.
 * The perf backend needs it for raw host-PMU events (their encoding and
 * their names from the host PMU's event table), which only a host with a
 * hardware PMU can count; the catalogue's generic events are the kernel's
 * own (perf_event.h) and need no library. So a VM on a host without a PMU
 * never maps libpfm4's 2.2 MB of relocated tables. Loading happens in
 * vpmu_perf_create(), before the VMM's threads enter their seccomp sandbox
 * (which refuses to open files).
 */
#ifndef VPMU_PFM_LOAD_H
#define VPMU_PFM_LOAD_H

/* the kernel's header first: libpfm4's copy then steps aside */
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

/* The libpfm4 calls the perf backend makes, resolved from libpfm.so.4. */
struct pfm_lib {
	pfm_err_t (*initialize)(void);
	const char *(*strerror)(int code);
	pfm_err_t (*get_os_event_encoding)(const char *str, int dfl_plm,
					   pfm_os_t os, void *args);
	pfm_err_t (*get_pmu_info)(pfm_pmu_t pmu, pfm_pmu_info_t *out);
	int (*get_event_next)(int idx);
	pfm_err_t (*get_event_info)(int idx, pfm_os_t os,
				    pfm_event_info_t *out);
	pfm_err_t (*get_event_attr_info)(int eidx, int aidx, pfm_os_t os,
					 pfm_event_attr_info_t *out);
};

/*
 * Load and initialize libpfm4 once per process (later calls return the
 * same result). The table, or NULL with (*why) set to a static message
 * (dlopen's or libpfm4's error).
 */
const struct pfm_lib *pfm_lib_load(const char **why);

#endif /* VPMU_PFM_LOAD_H */
