// SPDX-License-Identifier: MIT
/*
 * test_calls.c: argument packing of the libpvpmu calls, seen by a fake
 * driver: which hypercall, which request block, which argument bytes, and
 * that OUT fields and errors come back.
 *
 * The fake glue maps host pointers to small fake GPAs (one 1 MiB window per
 * distinct object), as the doorbell carries 32 bits; the fake doorbell
 * maps them back, records the request and answers from a script.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <string.h>

#include <pvpmu/pvpmu.h>

#include "pvpmu_core.h"

#define WIN_BASE  0x10000000ULL
#define WIN_SHIFT 20
#define NR_WIN    16

static const void *win[NR_WIN];
static unsigned int nr_win;
static int fail_high; /* virt_to_gpa answers above 4 GiB */

static unsigned int calls, last_nr;
static uint8_t last_block[64];
static uint8_t last_arg[1024];
static uint64_t last_arg_size;
static int answer;

static int fake_virt_to_gpa(void *opaque, const void *p, pvpmu_u64 len,
			    pvpmu_u64 *gpa)
{
	unsigned int i;

	(void)opaque;
	cr_assert(lt(u64, len, 1ULL << WIN_SHIFT));
	if (fail_high) {
		*gpa = 0x100000000ULL;
		return 0;
	}
	for (i = 0; i < nr_win && win[i] != p; i++)
		;
	if (i == nr_win) {
		cr_assert(lt(u32, nr_win, NR_WIN));
		win[nr_win++] = p;
	}
	*gpa = WIN_BASE + ((uint64_t)i << WIN_SHIFT);
	return 0;
}

static void *resolve(uint64_t gpa)
{
	uint64_t i = (gpa - WIN_BASE) >> WIN_SHIFT;

	cr_assert(ge(u64, gpa, WIN_BASE));
	cr_assert(lt(u64, i, nr_win));
	return (void *)((uintptr_t)win[i] + (gpa & ((1ULL << WIN_SHIFT) - 1)));
}

static int fake_map_gpa(void *opaque, pvpmu_u64 gpa, pvpmu_u64 len,
			const void **out)
{
	(void)opaque;
	(void)len;
	*out = (const void *)(uintptr_t)gpa;
	return 0;
}

static pvpmu_u32 fake_tid(void *opaque)
{
	(void)opaque;
	return 42;
}

static pvpmu_u32 fake_gid(void *opaque)
{
	(void)opaque;
	return 7;
}

/* Record the call; answer like a VMM would for the OUT fields. */
static long fake_doorbell(void *opaque, unsigned int nr, pvpmu_u32 gpa)
{
	uint8_t *blk = gpa ? resolve(gpa) : NULL;
	uint32_t size;

	(void)opaque;
	calls++;
	last_nr       = nr;
	last_arg_size = 0;
	memset(last_block, 0, sizeof(last_block));
	if (!blk)
		return answer;
	memcpy(&size, blk, 4);
	cr_assert(le(u32, size, sizeof(last_block)));
	memcpy(last_block, blk, size);
	if (nr == PVPMU_HC_PFM) {
		struct pvpmu_hc_pfm *r = (void *)blk;

		if (r->arg_gpa) {
			cr_assert(le(u64, r->arg_size, sizeof(last_arg)));
			memcpy(last_arg, resolve(r->arg_gpa), r->arg_size);
			last_arg_size = r->arg_size;
		}
		if (r->cmd == PFM_CREATE_CONTEXT && r->arg_gpa)
			((struct pfarg_ctx *)resolve(r->arg_gpa))->ctx_fd = 7;
	} else if (nr == PVPMU_HC_READ_MSG) {
		struct pvpmu_hc_read_msg *r = (void *)blk;

		r->msg.pfm_ovfl_msg.msg_type         = PFM_MSG_OVFL;
		r->msg.pfm_ovfl_msg.msg_ovfl_pmds[0] = 0x5;
	} else if (nr == PVPMU_HC_SMPL_INFO) {
		struct pvpmu_hc_smpl_info *r = (void *)blk;

		r->gpa      = 0x2000000;
		r->buf_size = 8192;
	} else if (nr == PVPMU_HC_ECHO) {
		struct pvpmu_hc_echo *r = (void *)blk;

		r->out = ~r->in;
	}
	return answer;
}

