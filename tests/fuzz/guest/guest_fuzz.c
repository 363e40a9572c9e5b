// SPDX-License-Identifier: MIT
/*
 * guest_fuzz.c: a guest that attacks the VMM through every door it has,
 * deterministically from a seed: random hypercalls (any doorbell number,
 * valid-ish and random request blocks, perfmon2 commands with random
 * arguments), request blocks and argument arrays placed at and across
 * every boundary of guest RAM (its start, its end, the 4 GiB limit) and of
 * the sampling-buffer mappings (their start and end), and random reads and
 * writes of the PMU MSRs of every model, one below and one past each range
 * (#GP is caught by the kernel's exception table).
 *
 * The VM's name sets the run: "gfuzz-SEED-COUNT" (decimal; default seed 1,
 * 20000 operations). The guest never hands the VMM an address it would
 * mind being written (its own image, page tables, stacks): answers go to
 * a scratch area at 32 MiB, to the top of RAM, or nowhere (refused).
 * At the end it prints
 *   guest_fuzz: seed S: N hypercalls (E refused), M MSR accesses (G #GP)
 * and exits 0.
 */
#include "kernel.h"
#include "pvpmu_hc.h"

#include <stdbool.h>

#define SCRATCH_GPA 0x2000000ULL /* 32 MiB, above the image */
#define SCRATCH_LEN 0x100000ULL
#define NR_BUFS     4
#define BLOCK_MAX   PVPMU_HC_BLOCK_MAX
#define SMPL_HOLE_GPA                                                          \
	0xc0000000ULL /* the VMM's sampling-buffer window (vmm/pv/vmm_pv.h) */
#define NR_OPS_DEFAULT 20000

static uint64_t rng;
static uint64_t mem_size;
static struct {
	uint64_t gpa, size;
} bufs[NR_BUFS]; /* sampling buffers seen (SMPL_INFO) */
static unsigned int nr_bufs;
static int32_t fds[8]; /* context handles seen */
static unsigned int nr_fds;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t below(uint64_t n)
{
	return n ? next() % n : 0;
}

static uint8_t *scratch(uint64_t off)
{
	return (uint8_t *)(uintptr_t)(SCRATCH_GPA + off);
}

/* Fill guest (gpa, len) with random bytes, the part inside RAM and not
 * below the scratch area (the guest's own memory). */
static void fill(uint64_t gpa, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		if (gpa + i >= SCRATCH_GPA && gpa + i < mem_size)
			*(volatile uint8_t *)(uintptr_t)(gpa + i) =
				(uint8_t)next();
	}
}

/*
 * An address for a block or an argument of (len) bytes the VMM may write:
 * in the scratch area, at or across the end of RAM, above RAM, across
 * 4 GiB, or at and across a sampling buffer's start or end.
 */
static uint64_t place(uint64_t len)
{
	uint64_t k = below(len + 16), b;

	switch (below(8)) {
	case 0:
	case 1:
		return SCRATCH_GPA + below(SCRATCH_LEN - BLOCK_MAX);
	case 2:
		return mem_size - k; /* at and across the end of RAM */
	case 3:
		return mem_size + below(3) * 4096 + below(16);
	case 4:
		return 0x100000000ULL - k; /* across 4 GiB (truncated) */
	case 5:
	case 6:
		if (!nr_bufs)
			return mem_size - k;
		b = below(nr_bufs);
		return below(2) ? bufs[b].gpa - k + below(32)
				: bufs[b].gpa + bufs[b].size - k;
	default:
		return SMPL_HOLE_GPA - k; /* where the VMM maps buffers */
	}
}

static int32_t any_fd(void)
{
	switch (below(4)) {
	case 0:
		return (int32_t)next();
	case 1:
		return -1;
	default:
		return nr_fds ? fds[below(nr_fds)] : 0x10000;
	}
}

static void remember_fd(int32_t fd)
{
	if (nr_fds < 8)
		fds[nr_fds++] = fd;
	else
		fds[below(8)] = fd;
}

