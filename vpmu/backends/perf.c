// SPDX-License-Identifier: MIT
/*
 * perf.c: the perf backend (see perf.h): event resolution (the kernel's
 * generic events for the catalogue, libpfm4 for raw host-PMU events), a
 * per-instance probe cache of availability, and per-event perf fds on the
 * vCPU thread with overflow signals.
 */
#include "perf.h"
#include "pfm_load.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pvpmu/catalog.h>

#define PERF_IDLE_PERIOD (1ULL << 62) /* "never" until arm() */
#define PERF_MAX_PERIOD  (1ULL << 62)

/* x86 event-select bits that PERF_TYPE_RAW takes as they are (SDM 18.2.1) */
#define EVSEL_EDGE_SHIFT  18
#define EVSEL_INV_SHIFT   23
#define EVSEL_CMASK_SHIFT 24

enum kind {
	KIND_NONE, /* not a perf event */
	KIND_HW,   /* catalogue hardware event: generic, guest-only */
	KIND_SW,   /* catalogue software event: vCPU thread */
	KIND_RAW,  /* host PMU event-select code, guest-only */
	KIND_TSC,  /* cycles without a host PMU: task-clock at TSC rate */
};

#define NS_PER_MS 1000000ULL

/* What the probe found about one code; kept until the instance dies. */
struct probe {
	struct probe *next;
	uint16_t code;
	enum kind kind;
	bool ok;
	uint32_t type; /* perf_event_attr type and config from libpfm4 */
	uint64_t config;
	char name[24]; /* raw events; catalogue events use the catalogue */
	char desc[160];
	char reason[160];
};

struct vpmu_perf {
	struct vpmu_perf_source src;
	const struct pfm_lib *pfm; /* libpfm4 when loaded (a host PMU) */
	const char *pfm_why;       /* else why not */
	struct probe *probes;
};

/*
 * The catalogue's perf events are the kernel's generic events
 * (perf_event.h, the names `perf stat -e` takes): no library needed.
 * tests/unit/vpmu/test_perf_generic.c checks them against libpfm4's
 * "perf::NAME".
 */