static const struct pvpmu_glue_ops fake_ops = {
	.virt_to_gpa = fake_virt_to_gpa,
	.map_gpa     = fake_map_gpa,
	.doorbell    = fake_doorbell,
	.current_tid = fake_tid,
	.current_gid = fake_gid,
};
static const struct pvpmu_drv fake_drv = {.ops = &fake_ops};

static void setup(void)
{
	pvpmu_set_driver(&fake_drv);
}

TestSuite(sdk_calls, .init = setup);

static const struct pvpmu_hc_pfm *pfm_block(void)
{
	cr_assert(eq(u32, last_nr, PVPMU_HC_PFM));
	return (const struct pvpmu_hc_pfm *)last_block;
}

struct vec_case {
	int line;
	int (*fn)(int fd, void *arr, int n);
	unsigned int cmd;
	size_t elem;
	int uses_fd;
};

static int w_pmcs(int fd, void *a, int n)
{
	return pfm_write_pmcs(fd, a, n);
}
static int w_pmds(int fd, void *a, int n)
{
	return pfm_write_pmds(fd, a, n);
}
static int r_pmds(int fd, void *a, int n)
{
	return pfm_read_pmds(fd, a, n);
}
static int c_sets(int fd, void *a, int n)
{
	return pfm_create_evtsets(fd, a, n);
}
static int d_sets(int fd, void *a, int n)
{
	return pfm_delete_evtsets(fd, a, n);
}
static int i_sets(int fd, void *a, int n)
{
	return pfm_getinfo_evtsets(fd, a, n);
}
static int i_pmcs(int fd, void *a, int n)
{
	(void)fd;
	return pfm_getinfo_pmcs(a, n);
}
static int i_pmds(int fd, void *a, int n)
{
	(void)fd;
	return pfm_getinfo_pmds(a, n);
}

#define VEC(f, c, T, u)                                                        \
	{                                                                      \
		.line = __LINE__, .fn = f, .cmd = c, .elem = sizeof(T),        \
		.uses_fd = u                                                   \
	}

static const struct vec_case vec_cases[] = {
	VEC(w_pmcs, PFM_WRITE_PMCS, struct pfarg_pmc, 1),
	VEC(w_pmds, PFM_WRITE_PMDS, struct pfarg_pmd, 1),
	VEC(r_pmds, PFM_READ_PMDS, struct pfarg_pmd, 1),
	VEC(c_sets, PFM_CREATE_EVTSETS, struct pfarg_setdesc, 1),
	VEC(d_sets, PFM_DELETE_EVTSETS, struct pfarg_setdesc, 1),
	VEC(i_sets, PFM_GETINFO_EVTSETS, struct pfarg_setinfo, 1),
	VEC(i_pmcs, PFM_GETINFO_PMCS, struct pfarg_pmcinfo, 0),
	VEC(i_pmds, PFM_GETINFO_PMDS, struct pfarg_pmdinfo, 0),
};

Test(sdk_calls, vector_commands_pack_n_elements)
{
	static uint64_t arr[64];
	unsigned int i;

	for (i = 0; i < sizeof(vec_cases) / sizeof(vec_cases[0]); i++) {
		const struct vec_case *c = &vec_cases[i];
		const struct pvpmu_hc_pfm *b;

		memset(arr, 0xa5, sizeof(arr));
		answer = 0;
		cr_assert(eq(int, c->fn(3, arr, 3), 0), "line %d", c->line);
		b = pfm_block();
		cr_assert(eq(u32, b->size, sizeof(struct pvpmu_hc_pfm)));
		cr_assert(eq(u32, b->cmd, c->cmd), "line %d", c->line);
		cr_assert(eq(int, b->fd, c->uses_fd ? 3 : 0), "line %d",
			  c->line);
		cr_assert(eq(int, b->nargs, 3), "line %d", c->line);
		cr_assert(eq(u64, b->arg_size, 3 * c->elem), "line %d",
			  c->line);
		cr_assert(eq(u64, last_arg_size, 3 * c->elem));
		cr_assert(eq(u32, b->tid, 42));
		cr_assert(eq(u32, b->gid, 7));
		cr_assert(eq(u64, b->restart_arg, 0));
		cr_assert(eq(int, memcmp(last_arg, arr, 3 * c->elem), 0));

		/* n <= 0 goes to the VMM (which says EINVAL), no bytes. */
		cr_assert(eq(int, c->fn(3, arr, 0), 0));
		cr_assert(eq(u64, pfm_block()->arg_gpa, 0));
		cr_assert(eq(u64, pfm_block()->arg_size, 0));
		cr_assert(eq(int, c->fn(3, arr, -2), 0));
		cr_assert(eq(int, pfm_block()->nargs, -2));
		cr_assert(eq(u64, pfm_block()->arg_size, 0));

		/* A NULL array with n > 0 never reaches the VMM. */
		calls = 0;
		cr_assert(eq(int, c->fn(3, NULL, 1), -PVPMU_EFAULT));
		cr_assert(eq(u32, calls, 0));

		/* Errors come back as they are. */
		answer = -PVPMU_EBADF;
		cr_assert(eq(int, c->fn(3, arr, 1), -PVPMU_EBADF));
	}
}

