// SPDX-License-Identifier: MIT
/*
 * kvmstat.c: the kvmstat backend (see kvmstat.h).
 *
 * A stats file is: a header (struct kvm_stats_header) giving the number of
 * descriptors and the offsets of the id string, the descriptors and the
 * data block; descriptors of sizeof(struct kvm_stats_desc) + name_size
 * bytes each (flags, exponent, size in u64s, offset in the data block,
 * NUL-terminated name); and the data block of u64 values. The layout is
 * the same for every vCPU of a VM; it is checked per vCPU anyway.
 *
 * Reads: a pread of 8 bytes costs as much as one of the whole data block
 * (about 1 KiB; both are one system call), so each vCPU keeps the block
 * read at the last run time it was asked for, and every event of that
 * vCPU read at the same run time uses it: N events, one system call per
 * exit. The statistics cannot change while run time stands still, because
 * KVM updates them only inside KVM_RUN, which the VMM counts as run time;
 * events that happen after the cached read are seen at the next run time.
 */
#include "kvmstat.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <pvpmu/catalog.h>

#define KVMSTAT_MAX_EVENTS 256  /* the umask byte of PVPMU_EV_KVMSTAT */
#define KVMSTAT_MAX_DESC   4096 /* sanity bound on the header */
#define KVMSTAT_MAX_NAME   4096
#define KVMSTAT_MAX_CPUS   4096 /* as vpmu_cpu_create() */
#define KVMSTAT_MAX_DATA   (1U << 20)
#define KVMSTAT_PREFIX     "kvmstat:"

struct kstat {
	char *name;      /* "kvmstat:<kvm name>" */
	char *desc;      /* one line: kind and unit */
	uint32_t offset; /* byte offset in the data block */
};

/* One vCPU's stats file and its last data block. */
struct kcpu {
	int fd;         /* -1 until opened */
	bool has_block; /* block holds the values at run time block_ns */
	uint64_t block_ns;
	uint64_t *block;
};

struct vpmu_kvmstat {
	struct vpmu_kvmstat_source src;
	bool discovered;
	struct kvm_stats_header hdr; /* of vCPU 0, the reference layout */
	struct kstat stats[KVMSTAT_MAX_EVENTS];
	unsigned int nr_stats;
	uint32_t data_size; /* bytes of the data block */
	struct kcpu *cpus;  /* per vCPU, by index */
	unsigned int nr_cpus;
	char reason[160];
};

int vpmu_kvmstat_create(const struct vpmu_kvmstat_source *src,
			struct vpmu_kvmstat **out)
{
	struct vpmu_kvmstat *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->src = *src;
	*out   = k;
	return 0;
}

void vpmu_kvmstat_destroy(struct vpmu_kvmstat *k)
{
	unsigned int i;

	if (!k)
		return;
	for (i = 0; i < k->nr_cpus; i++) {
		if (k->cpus[i].fd >= 0)
			close(k->cpus[i].fd);
		free(k->cpus[i].block);
	}
	for (i = 0; i < k->nr_stats; i++) {
		free(k->stats[i].name);
		free(k->stats[i].desc);
	}
	free(k->cpus);
	free(k);
}

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Create the stats file of vCPU (cpu); returns the fd or -errno. */
static int stats_fd(struct vpmu_kvmstat *k, uint32_t cpu)
{
	int vfd = k->src.vcpu_fd(k->src.opaque, cpu), fd;

	if (vfd < 0)
		return -ENODEV;
	fd = ioctl(vfd, KVM_GET_STATS_FD, NULL);
	return fd < 0 ? -errno : fd;
}

static bool header_ok(const struct kvm_stats_header *h)
{
	return h->num_desc <= KVMSTAT_MAX_DESC &&
	       h->name_size <= KVMSTAT_MAX_NAME && h->name_size > 0;
}

