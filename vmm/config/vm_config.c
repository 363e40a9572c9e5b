// SPDX-License-Identifier: MIT
/*
 * vm_config.c: VM configuration defaults, size parsing and validation.
 *
 * Owns the checks shared by the command line (config_cli.c) and the libvirt
 * domain XML reader (config_xml.c), so that both report a bad value with the
 * same words and differ only in where they say it came from.
 */
#include "vm_config.h"
#include "vpmu_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vm_config_priv.h"

#define PMU_MODELS "auto, intel-v2, amd-core, amd-v2, none"

static const char *const pmu_models[] = {
	"auto", "intel-v2", "amd-core", "amd-v2", "none",
};

/* Binary size suffixes, matched case-insensitively. */
static const struct {
	const char *suffix;
	unsigned int shift;
} size_suffixes[] = {
	{"b", 0},    {"k", 10},   {"kib", 10}, {"m", 20},   {"mib", 20},
	{"g", 30},   {"gib", 30}, {"t", 40},   {"tib", 40}, {"p", 50},
	{"pib", 50}, {"e", 60},   {"eib", 60},
};

void vmm_config_defaults(struct vmm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mem_size = VMM_MEM_DEFAULT;
	cfg->nr_vcpus = 1;
	strcpy(cfg->pmu_model, "auto");
	cfg->limits.max_contexts     = VMM_LIMIT_CONTEXTS;
	cfg->limits.max_sets         = VMM_LIMIT_SETS;
	cfg->limits.max_smpl_mem     = VMM_LIMIT_SMPL_MEM;
	cfg->limits.max_msgs         = VMM_LIMIT_MSGS;
	cfg->limits.max_arg_size     = VMM_LIMIT_ARG_SIZE;
	cfg->limits.max_smpl_rate    = VMM_LIMIT_SMPL_RATE;
	cfg->limits.max_overhead_pct = VMM_LIMIT_OVERHEAD;
}

void vmm_config_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int vmm_config_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!text || !*text)
		return -EINVAL;
	for (p = text; *p; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int vmm_config_parse_size(const char *text, uint64_t *out)
{
	const char *p = text;
	char digits[32];
	unsigned int shift = 0;
	uint64_t v;
	size_t n, i;
	int ret;

	if (!text)
		return -EINVAL;
	while (*p >= '0' && *p <= '9')
		p++;
	n = (size_t)(p - text);
	if (n == 0)
		return -EINVAL;
	if (n >= sizeof(digits))
		return -ERANGE; /* 31 digits are far beyond 64 bits */
	memcpy(digits, text, n);
	digits[n] = '\0';
	if (*p) {
		for (i = 0; i < ARRAY_SIZE(size_suffixes); i++) {
			if (strcasecmp(p, size_suffixes[i].suffix) == 0)
				break;
		}
		if (i == ARRAY_SIZE(size_suffixes))
			return -EINVAL;
		shift = size_suffixes[i].shift;
	}
	ret = vmm_config_parse_u64(digits, UINT64_MAX >> shift, &v);
	if (ret)
		return ret;
	*out = v << shift;
	return 0;
}

/* "64 MiB", "4100 KiB", "12345 bytes": exact, in the largest whole unit. */
static void format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB",
					    "TiB",   "PiB", "EiB"};
	unsigned int u                   = 0;

	while (u + 1 < ARRAY_SIZE(units) && bytes && (bytes & 1023) == 0) {
		bytes >>= 10;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)bytes, units[u]);
}

int vmm_config_check_vcpus(const char *where, const char *text,
			   unsigned int *out, char *err, size_t errlen)
{
	uint64_t v;

	if (vmm_config_parse_u64(text, VMM_VCPUS_MAX, &v) || v == 0) {
		vmm_config_errf(err, errlen,
				"%s: '%s' is not a vCPU count (1..%d)", where,
				text, VMM_VCPUS_MAX);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

int vmm_config_check_mem(const char *where, uint64_t bytes, char *err,
			 size_t errlen)
{
	char got[48], lim[48];

	format_size(bytes, got, sizeof(got));
	if (bytes % 4096) {
		vmm_config_errf(err, errlen,
				"%s: %s is not a multiple of 4 KiB", where,
				got);
		return -EINVAL;
	}
	if (bytes < VMM_MEM_MIN) {
		format_size(VMM_MEM_MIN, lim, sizeof(lim));
		vmm_config_errf(err, errlen,
				"%s: %s is less than the minimum, %s", where,
				got, lim);
		return -EINVAL;
	}
	if (bytes > VMM_MEM_MAX) {
		format_size(VMM_MEM_MAX, lim, sizeof(lim));
		vmm_config_errf(err, errlen,
				"%s: %s is more than the maximum, %s", where,
				got, lim);
		return -EINVAL;
	}
	return 0;
}

int vmm_config_check_name(const char *where, const char *name, char *err,
			  size_t errlen)
{
	size_t len = strlen(name), i;

	if (len == 0 || len >= VMM_NAME_MAX) {
		vmm_config_errf(err, errlen,
				"%s: a name has 1 to %d characters, not %zu",
				where, VMM_NAME_MAX - 1, len);
		return -EINVAL;
	}
	/* The name becomes part of a control socket path: keep it plain. */
	i = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789._-");
	if (i != len) {
		vmm_config_errf(err, errlen,
				"%s: '%s' contains '%c'; a name uses only "
				"A-Z a-z 0-9 . _ -",
				where, name, name[i]);
		return -EINVAL;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		vmm_config_errf(err, errlen, "%s: '%s' is not a usable name",
				where, name);
		return -EINVAL;
	}
	return 0;
}

int vmm_config_check_pmu_model(const char *where, const char *model, char *err,
			       size_t errlen)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmu_models); i++) {
		if (strcmp(model, pmu_models[i]) == 0)
			return 0;
	}
	vmm_config_errf(err, errlen, "%s: '%s' is not a PMU model (%s)", where,
			model, PMU_MODELS);
	return -EINVAL;
}