Test(sdk_calls, single_struct_commands)
{
	struct pfarg_start st = {.start_set = 5};
	struct pfarg_load ld  = {.load_pid = 1, .load_set = 2};
	struct pfarg_config cfg;

	answer = 0;
	cr_assert(eq(int, pfm_start(4, &st), 0));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_START));
	cr_assert(eq(int, pfm_block()->nargs, 1));
	cr_assert(eq(u64, pfm_block()->arg_size, 8));
	cr_assert(eq(int, pfm_start(4, NULL), 0));
	cr_assert(eq(int, pfm_block()->nargs, 0));
	cr_assert(eq(u64, pfm_block()->arg_gpa, 0));

	cr_assert(eq(int, pfm_load_context(4, &ld), 0));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_LOAD_CONTEXT));
	cr_assert(eq(int, pfm_block()->fd, 4));
	cr_assert(eq(int, pfm_block()->nargs, 1));
	cr_assert(eq(int, memcmp(last_arg, &ld, sizeof(ld)), 0));
	cr_assert(eq(int, pfm_load_context(4, NULL), -PVPMU_EFAULT));

	cr_assert(eq(int, pfm_get_config(&cfg), 0));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_GET_CONFIG));
	cr_assert(eq(u64, pfm_block()->arg_size, sizeof(cfg)));
	cr_assert(eq(int, pfm_set_config(&cfg), 0));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_SET_CONFIG));
	cr_assert(eq(int, pfm_get_config(NULL), -PVPMU_EFAULT));
}

Test(sdk_calls, no_argument_commands)
{
	static const struct {
		int (*fn)(int);
		unsigned int cmd;
	} c[] = {
		{pfm_stop, PFM_STOP},
		{pfm_unload_context, PFM_UNLOAD_CONTEXT},
		{pfm_restart, PFM_RESTART},
	};
	unsigned int i;

	answer = 0;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cr_assert(eq(int, c[i].fn(9), 0));
		cr_assert(eq(u32, pfm_block()->cmd, c[i].cmd));
		cr_assert(eq(int, pfm_block()->fd, 9));
		cr_assert(eq(int, pfm_block()->nargs, 0));
		cr_assert(eq(u64, pfm_block()->arg_gpa, 0));
	}
	cr_assert(eq(int, pvpmu_restart_arg(9, 0x30), 0));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_RESTART));
	cr_assert(eq(u64, pfm_block()->restart_arg, 0x30));
}

