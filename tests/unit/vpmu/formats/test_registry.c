// SPDX-License-Identifier: MIT
/*
 * test_registry.c: format lookup by UUID (spec §3.5.2, §3.5.9), the buffer
 * allocation service (§3.5.5, §3.5.6) and the create/destroy sequence
 * (§3.1.1, §3.5.10-§3.5.13).
 */
#include <errno.h>
#include <stdint.h>

#include "fmt_test.h"

Test(vpmu_smpl_registry, finds_default_format_by_uuid)
{
	const uuid_t id               = PFM_DEFAULT_SMPL_UUID;
	const struct vpmu_smpl_fmt *f = NULL;

	/* §3.6: the default format is present on all implementations. */
	cr_assert(eq(int, vpmu_smpl_fmt_find(id, &f), 0));
	cr_assert(eq(ptr, (void *)f, (void *)&vpmu_smpl_fmt_default));
	cr_assert(eq(str, (char *)f->name, "default"));
}

Test(vpmu_smpl_registry, finds_nway_format_by_uuid)
{
	const uuid_t id               = PVPMU_NWAY_SMPL_UUID;
	const struct vpmu_smpl_fmt *f = NULL;

	cr_assert(eq(int, vpmu_smpl_fmt_find(id, &f), 0));
	cr_assert(eq(ptr, (void *)f, (void *)&vpmu_smpl_fmt_nway));
}

Test(vpmu_smpl_registry, unknown_uuid_is_einval)
{
	/* §3.5.2 TEST_UUID (24aab4dd-2144-4c1f-80c0-...): not a vpmu format. */
	const uuid_t id = {0x24, 0xaa, 0xb4, 0xdd, 0x21, 0x44, 0x4c, 0x1f,
			   0x80, 0xc0, 0x62, 0xc2, 0xe1, 0x7d, 0x37, 0x44};
	const struct vpmu_smpl_fmt *f = NULL;

	/* §3.5.9: EINVAL is the error for a format that is not registered. */
	cr_assert(eq(int, vpmu_smpl_fmt_find(id, &f), -EINVAL));
	cr_assert(eq(ptr, (void *)f, NULL));
}

Test(vpmu_smpl_registry, all_zero_uuid_means_no_format)
{
	const uuid_t zero             = {0};
	const uuid_t dfl              = PFM_DEFAULT_SMPL_UUID;
	const struct vpmu_smpl_fmt *f = NULL;

	/* §3.1.1: all zeroes in ctx_smpl_buf_id = no format. */
	cr_assert(vpmu_smpl_uuid_is_null(zero));
	cr_assert(not(vpmu_smpl_uuid_is_null(dfl)));
	cr_assert(eq(int, vpmu_smpl_fmt_find(zero, &f), -EINVAL));
}

Test(vpmu_smpl_registry, list_has_name_uuid_and_required_fields)
{
	size_t i, j, n = vpmu_smpl_fmt_count();

	/* §3.5.2: each format is listed with its UUID and logical name. */
	cr_assert(ge(sz, n, 2));
	cr_assert(eq(ptr, (void *)vpmu_smpl_fmt_at(n), NULL));
	for (i = 0; i < n; i++) {
		const struct vpmu_smpl_fmt *f = vpmu_smpl_fmt_at(i);
		const struct vpmu_smpl_fmt *g = NULL;

		/* §3.5.8: name, uuid and handler are required. */
		cr_assert(not(eq(ptr, (void *)f->name, NULL)));
		cr_assert(not(eq(ptr, (void *)f->handler, NULL)));
		cr_assert(not(vpmu_smpl_uuid_is_null(f->uuid)));
		/* §3.5.7: msgq_depth is at least 1. */
		cr_assert(ge(u32, f->msgq_depth, 1));
		cr_assert(eq(int, vpmu_smpl_fmt_find(f->uuid, &g), 0));
		cr_assert(eq(ptr, (void *)g, (void *)f));
		for (j = 0; j < i; j++) {
			cr_assert(
				not(eq(int,
				       uuid_compare(f->uuid,
						    vpmu_smpl_fmt_at(j)->uuid),
				       0)));
		}
	}
}

