// SPDX-License-Identifier: MIT
/*
 * test_virtio_blk.c: the virtio-blk requests of vmm/virtio, sent
 * as Linux's virtio_blk sends them: reads and writes land at the right
 * offsets of the disk file, flush, GET_ID, a read-only disk, requests
 * past the capacity or of partial sectors.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "virtio_driver.h"

TestSuite(vmm_virtio_blk, .init = vd_setup, .fini = vd_teardown);

Test(vmm_virtio_blk, read_lands_file_bytes_in_guest_memory)
{
	uint8_t *data = vd_gpa(DATA_GPA);
	uint32_t i;

	vd_start(128);
	vd_request(VIRTIO_BLK_T_IN, 3, 2 * SECTOR);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u32, vd_last_used().id, 0));
	cr_assert(eq(u32, vd_last_used().len, 2 * SECTOR + 1));
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	for (i = 0; i < 2 * SECTOR; i++)
		cr_assert(eq(u8, data[i], vd_disk_byte(3 * SECTOR + i)),
			  "byte %u", i);
	cr_assert(eq(u8, data[2 * SECTOR], 0), "nothing past the buffer");

	/* One used buffer: a vring interrupt, lowered by the driver's ACK. */
	cr_assert(eq(u32, vd_nr_irq_raises, 1));
	cr_assert(vd_irq_level);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS),
		     VIRTIO_MMIO_INT_VRING));
	vd_wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
	cr_assert(not(vd_irq_level));
	cr_assert(vd_guards_intact());
}

Test(vmm_virtio_blk, write_lands_in_file_at_sector_offset)
{
	uint8_t got[3 * SECTOR];
	uint32_t i;

	vd_start(128);
	for (i = 0; i < SECTOR; i++)
		((uint8_t *)vd_gpa(DATA_GPA))[i] = (uint8_t)(0x5a ^ i);
	vd_request(VIRTIO_BLK_T_OUT, 5, SECTOR);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, vd_last_used().len, 1), "only the status written");
	cr_assert(eq(long, pread(vd_disk_fd, got, sizeof(got), 4 * SECTOR),
		     (long)sizeof(got)));
	for (i = 0; i < SECTOR; i++) {
		cr_assert(eq(u8, got[i], vd_disk_byte(4 * SECTOR + i)));
		cr_assert(eq(u8, got[SECTOR + i], (uint8_t)(0x5a ^ i)));
		cr_assert(eq(u8, got[2 * SECTOR + i],
			     vd_disk_byte(6 * SECTOR + i)));
	}

	/* And it reads back through the device. */
	memset(vd_gpa(DATA_GPA), 0, SECTOR);
	vd_request(VIRTIO_BLK_T_IN, 5, SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(int, memcmp(vd_gpa(DATA_GPA), got + SECTOR, SECTOR), 0));
}

Test(vmm_virtio_blk, header_and_data_may_share_a_descriptor)
{
	uint8_t got[SECTOR];

	/* VERSION_1 implies ANY_LAYOUT: header and data in one buffer. */
	vd_start(128);
	vd_put_hdr(VIRTIO_BLK_T_OUT, 7);
	memset(vd_gpa(HDR_GPA + 16), 0x77, SECTOR);
	*vd_status() = 0xff;
	vd_set_desc(0, HDR_GPA, 16 + SECTOR, VRING_DESC_F_NEXT, 1);
	vd_set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	vd_kick(0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(long, pread(vd_disk_fd, got, SECTOR, 7 * SECTOR),
		     (long)SECTOR));
	cr_assert(eq(u8, got[0], 0x77));
	cr_assert(eq(u8, got[SECTOR - 1], 0x77));
}

Test(vmm_virtio_blk, flush_answers_ok)
{
	vd_start(128);
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, vd_last_used().len, 1));
}

Test(vmm_virtio_blk, get_id_returns_padded_serial)
{
	uint8_t want[VIRTIO_BLK_ID_BYTES] = SERIAL;

	vd_start(128);
	memset(vd_gpa(DATA_GPA), 0xee, 64);
	vd_request(VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, vd_last_used().len, VIRTIO_BLK_ID_BYTES + 1));
	cr_assert(eq(int, memcmp(vd_gpa(DATA_GPA), want, sizeof(want)), 0));
	cr_assert(eq(u8, ((uint8_t *)vd_gpa(DATA_GPA))[VIRTIO_BLK_ID_BYTES],
		     0xee));
}