/* A perfmon2 command, usually a real one with a plausible argument. */
static long pfm_call(void)
{
	static const uint8_t uuid[16] = PFM_DEFAULT_SMPL_UUID;
	struct pvpmu_hc_pfm *r        = (struct pvpmu_hc_pfm *)scratch(0);
	uint64_t arg_len = below(4) ? 64 * (1 + below(8)) : below(70000);
	struct pfarg_ctx *ctx;
	long ret;

	*r = (struct pvpmu_hc_pfm){
		.size  = sizeof(*r),
		.cmd   = below(8) ? 1 + (uint32_t)below(16) : (uint32_t)next(),
		.fd    = any_fd(),
		.nargs = below(8) ? (int32_t)below(5) : (int32_t)next(),
		.arg_size = arg_len,
		.tid      = (uint32_t)below(4)};
	r->arg_gpa = below(4) ? SCRATCH_GPA + 0x10000 : place(arg_len);
	fill(r->arg_gpa, arg_len < 4096 ? arg_len : 4096);
	if (r->cmd == PFM_CREATE_CONTEXT && below(2)) {
		/* A context with a sampling buffer, so there are mappings. */
		r->arg_gpa = SCRATCH_GPA + 0x10000;
		r->nargs   = 1;
		r->arg_size =
			sizeof(*ctx) + sizeof(struct pfm_default_smpl_arg);
		ctx            = (struct pfarg_ctx *)scratch(0x10000);
		ctx->ctx_flags = below(2) ? PFM_FL_SYSTEM_WIDE : 0;
		memcpy(ctx->ctx_smpl_buf_id, uuid, sizeof(uuid));
		*(struct pfm_default_smpl_arg *)(ctx + 1) =
			(struct pfm_default_smpl_arg){
				.buf_size = 4096 * (1 + below(4)) +
					    (below(4) ? 0 : below(4096))};
	}
	if (r->cmd == PFM_CREATE_CONTEXT)
		/* Never block the vCPU on a notification. */
		((struct pfarg_ctx *)scratch(0x10000))->ctx_flags &=
			~(uint32_t)PFM_FL_NOTIFY_BLOCK;
	ret = pvpmu_hypercall(PVPMU_HC_PFM, (uint32_t)SCRATCH_GPA);
	if (!ret && r->cmd == PFM_CREATE_CONTEXT)
		remember_fd(((struct pfarg_ctx *)scratch(0x10000))->ctx_fd);
	return ret;
}

/* SMPL_INFO of a known context: learn a sampling buffer's place. */
static long smpl_info(void)
{
	struct pvpmu_hc_smpl_info *r =
		(struct pvpmu_hc_smpl_info *)scratch(0x800);
	long ret;

	*r  = (struct pvpmu_hc_smpl_info){.size = sizeof(*r), .fd = any_fd()};
	ret = pvpmu_hypercall(PVPMU_HC_SMPL_INFO,
			      (uint32_t)(SCRATCH_GPA + 0x800));
	if (!ret && r->buf_size) {
		unsigned int i = nr_bufs < NR_BUFS
					 ? nr_bufs++
					 : (unsigned int)below(NR_BUFS);

		bufs[i].gpa  = r->gpa;
		bufs[i].size = r->buf_size;
	}
	return ret;
}

/* A request block for call (nr): usually its size and sane fields. */
static uint64_t block(unsigned int nr)
{
	uint64_t len = below(8) ? 8 + 8 * below(8) : below(BLOCK_MAX + 64);
	uint64_t gpa = below(3) ? SCRATCH_GPA + 0x1000 : place(len);
	uint32_t *w;

	fill(gpa, len);
	if (gpa < SCRATCH_GPA || gpa + 16 > mem_size)
		return gpa; /* not ours to write, or across the end */
	w = (uint32_t *)(uintptr_t)gpa;
	if (below(4))
		w[0] = (uint32_t)len; /* the size field */
	if (below(2) || nr == PVPMU_HC_SET_VECTOR)
		w[1] = nr == PVPMU_HC_SET_VECTOR ? 0 : (uint32_t)any_fd();
	if (nr == PVPMU_HC_SHARED && below(2)) {
		/* Register a page the guest does not use, or unregister. */
		w[1]                 = 0;
		*(uint64_t *)(w + 2) = below(2) ? SCRATCH_GPA + 0x8000 : 0;
	}
	if (nr == PVPMU_HC_READ_MSG)
		*(uint64_t *)(w + 2) = below(2) ? 0 : below(100000); /* ns */
	return gpa;
}