Test(sdk_calls, create_context_appends_format_args)
{
	struct pfm_default_smpl_arg a = {.buf_size = 8192, .buf_flags = 0};
	struct {
		struct pfarg_ctx ctx;
		struct pfm_default_smpl_arg arg;
	} inplace       = {.arg = {.buf_size = 4096}};
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	uint8_t big[PVPMU_CTX_BOUNCE_MAX];

	answer = 0;
	/* without a format */
	cr_assert(eq(int, pfm_create_context(&ctx, NULL, 0), 0));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_CREATE_CONTEXT));
	cr_assert(eq(int, pfm_block()->nargs, 1));
	cr_assert(eq(u64, pfm_block()->arg_size, 32));
	cr_assert(eq(int, ctx.ctx_fd, 7));

	/* bounced: ctx then the arguments, contiguous; OUT copied back */
	ctx.ctx_fd = -1;
	cr_assert(eq(int, pfm_create_context(&ctx, &a, sizeof(a)), 0));
	cr_assert(eq(u64, pfm_block()->arg_size, 48));
	cr_assert(eq(int, memcmp(last_arg + 32, &a, sizeof(a)), 0));
	cr_assert(eq(u32, ((struct pfarg_ctx *)last_arg)->ctx_flags,
		     PFM_FL_SYSTEM_WIDE));
	cr_assert(eq(int, ctx.ctx_fd, 7));

	/* already in place: sent as is */
	cr_assert(eq(int,
		     pfm_create_context(&inplace.ctx, &inplace.arg,
					sizeof(inplace.arg)),
		     0));
	cr_assert(eq(u64, pfm_block()->arg_size, 48));
	cr_assert(eq(int, inplace.ctx.ctx_fd, 7));

	/* too big to bounce */
	calls = 0;
	cr_assert(eq(int, pfm_create_context(&ctx, big, sizeof(big)),
		     -PVPMU_E2BIG));
	cr_assert(eq(int, pfm_create_context(NULL, NULL, 0), -PVPMU_EFAULT));
	cr_assert(eq(int, pfm_create_context(&ctx, NULL, 16), -PVPMU_EFAULT));
	cr_assert(eq(u32, calls, 0));
}

Test(sdk_calls, context_calls)
{
	pfm_msg_t msg;
	const void *buf;
	uint64_t size, out;

	answer = 0;
	cr_assert(eq(int, pfm_close(6), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_CLOSE));
	cr_assert(eq(int, ((struct pvpmu_hc_ctx *)last_block)->fd, 6));

	cr_assert(eq(int, pfm_read_msg(6, &msg, 1000), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_READ_MSG));
	cr_assert(eq(u64, ((struct pvpmu_hc_read_msg *)last_block)->timeout_ns,
		     1000));
	cr_assert(eq(u32, msg.msg_type, PFM_MSG_OVFL));
	cr_assert(eq(u64, msg.pfm_ovfl_msg.msg_ovfl_pmds[0], 5));
	cr_assert(eq(int, pfm_read_msg(6, NULL, 0), -PVPMU_EFAULT));

	cr_assert(eq(int, pfm_smpl_buf(6, &buf, &size), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_SMPL_INFO));
	cr_assert(eq(ptr, (void *)buf, (void *)0x2000000));
	cr_assert(eq(u64, size, 8192));

	cr_assert(eq(int, pvpmu_set_vector(0xf0), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_SET_VECTOR));
	cr_assert(
		eq(u32, ((struct pvpmu_hc_vector *)last_block)->vector, 0xf0));

	cr_assert(eq(int, pvpmu_sched(6, PVPMU_SCHED_IN, 3), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_SCHED));
	cr_assert(eq(u32, ((struct pvpmu_hc_sched *)last_block)->op,
		     PVPMU_SCHED_IN));
	cr_assert(eq(u32, ((struct pvpmu_hc_sched *)last_block)->tid, 3));

	cr_assert(eq(int, pvpmu_hc_echo(pvpmu_driver(), 5, &out), 0));
	cr_assert(eq(u64, out, ~5ULL));
	cr_assert(eq(int, pvpmu_hc_nop(pvpmu_driver()), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_NOP));

	answer = -PVPMU_ENOSYS;
	cr_assert(eq(int, pfm_close(6), -PVPMU_ENOSYS));
	cr_assert(eq(int, pfm_smpl_buf(6, &buf, &size), -PVPMU_ENOSYS));
}

Test(sdk_calls, shared_page_registration)
{
	static struct pvpmu_shared_page page __attribute__((aligned(4096)));

	answer = 0;
	cr_assert(eq(int, pvpmu_shared_attach(&page), 0));
	cr_assert(eq(u32, last_nr, PVPMU_HC_SHARED));
	cr_assert(not(eq(u64, ((struct pvpmu_hc_shared *)last_block)->gpa, 0)));
	cr_assert(eq(int, pvpmu_shared_attach(NULL), 0));
	cr_assert(eq(u64, ((struct pvpmu_hc_shared *)last_block)->gpa, 0));
	calls = 0;
	cr_assert(eq(int,
		     pvpmu_shared_attach(
			     (struct pvpmu_shared_page *)((char *)&page + 8)),
		     -PVPMU_EINVAL));
	cr_assert(eq(u32, calls, 0));
}