Test(vmm_virtio_blk, unknown_request_type_is_unsupported)
{
	vd_start(128);
	vd_request(VIRTIO_BLK_T_DISCARD, 0, 0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_UNSUPP));
	cr_assert(eq(u32, vd_last_used().len, 1));
}

Test(vmm_virtio_blk, read_only_disk_offers_ro_and_refuses_writes)
{
	uint8_t got[SECTOR];
	uint32_t i;

	vd_make_dev(true);
	cr_assert(ne(u64, vd_device_features() & (1ULL << VIRTIO_BLK_F_RO), 0));
	vd_start(128);
	memset(vd_gpa(DATA_GPA), 0x33, SECTOR);
	vd_request(VIRTIO_BLK_T_OUT, 1, SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));
	cr_assert(
		eq(long, pread(vd_disk_fd, got, SECTOR, SECTOR), (long)SECTOR));
	for (i = 0; i < SECTOR; i++)
		cr_assert(eq(u8, got[i], vd_disk_byte(SECTOR + i)));

	/* Reads and flushes still work. */
	vd_request(VIRTIO_BLK_T_IN, 1, SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(
		eq(u8, ((uint8_t *)vd_gpa(DATA_GPA))[0], vd_disk_byte(SECTOR)));
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(not(vd_needs_reset()));
}

Test(vmm_virtio_blk, beyond_capacity_or_partial_sector_is_ioerr)
{
	static const struct {
		uint64_t sector;
		uint32_t len;
	} bad[] = {
		{NR_SECTORS - 1, 2 * SECTOR}, /* runs past the end */
		{NR_SECTORS, SECTOR},         /* starts at the end */
		{UINT64_MAX, SECTOR},         /* sector * 512 overflows */
		{UINT64_MAX / SECTOR + 1, SECTOR},
		{0, SECTOR + 1}, /* not whole sectors */
	};
	size_t i;

	vd_start(128);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(vd_gpa(DATA_GPA), 0xcc, 2 * SECTOR + 1);
		vd_request(VIRTIO_BLK_T_IN, bad[i].sector, bad[i].len);
		cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR), "row %zu",
			  i);
		cr_assert(eq(u32, vd_last_used().len, 1), "row %zu", i);
		cr_assert(eq(u8, ((uint8_t *)vd_gpa(DATA_GPA))[0], 0xcc),
			  "row %zu: buffer untouched", i);
		vd_request(VIRTIO_BLK_T_OUT, bad[i].sector, bad[i].len);
		cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR), "row %zu",
			  i);
	}
	/* The last whole sector is fine. */
	vd_request(VIRTIO_BLK_T_IN, NR_SECTORS - 1, SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(not(vd_needs_reset()));
}

Test(vmm_virtio_blk, host_io_errors_are_ioerr)
{
	struct vmm_virtio_blk_params p = {.serial = SERIAL};
	char path[64];
	int ro_fd;

	/* The file shrinks under the device: a short read, then EOF. */
	vd_start(128);
	cr_assert(eq(int, ftruncate(vd_disk_fd, 2 * SECTOR + SECTOR / 2), 0));
	vd_request(VIRTIO_BLK_T_IN, 1, 2 * SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));
	cr_assert(eq(u32, vd_last_used().len, 1));

	/* A writable disk on a descriptor opened read-only: EBADF. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", vd_disk_fd);
	ro_fd = open(path, O_RDONLY);
	cr_assert(ge(int, ro_fd, 0));
	p.fd = ro_fd;
	vmm_virtio_dev_destroy(vd_dev);
	vd_dev = NULL;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &vd_host, &vd_dev), 0));
	vd_start(128);
	vd_request(VIRTIO_BLK_T_OUT, 0, SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_IOERR));
	/* Reads still work, and the device goes on. */
	vd_request(VIRTIO_BLK_T_IN, 0, SECTOR);
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u8, ((uint8_t *)vd_gpa(DATA_GPA))[1], vd_disk_byte(1)));
	cr_assert(not(vd_needs_reset()));
	vmm_virtio_dev_destroy(vd_dev);
	vd_dev = NULL;
	close(ro_fd);
}