static const struct {
	uint16_t code;
	uint32_t type;
	uint64_t config;
} generic[] = {
	{PVPMU_EV_CYCLES, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{PVPMU_EV_INSTRUCTIONS, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	{PVPMU_EV_REF_CYCLES, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
	{PVPMU_EV_LLC_REFERENCES, PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_CACHE_REFERENCES},
	{PVPMU_EV_LLC_MISSES, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
	{PVPMU_EV_BRANCHES, PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{PVPMU_EV_BRANCH_MISSES, PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_BRANCH_MISSES},
	{PVPMU_EV_SW_TASK_CLOCK, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	{PVPMU_EV_SW_PAGE_FAULTS, PERF_TYPE_SOFTWARE,
	 PERF_COUNT_SW_PAGE_FAULTS},
	{PVPMU_EV_SW_CONTEXT_SWITCHES, PERF_TYPE_SOFTWARE,
	 PERF_COUNT_SW_CONTEXT_SWITCHES},
	{PVPMU_EV_SW_CPU_MIGRATIONS, PERF_TYPE_SOFTWARE,
	 PERF_COUNT_SW_CPU_MIGRATIONS},
};

int vpmu_perf_generic(uint16_t code, uint32_t *type, uint64_t *config)
{
	unsigned int i;

	for (i = 0; i < sizeof(generic) / sizeof(generic[0]); i++) {
		if (generic[i].code == code) {
			*type   = generic[i].type;
			*config = generic[i].config;
			return 0;
		}
	}
	return -ENOENT;
}

/* An open event (e->priv). */
struct pevent {
	int fd;
	enum kind kind;
	bool is_clock;  /* task-clock: hrtimer based, IOC_PERIOD is enough */
	bool has_async; /* overflow signal routed */
	bool armed;
	uint64_t value, enabled, running; /* at the last read */
	uint64_t total;                   /* deltas returned so far */
	uint64_t armed_total, armed_n;    /* overflow due at total + n */
};

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t tid)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static bool is_vpmu_family(uint16_t code)
{
	unsigned int ev = PVPMU_EV_EVENT(code);

	return ev >= PVPMU_EV_EVENT(PVPMU_EV_HV_RUN_NS) &&
	       ev <= PVPMU_EV_EVENT(PVPMU_EV_SW_TASK_CLOCK);
}

static enum kind kind_of(uint16_t code, const struct pvpmu_event_desc **out)
{
	const struct pvpmu_event_desc *d = pvpmu_catalog_by_code(code);

	*out = d;
	if (d && d->code == code && d->source == PVPMU_SRC_PERF_HW)
		return KIND_HW;
	if (d && d->code == code && d->source == PVPMU_SRC_PERF_SW)
		return KIND_SW;
	if (d || is_vpmu_family(code))
		return KIND_NONE;
	return KIND_RAW;
}

/*
 * Host facts the probes explain with, read once when a perf source is
 * created: probes run later, on vCPU and control threads whose seccomp
 * sandbox (vmm/sandbox) refuses to open files.
 */
static int host_paranoid = -9;
static int host_hw_pmu   = -1; /* unknown */

static int read_paranoid(void)
{
	FILE *f;
	int v = -9;

	if (host_hw_pmu >= 0)
		return host_paranoid;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -9;
		fclose(f);
	}
	return v;
}

static bool has_hw_pmu(void)
{
	if (host_hw_pmu >= 0)
		return host_hw_pmu;
	/* "cpu" (or the hybrid "cpu_core") is the core PMU in sysfs. */
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

int vpmu_perf_create(const struct vpmu_perf_source *src, struct vpmu_perf **out)
{
	struct vpmu_perf *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->src        = *src;
	host_paranoid = read_paranoid();
	host_hw_pmu   = has_hw_pmu();
	/*
	 * libpfm4 serves raw host-PMU events only, which need a hardware PMU:
	 * without one it is never loaded (2.2 MB per VM). Loaded
	 * here, before any thread enters the sandbox; once per process.
	 */
	if (host_hw_pmu)
		p->pfm = pfm_lib_load(&p->pfm_why);
	else
		p->pfm_why = "no hardware PMU on this host (raw host-PMU "
			     "events need one; libpfm4 not loaded)";
	*out = p;
	return 0;
}

void vpmu_perf_destroy(struct vpmu_perf *p)
{
	struct probe *pr, *next;

	if (!p)
		return;
	for (pr = p->probes; pr; pr = next) {
		next = pr->next;
		free(pr);
	}
	free(p);
}

/* Resolve (fstr) with libpfm4 (pfm) into pr->type/config. */
static int pfm_resolve(const struct pfm_lib *pfm, struct probe *pr,
		       const char *fstr)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	ret      = pfm->get_os_event_encoding(fstr, PFM_PLM0 | PFM_PLM3,
					      PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		snprintf(pr->reason, sizeof(pr->reason), "libpfm4: %s: %s",
			 fstr, pfm->strerror(ret));
		return -ENOENT;
	}
	pr->type   = attr.type;
	pr->config = attr.config;
	return 0;
}

/* Does umask (umask) of libpfm4 event (idx) exist? Sets (*uname). */
static bool find_umask(const struct pfm_lib *pfm, int idx, int nattrs,
		       uint64_t umask, const char **uname)
{
	pfm_event_attr_info_t ai;
	int a;

	for (a = 0; a < nattrs; a++) {
		memset(&ai, 0, sizeof(ai));
		ai.size = sizeof(ai);
		if (pfm->get_event_attr_info(idx, a, PFM_OS_NONE, &ai) ||
		    ai.type != PFM_ATTR_UMASK)
			continue;
		if (ai.code == umask) {
			*uname = ai.name;
			return true;
		}
	}
	return false;
}

/*
 * Name raw (code) after the host core PMU's libpfm4 table: the event with
 * that event code and, if the umask is not 0, that umask.
 */
static void raw_describe(const struct pfm_lib *pfm, struct probe *pr)
{
	uint64_t ev = PVPMU_EV_EVENT(pr->code), um = PVPMU_EV_UMASK(pr->code);
	pfm_pmu_info_t pi;
	pfm_event_info_t ei;
	const char *uname;
	pfm_pmu_t pmu;
	int i;

	snprintf(pr->name, sizeof(pr->name), "raw:0x%04x", pr->code);
	snprintf(pr->desc, sizeof(pr->desc),
		 "host PMU event 0x%02x, umask 0x%02x (not in the host's "
		 "libpfm4 table)",
		 (unsigned int)ev, (unsigned int)um);
	pfm_for_all_pmus(pmu)
	{
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm->get_pmu_info(pmu, &pi) || !pi.is_present ||
		    pi.type != PFM_PMU_TYPE_CORE)
			continue;
		for (i = pi.first_event; i != -1; i = pfm->get_event_next(i)) {
			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm->get_event_info(i, PFM_OS_NONE, &ei) ||
			    ei.code != ev)
				continue;
			uname = NULL;
			if (um && !find_umask(pfm, i, ei.nattrs, um, &uname))
				continue;
			snprintf(pr->desc, sizeof(pr->desc), "%s::%s%s%s: %s",
				 pi.name, ei.name, uname ? ":" : "",
				 uname ? uname : "", ei.desc ? ei.desc : "");
			return;
		}
	}
}

/* Explain a failed probe open (err = errno) in pr->reason. */
static void explain(struct probe *pr, int err)
{
	const char *en = strerrorname_np(err);
	bool hw        = pr->kind != KIND_SW;

	en = en ? en : "?";
	if (err == EACCES || err == EPERM)
		snprintf(pr->reason, sizeof(pr->reason),
			 "perf_event_paranoid=%d forbids counting this event "
			 "without CAP_PERFMON (perf_event_open: %s)",
			 read_paranoid(), en);
	else if (hw && !has_hw_pmu())
		snprintf(pr->reason, sizeof(pr->reason),
			 "no hardware PMU on this host (perf_event_open: %s)",
			 en);
	else if (hw && err == EOPNOTSUPP)
		snprintf(pr->reason, sizeof(pr->reason),
			 "the host PMU cannot count guest-only "
			 "(exclude_host) events (perf_event_open: %s)",
			 en);
	else if (hw)
		snprintf(pr->reason, sizeof(pr->reason),
			 "the host PMU does not support this event "
			 "(perf_event_open: %s)",
			 en);
	else
		snprintf(pr->reason, sizeof(pr->reason),
			 "perf_event_open: %s (%s)", en, strerror(err));
}

/* perf_event_attr of (pr) as vpmu opens it (flags not yet set). */
static void base_attr(const struct probe *pr, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size   = sizeof(*attr);
	attr->type   = pr->type;
	attr->config = pr->config;
	attr->read_format =
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->sample_period = PERF_IDLE_PERIOD;
	attr->exclude_host  = pr->kind != KIND_SW && pr->kind != KIND_TSC;
}

/*
 * Does the host open (pr) for this thread? A disabled trial event, closed
 * at once; on failure (pr)'s reason says why.
 */
static bool try_open(struct probe *pr)
{
	struct perf_event_attr attr;
	int fd;

	base_attr(pr, &attr);
	attr.disabled = 1;
	fd            = sys_perf_event_open(&attr, 0);
	if (fd < 0) {
		explain(pr, errno);
		return false;
	}
	close(fd);
	return true;
}

/*
 * Cycles on a host without a PMU: the vCPU thread's CPU time (task-clock)
 * at the guest's TSC rate, so `cycles` works in guests everywhere. Usable
 * when the hardware probe failed for want of a PMU and the TSC rate is
 * known.
 */
static void probe_tsc_cycles(struct vpmu_perf *p, struct probe *pr)
{
	if (pr->code != PVPMU_EV_CYCLES || pr->ok || has_hw_pmu() ||
	    !p->src.tsc_khz)
		return;
	pr->kind   = KIND_TSC;
	pr->type   = PERF_TYPE_SOFTWARE;
	pr->config = PERF_COUNT_SW_TASK_CLOCK;
	if (!try_open(pr))
		return;
	snprintf(pr->desc, sizeof(pr->desc),
		 "unhalted core cycles, from the vCPU thread's CPU time "
		 "(task-clock) at the TSC rate: this host has no PMU");
	pr->ok = true;
}

/* Cycles at (khz) in (ns) nanoseconds of task-clock. */
static uint64_t tsc_cycles(uint64_t ns, uint64_t khz)
{
	return (uint64_t)((unsigned __int128)ns * khz / NS_PER_MS);
}

static void probe_open(struct vpmu_perf *p, struct probe *pr,
		       const struct pvpmu_event_desc *d)
{
	char fstr[64];

	if (pr->kind != KIND_RAW) {
		if (vpmu_perf_generic(pr->code, &pr->type, &pr->config)) {
			snprintf(pr->reason, sizeof(pr->reason),
				 "%s: not a generic perf event", d->name);
			return;
		}
	} else if (!p->pfm) {
		snprintf(pr->reason, sizeof(pr->reason), "%s", p->pfm_why);
		return;
	} else {
		raw_describe(p->pfm, pr);
		snprintf(fstr, sizeof(fstr), "perf_raw::r%x", pr->code);
		if (pfm_resolve(p->pfm, pr, fstr))
			return;
	}
	if (!try_open(pr))
		return;
	pr->ok = true;
}

/* The cached probe of (code), probing it on first use; NULL on ENOMEM. */
static struct probe *probe(struct vpmu_perf *p, uint16_t code)
{
	const struct pvpmu_event_desc *d;
	struct probe *pr;

	for (pr = p->probes; pr; pr = pr->next) {
		if (pr->code == code)
			return pr;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->code = code;
	pr->kind = kind_of(code, &d);
	if (pr->kind == KIND_NONE)
		snprintf(pr->reason, sizeof(pr->reason),
			 "not a perf event (catalogue source %s)",
			 d && d->source == PVPMU_SRC_KVMSTAT ? "kvmstat"
							     : "hv");
	else
		probe_open(p, pr, d);
	probe_tsc_cycles(p, pr);
	pr->next  = p->probes;
	p->probes = pr;
	return pr;
}

const char *vpmu_perf_unavailable_reason(struct vpmu_perf *p, uint16_t code)
{
	struct probe *pr = probe(p, code);

	if (!pr)
		return "out of memory";
	return pr->ok ? NULL : pr->reason;
}

static struct vpmu_perf *perf_of(const struct vpmu_backend *b)
{
	return b->priv;
}

static int perf_describe(const struct vpmu_backend *b, uint16_t code,
			 struct vpmu_event_info *info)
{
	struct probe *pr = probe(perf_of(b), code);
	const struct pvpmu_event_desc *d;

	if (!pr)
		return -ENOMEM;
	if (!pr->ok)
		return -ENOENT;
	if (info) {
		info->code = code;
		if (pr->kind == KIND_RAW) {
			info->name = pr->name;
			info->desc = pr->desc;
		} else if (pr->kind == KIND_TSC) {
			info->name = pvpmu_catalog_by_code(code)->name;
			info->desc = pr->desc;
		} else {
			d          = pvpmu_catalog_by_code(code);
			info->name = d->name;
			info->desc = d->desc;
		}
	}
	return 0;
}

/* The available catalogue events (raw codes are not enumerable). */
static int perf_enumerate(const struct vpmu_backend *b, unsigned int idx,
			  struct vpmu_event_info *info)
{
	unsigned int i, n = 0;

	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);

		if (d->source != PVPMU_SRC_PERF_HW &&
		    d->source != PVPMU_SRC_PERF_SW)
			continue;
		if (perf_describe(b, d->code, NULL))
			continue;
		if (n++ == idx)
			return perf_describe(b, d->code, info);
	}
	return -ENOENT;
}

/*
 * Cycles from task-clock count the vCPU thread's time in every guest ring:
 * a ring filter (cycles:u, cycles:k, a guest's USR/OS bits) cannot be
 * honoured, so perfmon2 callers are refused rather than ignored (the
 * architectural model, which cannot refuse, counts every ring).
 */
static const char *tsc_ring_refusal(const struct probe *pr,
				    const struct vpmu_event *ev)
{
	if (pr->kind != KIND_TSC || (ev->usr && ev->os))
		return NULL;
	return "this host has no PMU: cycles are the vCPU thread's CPU time "
	       "(task-clock), which cannot tell guest ring 0 from ring 3, so "
	       "a ring filter (:u or :k) cannot be honoured";
}

static const char *perf_refusal(const struct vpmu_backend *b,
				const struct vpmu_event *ev)
{
	struct probe *pr = probe(b->priv, ev->code);

	if (!pr)
		return "out of memory";
	return pr->ok ? tsc_ring_refusal(pr, ev) : NULL;
}

/* Fill (*attr) for (e): privilege filters and modifiers. */
static int event_attr(const struct probe *pr, const struct vpmu_event *ev,
		      struct perf_event_attr *attr)
{
	base_attr(pr, attr);
	if (pr->kind == KIND_SW || pr->kind == KIND_TSC)
		return 0; /* host thread events: no guest privilege filter */
	attr->exclude_user   = !ev->usr;
	attr->exclude_kernel = !ev->os;
	if (pr->kind == KIND_HW)
		return ev->edge || ev->inv || ev->cmask ? -EINVAL : 0;
	attr->config |= (uint64_t)ev->edge << EVSEL_EDGE_SHIFT |
			(uint64_t)ev->inv << EVSEL_INV_SHIFT |
			(uint64_t)ev->cmask << EVSEL_CMASK_SHIFT;
	return 0;
}

struct read_fmt {
	uint64_t value, enabled, running;
};

static int read_counts(int fd, struct read_fmt *r)
{
	ssize_t n = read(fd, r, sizeof(*r));

	if (n < 0)
		return -errno;
	return n == sizeof(*r) ? 0 : -EIO;
}

/* Read (pe)'s counts as the base of the next delta. */
static int take_base(struct pevent *pe)
{
	struct read_fmt r;
	int ret = read_counts(pe->fd, &r);

	if (ret)
		return ret;
	pe->value   = r.value;
	pe->enabled = r.enabled;
	pe->running = r.running;
	return 0;
}

static int perf_open(struct vpmu_bevent *e, uint64_t now_ns)
{
	struct vpmu_perf *p = perf_of(e->be);
	struct probe *pr    = probe(p, e->ev.code);
	struct perf_event_attr attr;
	struct pevent *pe;
	pid_t tid;
	int ret;

	(void)now_ns;
	if (!pr)
		return -ENOMEM;
	if (!pr->ok)
		return -ENOENT;
	ret = event_attr(pr, &e->ev, &attr);
	if (ret)
		return ret;
	tid = p->src.vcpu_tid(p->src.opaque, e->ev.cpu_index);
	if (tid <= 0)
		return -ESRCH;
	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	pe->kind     = pr->kind;
	pe->is_clock = (pr->kind == KIND_SW || pr->kind == KIND_TSC) &&
		       attr.config == PERF_COUNT_SW_TASK_CLOCK;
	pe->fd = sys_perf_event_open(&attr, tid);
	if (pe->fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = take_base(pe);
	if (ret)
		goto out_close;
	e->priv = pe;
	return 0;

out_close:
	close(pe->fd);
out_free:
	free(pe);
	return ret;
}

static void perf_close(struct vpmu_bevent *e)
{
	struct pevent *pe = e->priv;

	if (!pe)
		return;
	close(pe->fd);
	free(pe);
	e->priv = NULL;
}

static int perf_read(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta)
{
	struct pevent *pe = e->priv;
	uint64_t dv, de, dr;
	struct read_fmt r;
	int ret;

	(void)now_ns;
	*delta = 0;
	ret    = read_counts(pe->fd, &r);
	if (ret)
		return ret;
	dv = r.value - pe->value;
	if (pe->kind == KIND_TSC) /* telescopes: no rounding drift */
		dv = tsc_cycles(r.value, perf_of(e->be)->src.tsc_khz) -
		     tsc_cycles(pe->value, perf_of(e->be)->src.tsc_khz);
	de = r.enabled - pe->enabled;
	dr = r.running - pe->running;
	/* Multiplexed by the host: scale to the enabled time (estimate). */
	if (dr != de)
		dv = dr ? (uint64_t)((unsigned __int128)dv * de / dr) : 0;
	pe->value   = r.value;
	pe->enabled = r.enabled;
	pe->running = r.running;
	pe->total += dv;
	*delta = dv;
	return 0;
}

/*
 * Drop what (e) counted since open: the counters libvpmu starts together
 * (one guest GLOBAL_CTRL write, say) begin here, not each after its own
 * perf_event_open(2), which the vCPU thread's clock events would count.
 * The kernel's sample period ran from the arm: libvpmu arms again.
 */
static int perf_rebase(struct vpmu_bevent *e, uint64_t now_ns)
{
	struct pevent *pe = e->priv;
	int ret;

	(void)now_ns;
	ret = take_base(pe);
	if (ret)
		return ret;
	pe->armed = false;
	return 0;
}

/* Route the overflow notification to the vCPU thread as (signo). */
static int route_signal(struct pevent *pe, pid_t tid, int signo)
{
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	int fl;

	if (fcntl(pe->fd, F_SETOWN_EX, &owner) < 0 ||
	    fcntl(pe->fd, F_SETSIG, signo) < 0)
		return -errno;
	fl = fcntl(pe->fd, F_GETFL);
	if (fl < 0 || fcntl(pe->fd, F_SETFL, fl | O_ASYNC) < 0)
		return -errno;
	pe->has_async = true;
	return 0;
}

/*
 * Program a period of (n) events from now. The kernel restarts an active
 * event with period_left = 0: the hardware and hrtimer (clock) paths
 * reload the full period, but the software counter path then overflows at
 * the next event, so those are disabled around the change (the re-enable
 * reloads the period).
 */
static int set_period(struct pevent *pe, uint64_t n)
{
	bool toggle = pe->kind == KIND_SW && !pe->is_clock;
	int ret     = 0;

	if (toggle && ioctl(pe->fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	if (ioctl(pe->fd, PERF_EVENT_IOC_PERIOD, &n) < 0)
		ret = -errno;
	if (toggle && ioctl(pe->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 && !ret)
		ret = -errno;
	return ret;
}

static int perf_arm(struct vpmu_bevent *e, uint64_t nevents, uint64_t *in_ns)
{
	struct vpmu_perf *p = perf_of(e->be);
	struct pevent *pe   = e->priv;
	pid_t tid;
	int ret;

	*in_ns = VPMU_NO_DEADLINE;
	if (!p->src.signo)
		return 0;
	nevents = nevents ? nevents : 1;
	nevents = nevents > PERF_MAX_PERIOD ? PERF_MAX_PERIOD : nevents;
	/* Already counting down to the same point: nothing to do. */
	if (pe->armed && pe->total + nevents == pe->armed_total + pe->armed_n)
		return 0;
	if (!pe->has_async) {
		tid = p->src.vcpu_tid(p->src.opaque, e->ev.cpu_index);
		if (tid <= 0)
			return -ESRCH;
		ret = route_signal(pe, tid, p->src.signo);
		if (ret)
			return ret;
	}
	/* Task-clock counts nanoseconds: the first whole one past n cycles. */
	ret = set_period(pe, pe->kind == KIND_TSC
				     ? (nevents * NS_PER_MS + p->src.tsc_khz -
					1) / p->src.tsc_khz
				     : nevents);
	if (ret) {
		pe->armed = false;
		return ret;
	}
	pe->armed       = true;
	pe->armed_total = pe->total;
	pe->armed_n     = nevents;
	return 0;
}

void vpmu_perf_instance(struct vpmu_perf *p, struct vpmu_backend *out)
{
	out->ops  = &vpmu_perf_backend;
	out->priv = p;
}

const struct vpmu_backend_ops vpmu_perf_backend = {
	.name      = "perf",
	.describe  = perf_describe,
	.enumerate = perf_enumerate,
	.open      = perf_open,
	.close     = perf_close,
	.read      = perf_read,
	.arm       = perf_arm,
	.rebase    = perf_rebase,
	.refusal   = perf_refusal,
};