int vmm_config_copy_str(const char *where, char *dst, size_t dstlen,
			const char *src, char *err, size_t errlen)
{
	size_t len = strlen(src);

	if (len >= dstlen) {
		vmm_config_errf(err, errlen,
				"%s: value is too long (%zu bytes, max %zu)",
				where, len, dstlen - 1);
		return -EINVAL;
	}
	memcpy(dst, src, len + 1);
	return 0;
}

int vmm_config_add_disk(const char *where, struct vmm_config *cfg,
			const char *path, bool read_only, char *err,
			size_t errlen)
{
	struct vmm_disk_config *d;
	struct stat st;

	if (cfg->nr_disks >= VMM_DISKS_MAX) {
		vmm_config_errf(err, errlen, "%s: more than %u disks", where,
				VMM_DISKS_MAX);
		return -EINVAL;
	}
	d = &cfg->disks[cfg->nr_disks];
	if (vmm_config_copy_str(where, d->path, sizeof(d->path), path, err,
				errlen))
		return -EINVAL;
	if (!path[0] || stat(path, &st)) {
		vmm_config_errf(err, errlen, "%s: '%s': %s", where, path,
				path[0] ? strerror(errno) : "no file named");
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode)) { /* the files of a scratch image */
		if (access(path, R_OK | X_OK)) {
			vmm_config_errf(err, errlen, "%s: '%s': %s", where,
					path, strerror(errno));
			return -EINVAL;
		}
		d->read_only = read_only;
		d->from_dir  = true;
		cfg->nr_disks++;
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		vmm_config_errf(err, errlen,
				"%s: '%s' is not a file, a block device or a "
				"folder",
				where, path);
		return -EINVAL;
	}
	if (access(path, read_only ? R_OK : R_OK | W_OK)) {
		vmm_config_errf(err, errlen, "%s: '%s': %s%s", where, path,
				strerror(errno),
				read_only ? ""
					  : " (',ro' attaches it read-only)");
		return -EINVAL;
	}
	d->read_only = read_only;
	cfg->nr_disks++;
	return 0;
}

static int check_limits(const struct vmm_pmu_limits *l, char *err,
			size_t errlen)
{
	const char *bad = NULL;

	if (!l->max_contexts)
		bad = "contexts";
	else if (!l->max_sets)
		bad = "sets";
	else if (!l->max_smpl_mem)
		bad = "smpl-mem";
	else if (!l->max_msgs)
		bad = "queue-depth";
	else if (!l->max_arg_size)
		bad = "arg-size";
	if (bad) {
		vmm_config_errf(err, errlen, "PMU limit '%s' must be > 0", bad);
		return -EINVAL;
	}
	if (!l->max_smpl_rate || l->max_smpl_rate > VMM_SMPL_RATE_CAP ||
	    !l->max_overhead_pct || l->max_overhead_pct > 100) {
		vmm_config_errf(err, errlen,
				"sampling limits: max-rate %u is not 1 to %u "
				"Hz or max-overhead %u not 1 to 100 %%",
				l->max_smpl_rate, VMM_SMPL_RATE_CAP,
				l->max_overhead_pct);
		return -EINVAL;
	}
	return 0;
}

int vmm_config_validate(const struct vmm_config *cfg, char *err, size_t errlen)
{
	char nr[24];
	unsigned int n;
	int ret;

	ret = vmm_config_check_mem("memory", cfg->mem_size, err, errlen);
	if (ret)
		return ret;
	snprintf(nr, sizeof(nr), "%u", cfg->nr_vcpus);
	ret = vmm_config_check_vcpus("vcpus", nr, &n, err, errlen);
	if (ret)
		return ret;
	if (!cfg->image[0]) {
		vmm_config_errf(err, errlen, "no guest image given");
		return -EINVAL;
	}
	if (memchr(cfg->name, '\0', sizeof(cfg->name)) == NULL) {
		vmm_config_errf(err, errlen, "name: not terminated");
		return -EINVAL;
	}
	if (cfg->name[0]) {
		ret = vmm_config_check_name("name", cfg->name, err, errlen);
		if (ret)
			return ret;
	}
	if (memchr(cfg->pmu_model, '\0', sizeof(cfg->pmu_model)) == NULL) {
		vmm_config_errf(err, errlen, "pmu model: not terminated");
		return -EINVAL;
	}
	ret = vmm_config_check_pmu_model("pmu model", cfg->pmu_model, err,
					 errlen);
	if (ret)
		return ret;
	if (cfg->nr_disks > VMM_DISKS_MAX) {
		vmm_config_errf(err, errlen, "more than %u disks",
				VMM_DISKS_MAX);
		return -EINVAL;
	}
	for (n = 0; n < cfg->nr_disks; n++) {
		if (!memchr(cfg->disks[n].path, '\0',
			    sizeof(cfg->disks[n].path))) {
			vmm_config_errf(err, errlen, "disk %u: not terminated",
					n);
			return -EINVAL;
		}
	}
	return check_limits(&cfg->limits, err, errlen);
}

int vmm_config_installed_format_dir(char *dir, size_t len)
{
	char exe[PATH_MAX], rel[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;
	char *slash;

	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash  = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", exe,
			     VPMU_FORMATS_RELDIR) >= sizeof(rel))
		return -ENAMETOOLONG;
	/* Resolved, so that messages name the folder plainly. */
	if (!realpath(rel, real) || stat(real, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	if ((size_t)snprintf(dir, len, "%s", real) >= len)
		return -ENAMETOOLONG;
	return 0;
}