/* The doorbell carries 32 bits: a block above 4 GiB cannot be sent. */
Test(sdk_calls, block_above_4g)
{
	calls     = 0;
	fail_high = 1;
	cr_assert(eq(int, pfm_stop(1), -PVPMU_EFAULT));
	cr_assert(eq(u32, calls, 0));
	cr_assert(
		eq(int, pvpmu_call(pvpmu_driver(), 0, NULL, 0), -PVPMU_EINVAL));
	cr_assert(eq(int, pvpmu_call(pvpmu_driver(), PVPMU_HC_MAX, NULL, 0),
		     -PVPMU_EINVAL));
}

/*
 * A glue that places request blocks itself (call_block: the Linux module's
 * per-CPU slots) gets every block and its size instead of the in-place
 * doorbell, even a block the glue could not translate below 4 GiB, and
 * its OUT fields come back.
 */
static unsigned int bounced, bounced_nr;
static pvpmu_u64 bounced_size;

static long bounce_call(void *opaque, unsigned int nr, void *block,
			pvpmu_u64 size)
{
	(void)opaque;
	bounced++;
	bounced_nr   = nr;
	bounced_size = size;
	if (nr == PVPMU_HC_ECHO) {
		struct pvpmu_hc_echo *r = block;

		r->out = ~r->in;
	}
	return 0;
}

Test(sdk_calls, glue_places_blocks)
{
	static const struct pvpmu_glue_ops bounce_ops = {
		.virt_to_gpa = fake_virt_to_gpa,
		.map_gpa     = fake_map_gpa,
		.doorbell    = fake_doorbell,
		.call_block  = bounce_call,
	};
	const struct pvpmu_drv drv = {.ops = &bounce_ops};
	pvpmu_u64 out              = 0;

	calls     = 0;
	fail_high = 1;
	cr_assert(eq(int, pvpmu_hc_echo(&drv, 0x1234, &out), 0));
	cr_assert(eq(u64, out, ~0x1234ULL));
	cr_assert(eq(u32, bounced, 1));
	cr_assert(eq(u32, bounced_nr, PVPMU_HC_ECHO));
	cr_assert(eq(u64, bounced_size, sizeof(struct pvpmu_hc_echo)));
	cr_assert(eq(int, pvpmu_hc_close(&drv, 3), 0));
	cr_assert(eq(u32, bounced, 2));
	cr_assert(eq(u64, bounced_size, sizeof(struct pvpmu_hc_ctx)));
	/* No block: the doorbell, as before. */
	cr_assert(eq(int, pvpmu_hc_nop(&drv), 0));
	cr_assert(eq(u32, bounced, 2));
	cr_assert(eq(u32, calls, 1));
}

/* The fast read answers from the page, or falls back to the hypercall. */
Test(sdk_calls, fast_read_or_fallback)
{
	static struct pvpmu_shared_page page __attribute__((aligned(4096)));
	pfarg_pmd_t pmd = {.reg_num = 2};

	page = (struct pvpmu_shared_page){
		.seq = 2, .abi = PVPMU_ABI_VERSION, .fd = 4, .pmd_mask = 0x4};
	page.pmds[2].value = 77;
	answer             = 0;
	calls              = 0;
	cr_assert(eq(int, pfm_read_pmds_fast(&page, 4, &pmd, 1), 0));
	cr_assert(eq(u64, pmd.reg_value, 77));
	cr_assert(eq(u32, calls, 0), "no exit when the page answers");
	cr_assert(eq(int, pfm_read_pmds_fast(&page, 5, &pmd, 1), 0));
	cr_assert(eq(u32, calls, 1));
	cr_assert(eq(u32, pfm_block()->cmd, PFM_READ_PMDS));
	cr_assert(eq(int, pfm_block()->fd, 5));
	cr_assert(eq(int, pfm_read_pmds_fast(NULL, 4, &pmd, 1), 0));
	cr_assert(eq(u32, calls, 2));
	cr_assert(eq(int, pvpmu_read_fast(&page, 5, &pmd, 1), -PVPMU_EAGAIN));
	cr_assert(eq(u32, calls, 2));
}