/* "count", "ns", "bytes"...: the unit of a statistic's value. */
static void unit_text(uint32_t flags, int16_t exp, char *buf, size_t len)
{
	static const char *const units[] = {"count", "bytes", "s", "cycles"};
	uint32_t unit = (flags & KVM_STATS_UNIT_MASK) >> KVM_STATS_UNIT_SHIFT;
	bool pow2     = (flags & KVM_STATS_BASE_MASK) == KVM_STATS_BASE_POW2;

	if (unit == KVM_STATS_UNIT_SECONDS >> KVM_STATS_UNIT_SHIFT && !pow2 &&
	    (exp == -9 || exp == -6 || exp == -3)) {
		snprintf(buf, len, "%s",
			 exp == -9   ? "ns"
			 : exp == -6 ? "us"
				     : "ms");
		return;
	}
	if (exp == 0)
		snprintf(buf, len, "%s", units[unit]);
	else
		snprintf(buf, len, "%s x %d^%d", units[unit], pow2 ? 2 : 10,
			 exp);
}

/* Whether descriptor (d) is a monotonic 64-bit counter (see kvmstat.h). */
static bool is_counter(const struct kvm_stats_desc *d)
{
	uint32_t type = d->flags & KVM_STATS_TYPE_MASK;
	uint32_t unit = d->flags & KVM_STATS_UNIT_MASK;

	return type == KVM_STATS_TYPE_CUMULATIVE && d->size == 1 &&
	       unit <= KVM_STATS_UNIT_CYCLES;
}

static int add_stat(struct vpmu_kvmstat *k, const struct kvm_stats_desc *d,
		    size_t name_size)
{
	struct kstat *s = &k->stats[k->nr_stats];
	char unit[32];
	size_t nlen = strnlen(d->name, name_size);

	unit_text(d->flags, d->exponent, unit, sizeof(unit));
	s->name = malloc(sizeof(KVMSTAT_PREFIX) + nlen);
	s->desc = malloc(nlen + 64);
	if (!s->name || !s->desc) {
		free(s->name);
		free(s->desc);
		return -ENOMEM;
	}
	snprintf(s->name, sizeof(KVMSTAT_PREFIX) + nlen, KVMSTAT_PREFIX "%.*s",
		 (int)nlen, d->name);
	snprintf(s->desc, nlen + 64, "KVM statistic %.*s of the vCPU (%s)",
		 (int)nlen, d->name, unit);
	s->offset = d->offset; /* bytes from the data block */
	k->nr_stats++;
	return 0;
}

/* Read the descriptors of (fd) and keep the counters among them. */
static int parse_descriptors(struct vpmu_kvmstat *k, int fd)
{
	size_t dsz = sizeof(struct kvm_stats_desc) + k->hdr.name_size;
	char *buf  = malloc(dsz * k->hdr.num_desc + 1);
	unsigned int i;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = pread_all(fd, buf, dsz * k->hdr.num_desc, k->hdr.desc_offset);
	for (i = 0; !ret && i < k->hdr.num_desc; i++) {
		const struct kvm_stats_desc *d = (const void *)(buf + i * dsz);
		uint64_t end = d->offset + (uint64_t)d->size * sizeof(uint64_t);

		if (end > KVMSTAT_MAX_DATA || d->offset % sizeof(uint64_t))
			ret = -EPROTO;
		else if (end > k->data_size)
			k->data_size = (uint32_t)end;
		if (!ret && is_counter(d) && k->nr_stats < KVMSTAT_MAX_EVENTS)
			ret = add_stat(k, d, k->hdr.name_size);
	}
	free(buf);
	return ret;
}

