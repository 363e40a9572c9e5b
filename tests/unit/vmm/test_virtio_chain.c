// SPDX-License-Identifier: MIT
/*
 * test_virtio_chain.c: descriptor chains a hostile guest writes:
 * segments outside RAM, no status byte, loops, chains longer than the
 * queue, indexes outside the table, a lying avail->idx, and thousands of
 * random chains. Each ends with an error status, or (no status byte to
 * write) with length 0 and DEVICE_NEEDS_RESET; none hangs, and none
 * touches the guard pages around RAM.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "virtio_driver.h"

TestSuite(vmm_virtio_chain, .init = vd_setup, .fini = vd_teardown);

/* The chain cannot carry an answer: used with length 0, needs reset. */
static void assert_needs_reset_answer(void)
{
	cr_assert(eq(u32, vd_last_used().len, 0));
	cr_assert(eq(u8, *vd_status(), 0xff), "no status byte written");
	cr_assert(vd_needs_reset());
	cr_assert(
		eq(u32,
		   vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG,
		   VIRTIO_MMIO_INT_CONFIG));
	cr_assert(vd_irq_level);
}

Test(vmm_virtio_chain, data_outside_ram_is_ioerr_and_untouched)
{
	static const uint64_t bad[] = {
		RAM_BASE + RAM_SIZE - SECTOR / 2, /* half past the end */
		RAM_BASE - SECTOR,                /* below RAM */
		UINT64_MAX - 8,                   /* end wraps around */
	};
	uint8_t *good = vd_gpa(DATA_GPA);
	size_t i;

	vd_start(128);
	memset(vd_gpa(bad[0]), 0x11, SECTOR / 2);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* A good sector, then one not (or not all) in RAM. */
		memset(good, 0x22, SECTOR);
		vd_put_hdr(VIRTIO_BLK_T_IN, 0);
		*vd_status() = 0xff;
		vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
		vd_set_desc(1, DATA_GPA, SECTOR,
			    VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
		vd_set_desc(2, bad[i], SECTOR,
			    VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 3);
		vd_set_desc(3, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
		vd_kick(0);
		cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR), "row %zu",
			  i);
		cr_assert(eq(u32, vd_last_used().len, 1), "row %zu", i);
		/* The request was not started: not even the good part. */
		cr_assert(eq(u8, good[0], 0x22), "row %zu", i);
		cr_assert(eq(u8, *(uint8_t *)vd_gpa(bad[0]), 0x11), "row %zu",
			  i);
		cr_assert(vd_guards_intact(), "row %zu", i);
	}
	cr_assert(eq(u16, vd_used_idx(), 3));
	cr_assert(not(vd_needs_reset()), "the device can go on");
}

Test(vmm_virtio_chain, header_missing_outside_ram_or_short_is_ioerr)
{
	vd_start(128);
	*vd_status() = 0xff;
	vd_set_desc(0, RAM_BASE + RAM_SIZE, 16, VRING_DESC_F_NEXT, 1);
	vd_set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	vd_kick(0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));

	/* 8 of the header's 16 bytes. */
	vd_put_hdr(VIRTIO_BLK_T_FLUSH, 0);
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 8, VRING_DESC_F_NEXT, 1);
	vd_kick(0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));
	cr_assert(eq(u32, vd_last_used().len, 1));

	/* No header at all: the chain is the status byte alone. */
	*vd_status() = 0xff;
	vd_kick(1);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));

	/* The header flagged device-writable is no header either. */
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	vd_kick(0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));
	cr_assert(eq(u32, vd_last_used().len, 1));
	cr_assert(eq(u16, vd_used_idx(), 4));
	cr_assert(not(vd_needs_reset()));
	cr_assert(vd_guards_intact());
}

Test(vmm_virtio_chain, missing_or_readable_status_needs_reset)
{
	vd_start(128);
	vd_put_hdr(VIRTIO_BLK_T_IN, 0);
	*vd_status() = 0xff;
	/* The "status" descriptor lacks the write flag. */
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	vd_set_desc(1, STATUS_GPA, 1, 0, 0);
	vd_kick(0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	assert_needs_reset_answer();

	/* A device that needs a reset serves nothing more... */
	vd_set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	vd_kick(0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u8, *vd_status(), 0xff));

	/* ...until the driver resets it. */
	vd_start(128);
	cr_assert(not(vd_needs_reset()));
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
}

Test(vmm_virtio_chain, status_outside_ram_needs_reset)
{
	vd_start(128);
	vd_put_hdr(VIRTIO_BLK_T_FLUSH, 0);
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	vd_set_desc(1, RAM_BASE + RAM_SIZE, 1, VRING_DESC_F_WRITE, 0);
	*vd_status() = 0xff;
	vd_kick(0);
	assert_needs_reset_answer();
	cr_assert(vd_guards_intact());
}

Test(vmm_virtio_chain, descriptor_loop_ends_in_error)
{
	vd_start(128);
	vd_put_hdr(VIRTIO_BLK_T_IN, 0);
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	vd_set_desc(1, DATA_GPA, SECTOR, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
		    2);
	vd_set_desc(2, STATUS_GPA, 1, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
		    1);
	vd_kick(0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u32, vd_last_used().id, 0));
	assert_needs_reset_answer();
	cr_assert(vd_guards_intact());
}