static long hypercall(void)
{
	unsigned int nr;

	switch (below(10)) {
	case 0:
		nr = (unsigned int)below(PVPMU_HC_MAX); /* any doorbell */
		break;
	case 1:
	case 2:
	case 3:
		return pfm_call();
	case 4:
		return smpl_info();
	default:
		nr = 1 + (unsigned int)below(PVPMU_HC_SCHED);
		break;
	}
	/*
	 * SET_VECTOR: only vector 0 (off): the kernel has no handler for a
	 * random vector. READ_MSG waits at most 100 us (block()).
	 */
	return pvpmu_hypercall(nr, (uint32_t)block(nr));
}

/* The PMU MSR ranges of every model, each from one below to one past. */
static const struct {
	uint32_t base, count;
} ranges[] = {
	{0xc1, 8},       {0x186, 8},       {0x309, 3},
	{0x345, 1},      {0x38d, 4},       {0x4c1, 8},
	{0xc0010000, 8}, {0xc0010200, 12}, {0xc0000300, 4},
};

static uint64_t msr_value(void)
{
	switch (below(4)) {
	case 0:
		return next();
	case 1:
		return below(2) ? 0 : ~0ULL;
	case 2: /* an event select: enabled, maybe an interrupt */
		return (next() & 0xffff) | (1ULL << 22) | (below(2) << 20) |
		       (3ULL << 16);
	default:
		return (1ULL << 48) - below(64); /* about to overflow */
	}
}

static bool msr_access(void)
{
	unsigned int r =
		(unsigned int)below(sizeof(ranges) / sizeof(ranges[0]));
	uint32_t msr =
		ranges[r].base - 1 + (uint32_t)below(ranges[r].count + 2);
	uint64_t val = 0;

	if (below(2))
		return guest_rdmsr_safe(msr, &val) != 0;
	return guest_wrmsr_safe(msr, msr_value()) != 0;
}

static uint64_t parse_num(const char **p, uint64_t def)
{
	uint64_t v = 0;
	bool any   = false;

	while (**p >= '0' && **p <= '9') {
		v   = v * 10 + (uint64_t)(**p - '0');
		any = true;
		(*p)++;
	}
	if (**p == '-')
		(*p)++;
	return any ? v : def;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	const char *name = (const char *)bi->name;
	uint64_t seed = 1, nr_ops = NR_OPS_DEFAULT, i;
	uint64_t nr_hc = 0, nr_refused = 0, nr_msr = 0, nr_gp = 0;

	if (vcpu != 0)
		return;
	if (!memcmp(name, "gfuzz-", 6)) {
		name += 6;
		seed   = parse_num(&name, 1);
		nr_ops = parse_num(&name, NR_OPS_DEFAULT);
	}
	mem_size = bi->mem_size;
	if (mem_size < SCRATCH_GPA + SCRATCH_LEN) {
		kprintf("guest_fuzz: needs %llu MiB of RAM\n",
			(unsigned long long)((SCRATCH_GPA + SCRATCH_LEN) >>
					     20));
		guest_exit(2);
	}
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (i = 0; i < nr_ops; i++) {
		if (below(3)) {
			nr_hc++;
			nr_refused += hypercall() != 0;
		} else {
			nr_msr++;
			nr_gp += msr_access();
		}
		if ((i + 1) % 5000 == 0)
			kprintf("guest_fuzz: %llu of %llu\n",
				(unsigned long long)(i + 1),
				(unsigned long long)nr_ops);
	}
	kprintf("guest_fuzz: seed %llu: %llu hypercalls (%llu refused), "
		"%llu MSR accesses (%llu #GP)\n",
		(unsigned long long)seed, (unsigned long long)nr_hc,
		(unsigned long long)nr_refused, (unsigned long long)nr_msr,
		(unsigned long long)nr_gp);
	guest_exit(0);
}