Test(vpmu_smpl_buf, alloc_is_page_aligned_rounded_and_zeroed)
{
	struct vpmu_smpl_buf b = {0};
	size_t ps              = ft_page();
	size_t i;

	cr_assert(eq(int, vpmu_smpl_buf_alloc(&b, ps + 1), 0));
	/* §3.5.6: at least 16-byte aligned; we need whole pages. */
	cr_assert(eq(u64, (uintptr_t)b.base % ps, 0));
	cr_assert(eq(sz, b.size, 2 * ps));
	for (i = 0; i < b.size; i++)
		cr_assert(eq(u8, ((unsigned char *)b.base)[i], 0));
	vpmu_smpl_buf_free(&b);
	cr_assert(eq(ptr, b.base, NULL));
	cr_assert(eq(sz, b.size, 0));
	vpmu_smpl_buf_free(&b); /* twice is harmless */
}

Test(vpmu_smpl_buf, roundup_edges)
{
	size_t ps = ft_page();

	cr_assert(eq(sz, vpmu_smpl_buf_roundup(1), ps));
	cr_assert(eq(sz, vpmu_smpl_buf_roundup(ps), ps));
	cr_assert(eq(sz, vpmu_smpl_buf_roundup(0), 0));
	cr_assert(eq(sz, vpmu_smpl_buf_roundup(SIZE_MAX), 0));
	cr_assert(eq(int, vpmu_smpl_buf_alloc(&(struct vpmu_smpl_buf){0}, 0),
		     -EINVAL));
}

/* A format that logs its callbacks, to check the create/destroy order. */
static char ft_log[16];
static size_t ft_nlog;

static void ft_note(char c)
{
	if (ft_nlog < sizeof(ft_log) - 1)
		ft_log[ft_nlog++] = c;
}

static int log_validate(uint32_t f, uint16_t n, const void *arg)
{
	(void)f;
	(void)n;
	ft_note('v');
	return *(const int *)arg < 0 ? -EPERM : 0;
}

static int log_getsize(uint32_t f, const void *arg, size_t *size)
{
	(void)f;
	ft_note('g');
	*size = (size_t) * (const int *)arg;
	return 0;
}

static int log_init(struct vpmu_smpl_buf *buf, const void *arg)
{
	if (*(const int *)arg == 4095)
		return -EIO; /* the init failure case */
	/* §3.5.12: the buffer exists and is zeroed when init runs. */
	ft_note(buf->base && ((char *)buf->base)[0] == 0 ? 'i' : 'I');
	return 0;
}

static int log_handler(struct vpmu_smpl_buf *buf,
		       const struct vpmu_smpl_ovfl_arg *arg, uint32_t *ctrl)
{
	(void)buf;
	(void)arg;
	*ctrl = 0;
	return 0;
}

static int log_exit(struct vpmu_smpl_buf *buf)
{
	ft_note(buf->base ? 'x' : 'X');
	return 0;
}

static const struct vpmu_smpl_fmt log_fmt = {
	.name     = "log",
	.arg_size = sizeof(int),
	.validate = log_validate,
	.getsize  = log_getsize,
	.init     = log_init,
	.handler  = log_handler,
	.exit     = log_exit,
};

Test(vpmu_smpl_create, runs_validate_getsize_alloc_init_then_exit)
{
	struct vpmu_smpl_buf b        = {0};
	int sz                        = 100;
	struct vpmu_smpl_create_arg a = {
		.num_pmds = 4, .arg = &sz, .size_max = SIZE_MAX};

	cr_assert(eq(int, vpmu_smpl_create(&log_fmt, &a, &b), 0));
	cr_assert(eq(str, ft_log, "vgi"));
	/* The charged size is what is mapped: whole pages. */
	cr_assert(eq(sz, b.size, ft_page()));
	cr_assert(eq(u32, b.num_pmds, 4));
	cr_assert(eq(int, vpmu_smpl_destroy(&b), 0));
	cr_assert(eq(str, ft_log, "vgix"));
	cr_assert(eq(ptr, b.base, NULL));
}

Test(vpmu_smpl_create, validate_error_is_returned_and_nothing_allocated)
{
	struct vpmu_smpl_buf b        = {0};
	int sz                        = -1;
	struct vpmu_smpl_create_arg a = {
		.num_pmds = 4, .arg = &sz, .size_max = SIZE_MAX};

	/* §3.5.10: the format's own errno fails the create. */
	cr_assert(eq(int, vpmu_smpl_create(&log_fmt, &a, &b), -EPERM));
	cr_assert(eq(str, ft_log, "v"));
	cr_assert(eq(ptr, b.base, NULL));
}