/* Record (fd) as vCPU (cpu)'s stats file, with room for its block. */
static int set_cpu(struct vpmu_kvmstat *k, uint32_t cpu, int fd)
{
	uint64_t *block = malloc(k->data_size ? k->data_size : 1);
	struct kcpu *cpus;

	if (!block)
		return -ENOMEM;
	if (cpu >= k->nr_cpus) {
		cpus = realloc(k->cpus, (cpu + 1) * sizeof(*cpus));
		if (!cpus) {
			free(block);
			return -ENOMEM;
		}
		k->cpus = cpus;
		while (k->nr_cpus <= cpu)
			k->cpus[k->nr_cpus++] = (struct kcpu){.fd = -1};
	}
	k->cpus[cpu] = (struct kcpu){.fd = fd, .block = block};
	return 0;
}

/*
 * Discover the statistics from vCPU 0 (once; a failure is retried on the
 * next call and leaves its reason in k->reason).
 */
static int discover(struct vpmu_kvmstat *k)
{
	int fd, ret;

	if (k->discovered)
		return 0;
	fd = stats_fd(k, 0);
	if (fd == -ENODEV) {
		snprintf(k->reason, sizeof(k->reason),
			 "no KVM vCPU to read statistics from (no VM)");
		return fd;
	}
	if (fd < 0) {
		snprintf(k->reason, sizeof(k->reason),
			 "KVM_GET_STATS_FD on vCPU 0: %s", strerror(-fd));
		return fd;
	}
	ret = pread_all(fd, &k->hdr, sizeof(k->hdr), 0);
	if (!ret && !header_ok(&k->hdr))
		ret = -EPROTO;
	if (!ret)
		ret = parse_descriptors(k, fd);
	if (!ret)
		ret = set_cpu(k, 0, fd);
	if (ret) {
		snprintf(k->reason, sizeof(k->reason),
			 "KVM stats file of vCPU 0 unreadable: %s",
			 strerror(-ret));
		close(fd);
		k->data_size = 0;
		while (k->nr_stats) {
			k->nr_stats--;
			free(k->stats[k->nr_stats].name);
			free(k->stats[k->nr_stats].desc);
		}
		return ret;
	}
	k->discovered = true;
	return 0;
}

/* Open and check the stats file of vCPU (cpu) on first use. */
static int open_cpu(struct vpmu_kvmstat *k, uint32_t cpu)
{
	struct kvm_stats_header h;
	int fd, ret;

	if (cpu < k->nr_cpus && k->cpus[cpu].fd >= 0)
		return 0;
	if (cpu >= KVMSTAT_MAX_CPUS)
		return -EINVAL;
	fd = stats_fd(k, cpu);
	if (fd < 0)
		return fd;
	ret = pread_all(fd, &h, sizeof(h), 0);
	/* The layout comes from vCPU 0: every vCPU must share it. */
	if (!ret && (h.num_desc != k->hdr.num_desc ||
		     h.desc_offset != k->hdr.desc_offset ||
		     h.data_offset != k->hdr.data_offset ||
		     h.name_size != k->hdr.name_size))
		ret = -EPROTO;
	if (!ret)
		ret = set_cpu(k, cpu, fd);
	if (ret)
		close(fd);
	return ret;
}

static const struct kstat *stat_of(struct vpmu_kvmstat *k, uint16_t code)
{
	if (PVPMU_EV_EVENT(code) != PVPMU_EV_EVENT(PVPMU_EV_KVMSTAT(0)))
		return NULL;
	if (discover(k) || PVPMU_EV_UMASK(code) >= k->nr_stats)
		return NULL;
	return &k->stats[PVPMU_EV_UMASK(code)];
}

const char *vpmu_kvmstat_unavailable_reason(struct vpmu_kvmstat *k,
					    uint16_t code)
{
	if (PVPMU_EV_EVENT(code) != PVPMU_EV_EVENT(PVPMU_EV_KVMSTAT(0)))
		return "not a KVM statistic (event 0xe2)";
	if (discover(k))
		return k->reason;
	if (PVPMU_EV_UMASK(code) >= k->nr_stats) {
		snprintf(k->reason, sizeof(k->reason),
			 "the host KVM has %u counter statistics (0..%u)",
			 k->nr_stats, k->nr_stats ? k->nr_stats - 1 : 0);
		return k->reason;
	}
	return NULL;
}