Test(vmm_virtio_chain, chain_as_long_as_the_queue_works_one_more_does_not)
{
	uint16_t i;

	/* 8 descriptors: header, 6 sectors, status. */
	vd_start(8);
	vd_put_hdr(VIRTIO_BLK_T_IN, 10);
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	for (i = 1; i <= 6; i++)
		vd_set_desc(i, DATA_GPA + (i - 1) * SECTOR, SECTOR,
			    VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 1);
	vd_set_desc(7, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	vd_kick(0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, vd_last_used().len, 6 * SECTOR + 1));
	cr_assert(eq(u8, ((uint8_t *)vd_gpa(DATA_GPA))[5 * SECTOR],
		     vd_disk_byte(15 * SECTOR)));

	/* The 8th descriptor chains on: a 9th would revisit one. */
	*vd_status() = 0xff;
	vd_set_desc(7, STATUS_GPA, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		    0);
	vd_kick(0);
	cr_assert(eq(u16, vd_used_idx(), 2));
	assert_needs_reset_answer();
}

Test(vmm_virtio_chain, next_outside_the_table_needs_reset)
{
	vd_start(8);
	vd_put_hdr(VIRTIO_BLK_T_FLUSH, 0);
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 8);
	vd_kick(0);
	assert_needs_reset_answer();
}

Test(vmm_virtio_chain, readable_after_writable_or_indirect_needs_reset)
{
	vd_start(128);
	vd_put_hdr(VIRTIO_BLK_T_OUT, 0);
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	vd_set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
		    2);
	vd_set_desc(2, DATA_GPA, SECTOR, 0, 0);
	vd_kick(0);
	assert_needs_reset_answer();

	/* INDIRECT was not offered. */
	vd_start(128);
	vd_set_desc(0, DATA_GPA, 16 * 3, VRING_DESC_F_INDIRECT, 0);
	vd_kick(0);
	assert_needs_reset_answer();
}

Test(vmm_virtio_chain, head_outside_the_table_needs_reset)
{
	vd_start(8);
	*vd_status() = 0xff;
	vd_kick(8);
	cr_assert(eq(u16, vd_used_idx(), 0), "nothing to return it with");
	cr_assert(vd_needs_reset());
}

Test(vmm_virtio_chain, avail_index_beyond_the_ring_needs_reset)
{
	struct vring_avail *a = vd_gpa(AVAIL_GPA);

	vd_start(8);
	a->idx = htole16(9);
	vd_wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	cr_assert(eq(u16, vd_used_idx(), 0));
	cr_assert(vd_needs_reset());
}

/* xorshift64*: the same sequence on every run. */
static uint64_t rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Addresses a hostile driver would try, its own rings included. */
static uint64_t rnd_addr(void)
{
	switch (rnd() % 9) {
	case 0:
		return RAM_BASE + rnd() % RAM_SIZE;
	case 1:
		return RAM_BASE + RAM_SIZE - rnd() % 1024;
	case 2:
		return RAM_BASE - 1 - rnd() % 1024;
	case 3:
		return UINT64_MAX - rnd() % 1024;
	case 4:
		return DESC_GPA + rnd() % 0x3000;
	case 5:
		return HDR_GPA;
	case 6:
		return STATUS_GPA;
	default:
		return DATA_GPA + rnd() % 0x8000;
	}
}

static uint32_t rnd_len(void)
{
	static const uint32_t lens[] = {0, 1, 8, 16, 17, 512, 1024, 4096};

	if (rnd() % 8 == 0)
		return (uint32_t)rnd();
	return lens[rnd() % 8];
}

Test(vmm_virtio_chain, random_chains_stay_in_ram_and_end)
{
	static const uint32_t types[] = {
		VIRTIO_BLK_T_IN,     VIRTIO_BLK_T_OUT,     VIRTIO_BLK_T_FLUSH,
		VIRTIO_BLK_T_GET_ID, VIRTIO_BLK_T_DISCARD, 0x80000000,
	};
	unsigned int round, i, n, nr_served = 0, nr_resets = 0;
	uint16_t before;

	for (round = 0; round < 20000; round++) {
		if (round == 0 || vd_needs_reset()) {
			nr_resets += round != 0;
			vd_start(1U << (rnd() % 9));
		}
		vd_put_hdr(types[rnd() % 6],
			   rnd() % 4 ? rnd() % (NR_SECTORS + 2) : rnd());
		n = (unsigned int)(rnd() % vd_qnum) + 1;
		for (i = 0; i < n; i++)
			vd_set_desc((uint16_t)(rnd() % vd_qnum), rnd_addr(),
				    rnd_len(), (uint16_t)(rnd() % 8),
				    (uint16_t)(rnd() % (vd_qnum + 1)));
		before = vd_used_idx();
		vd_kick((uint16_t)(rnd() % (vd_qnum + 1)));
		cr_assert(vd_guards_intact(), "round %u", round);
		nr_served += vd_used_idx() != before;
	}
	/* Both outcomes happened: the walk is not trivially refusing. */
	cr_assert(lt(u32, 1000, nr_served));
	cr_assert(lt(u32, 1000, nr_resets));
}