Test(vpmu_smpl_create, size_over_limit_is_enomem)
{
	struct vpmu_smpl_buf b        = {0};
	int sz                        = (int)ft_page() + 1;
	struct vpmu_smpl_create_arg a = {
		.num_pmds = 4, .arg = &sz, .size_max = ft_page()};

	/* §3.5.11: too big for the limit fails (digest §5.1: ENOMEM). */
	cr_assert(eq(int, vpmu_smpl_create(&log_fmt, &a, &b), -ENOMEM));
	cr_assert(eq(str, ft_log, "vg"));
	cr_assert(eq(ptr, b.base, NULL));
	cr_assert(eq(sz, b.size, 0));
}

Test(vpmu_smpl_create, zero_size_means_no_buffer)
{
	struct vpmu_smpl_buf b        = {0};
	int sz                        = 0;
	struct vpmu_smpl_create_arg a = {
		.num_pmds = 4, .arg = &sz, .size_max = 0};

	/* §3.5.11, §3.5.12: size 0 = no buffer; init and exit see NULL. */
	cr_assert(eq(int, vpmu_smpl_create(&log_fmt, &a, &b), 0));
	cr_assert(eq(ptr, b.base, NULL));
	cr_assert(eq(int, vpmu_smpl_destroy(&b), 0));
	cr_assert(eq(str, ft_log, "vgIX"));
}

Test(vpmu_smpl_create, init_error_unmaps_and_clears)
{
	struct vpmu_smpl_buf b        = {0};
	int sz                        = 4095;
	struct vpmu_smpl_create_arg a = {
		.num_pmds = 4, .arg = &sz, .size_max = SIZE_MAX};

	/* §3.5.12: an init error fails the create; nothing stays mapped. */
	cr_assert(eq(int, vpmu_smpl_create(&log_fmt, &a, &b), -EIO));
	cr_assert(eq(str, ft_log, "vg"));
	cr_assert(eq(ptr, b.base, NULL));
	cr_assert(eq(ptr, (void *)b.fmt, NULL));
}

Test(vpmu_smpl_create, format_without_callbacks_gets_no_buffer)
{
	static const struct vpmu_smpl_fmt bare = {.name    = "bare",
						  .handler = log_handler};
	struct vpmu_smpl_buf b                 = {0};
	struct vpmu_smpl_create_arg a          = {.num_pmds = 4};

	/* §3.5.10-§3.5.13: only the handler is required. */
	cr_assert(eq(int, vpmu_smpl_create(&bare, &a, &b), 0));
	cr_assert(eq(ptr, b.base, NULL));
	cr_assert(eq(int, vpmu_smpl_destroy(&b), 0));
	cr_assert(eq(int, vpmu_smpl_create(NULL, &a, &b), -EINVAL));
	cr_assert(eq(int, vpmu_smpl_create(&log_fmt, &a, &b), -EINVAL));
}

static int depth_handler(struct vpmu_smpl_buf *buf,
			 const struct vpmu_smpl_ovfl_arg *arg,
			 uint32_t *ovfl_ctrl)
{
	(void)buf;
	(void)arg;
	(void)ovfl_ctrl;
	return 0;
}

/*
 * §3.5.7: "fmt_msgq_depth ... values < 1 are forced to 1": a format asking
 * for a queue of 0 messages registers (and gets the one message every
 * context queue holds); above VPMU_FORMAT_MSGQ_MAX is still refused.
 */
Test(vpmu_smpl_registry, msgq_depth_below_one_is_forced_to_one)
{
	static struct vpmu_smpl_fmt f = {
		.name = "depth-zero",
		.uuid = {0x5e, 0x1d, 0x0e, 0x7a, 0x11, 0x22, 0x43, 0x33, 0x84,
			 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0x00},
		.handler = depth_handler,
	};
	char err[160] = "";

	f.msgq_depth = 0;
	cr_assert(eq(int, vpmu_smpl_fmt_check(&f, err, sizeof(err)), 0), "%s",
		  err);
	cr_assert(eq(int,
		     vpmu_smpl_fmt_register(&f, NULL, "test", err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(int, vpmu_smpl_fmt_unregister(f.uuid, NULL), 0));
	f.msgq_depth = VPMU_FORMAT_MSGQ_MAX + 1;
	cr_assert(eq(int, vpmu_smpl_fmt_check(&f, err, sizeof(err)), -EINVAL));
}