int vpmu_kvmstat_find(struct vpmu_kvmstat *k, const char *name, uint16_t *code)
{
	size_t plen = strlen(KVMSTAT_PREFIX);
	unsigned int i;
	int ret = discover(k);

	if (ret)
		return ret;
	if (!strncmp(name, KVMSTAT_PREFIX, plen))
		name += plen;
	for (i = 0; i < k->nr_stats; i++) {
		if (!strcmp(k->stats[i].name + plen, name)) {
			*code = PVPMU_EV_KVMSTAT(i);
			return 0;
		}
	}
	return -ENOENT;
}

static struct vpmu_kvmstat *kvmstat_of(const struct vpmu_backend *b)
{
	return b->priv;
}

static int kvmstat_describe(const struct vpmu_backend *b, uint16_t code,
			    struct vpmu_event_info *info)
{
	const struct kstat *s = stat_of(kvmstat_of(b), code);

	if (!s)
		return -ENOENT;
	if (info) {
		info->code = code;
		info->name = s->name;
		info->desc = s->desc;
	}
	return 0;
}

static int kvmstat_enumerate(const struct vpmu_backend *b, unsigned int idx,
			     struct vpmu_event_info *info)
{
	if (idx >= KVMSTAT_MAX_EVENTS)
		return -ENOENT;
	return kvmstat_describe(b, PVPMU_EV_KVMSTAT(idx), info);
}

/*
 * Value of the open event (e) at run time (now_ns), from its vCPU's data
 * block (re-read unless it was read at this run time). scratch[0] is the
 * last value, scratch[1] the byte offset in the data block.
 */
static int read_value(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *v)
{
	struct vpmu_kvmstat *k = kvmstat_of(e->be);
	struct kcpu *c         = &k->cpus[e->ev.cpu_index];
	int ret;

	if (!c->has_block || c->block_ns != now_ns) {
		c->has_block = false;
		ret          = pread_all(c->fd, c->block, k->data_size,
					 k->hdr.data_offset);
		if (ret)
			return ret;
		c->has_block = true;
		c->block_ns  = now_ns;
	}
	*v = c->block[e->scratch[1] / sizeof(uint64_t)];
	return 0;
}

static int kvmstat_open(struct vpmu_bevent *e, uint64_t now_ns)
{
	struct vpmu_kvmstat *k = kvmstat_of(e->be);
	const struct kstat *s  = stat_of(k, e->ev.code);
	int ret;

	if (!s)
		return -ENOENT;
	ret = open_cpu(k, e->ev.cpu_index);
	if (ret)
		return ret;
	e->scratch[1] = s->offset;
	return read_value(e, now_ns, &e->scratch[0]);
}

static void kvmstat_close(struct vpmu_bevent *e)
{
	e->scratch[0] = e->scratch[1] = 0;
}

static int kvmstat_read(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta)
{
	uint64_t v;
	int ret = read_value(e, now_ns, &v);

	*delta = 0;
	if (ret)
		return ret;
	*delta        = v - e->scratch[0];
	e->scratch[0] = v;
	return 0;
}

static int kvmstat_arm(struct vpmu_bevent *e, uint64_t nevents, uint64_t *in_ns)
{
	(void)e;
	(void)nevents;
	*in_ns = VPMU_NO_DEADLINE;
	return 0;
}

void vpmu_kvmstat_instance(struct vpmu_kvmstat *k, struct vpmu_backend *out)
{
	out->ops  = &vpmu_kvmstat_backend;
	out->priv = k;
}

const struct vpmu_backend_ops vpmu_kvmstat_backend = {
	.name      = "kvmstat",
	.describe  = kvmstat_describe,
	.enumerate = kvmstat_enumerate,
	.open      = kvmstat_open,
	.close     = kvmstat_close,
	.read      = kvmstat_read,
	.arm       = kvmstat_arm,
};
