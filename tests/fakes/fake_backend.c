// SPDX-License-Identifier: MIT
/* fake_backend.c: the scripted failing backend of fake_backend.h. */
#include "fake_backend.h"

#include <errno.h>

uint64_t fake_backend_next_count;
int fake_backend_open_ret;
int fake_backend_read_ret;
unsigned int fake_backend_nr_open;
const char *fake_backend_ring_refusal;

static int fake_describe(const struct vpmu_backend *b, uint16_t code,
			 struct vpmu_event_info *info)
{
	(void)b;
	if (code != FAKE_EV_CODE)
		return -ENOENT;
	if (info)
		*info = (struct vpmu_event_info){.code = code, .name = "fake"};
	return 0;
}

static int fake_enumerate(const struct vpmu_backend *b, unsigned int idx,
			  struct vpmu_event_info *info)
{
	return idx ? -ENOENT : fake_describe(b, FAKE_EV_CODE, info);
}

static int fake_open(struct vpmu_bevent *e, uint64_t now_ns)
{
	(void)e, (void)now_ns;
	if (fake_backend_open_ret)
		return fake_backend_open_ret;
	fake_backend_nr_open++;
	return 0;
}

static void fake_close(struct vpmu_bevent *e)
{
	(void)e;
	fake_backend_nr_open--;
}

static int fake_read(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta)
{
	(void)e, (void)now_ns;
	*delta = fake_backend_read_ret ? 0 : fake_backend_next_count;
	return fake_backend_read_ret;
}

static const char *fake_refusal(const struct vpmu_backend *b,
				const struct vpmu_event *ev)
{
	(void)b;
	return ev->usr && ev->os ? NULL : fake_backend_ring_refusal;
}

const struct vpmu_backend_ops fake_backend = {
	.name      = "fake",
	.describe  = fake_describe,
	.enumerate = fake_enumerate,
	.open      = fake_open,
	.close     = fake_close,
	.read      = fake_read,
	.refusal   = fake_refusal,
};
