// SPDX-License-Identifier: MIT
/*
 * virtio_driver.c: the test guest of virtio_driver.h: RAM between guard
 * pages, a temporary disk, and the register sequences of Linux's
 * virtio_mmio and virtio_blk drivers.
 */
#include "virtio_driver.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

#define GUARD     0x1000ULL
#define GUARD_PAT 0xa5

static uint8_t *mem; /* guard, RAM, guard */
static uint8_t *ram;
int vd_disk_fd = -1;
struct vmm_virtio_dev *vd_dev;
uint32_t vd_qnum;      /* the driver's queue size */
uint16_t vd_avail_idx; /* the driver's next avail->idx */
bool vd_irq_level;
unsigned int vd_nr_irq_raises;
unsigned int vd_producer_left; /* chains "another vCPU" still adds */

static void produce(void);

void *vd_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	(void)opaque;
	if (gpa < RAM_BASE || len > RAM_SIZE || gpa - RAM_BASE > RAM_SIZE - len)
		return NULL;
	/* The device looks at the available ring: another vCPU adds one. */
	if (vd_producer_left && gpa == AVAIL_GPA)
		produce();
	return ram + (gpa - RAM_BASE);
}

static void drive_irq(void *opaque, bool level)
{
	(void)opaque;
	vd_irq_level = level;
	if (level)
		vd_nr_irq_raises++;
}

const struct vmm_virtio_host vd_host = {
	.gpa_ptr = vd_gpa_ptr,
	.irq     = drive_irq,
};

void *vd_gpa(uint64_t addr)
{
	return ram + (addr - RAM_BASE);
}

/* Byte (i) of the disk as created: distinct per sector and offset. */
uint8_t vd_disk_byte(uint64_t i)
{
	return (uint8_t)(i / SECTOR * 31 + i % SECTOR);
}

static void make_disk(void)
{
	const char *dir = getenv("TMPDIR");
	uint8_t buf[NR_SECTORS * SECTOR];
	char path[512];
	uint64_t i;

	snprintf(path, sizeof(path), "%s/vpmu-blk-XXXXXX",
		 dir && *dir ? dir : "/var/tmp");
	vd_disk_fd = mkstemp(path);
	cr_assert(ge(int, vd_disk_fd, 0), "mkstemp %s", path);
	unlink(path);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = vd_disk_byte(i);
	cr_assert(eq(long, pwrite(vd_disk_fd, buf, sizeof(buf), 0),
		     (long)sizeof(buf)));
}

void vd_make_dev(bool read_only)
{
	struct vmm_virtio_blk_params p = {
		.fd        = vd_disk_fd,
		.read_only = read_only,
		.serial    = SERIAL,
	};

	vmm_virtio_dev_destroy(vd_dev);
	vd_dev = NULL;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &vd_host, &vd_dev), 0));
}

void vd_setup(void)
{
	mem = aligned_alloc(GUARD, RAM_SIZE + 2 * GUARD);
	cr_assert(not(eq(ptr, mem, NULL)));
	memset(mem, GUARD_PAT, RAM_SIZE + 2 * GUARD);
	ram = mem + GUARD;
	memset(ram, 0, RAM_SIZE);
	make_disk();
	vd_make_dev(false);
}

void vd_teardown(void)
{
	vmm_virtio_dev_destroy(vd_dev);
	vd_dev = NULL;
	close(vd_disk_fd);
	free(mem);
}

bool vd_guards_intact(void)
{
	uint64_t i;

	for (i = 0; i < GUARD; i++) {
		if (mem[i] != GUARD_PAT ||
		    mem[GUARD + RAM_SIZE + i] != GUARD_PAT)
			return false;
	}
	return true;
}

uint32_t vd_rd(uint64_t off)
{
	uint32_t v = 0xdeadbeef;

	cr_assert(
		eq(int, vmm_virtio_mmio_access(vd_dev, off, false, &v, 4), 0));
	return le32toh(v);
}

void vd_wr(uint64_t off, uint32_t v)
{
	v = htole32(v);
	cr_assert(eq(int, vmm_virtio_mmio_access(vd_dev, off, true, &v, 4), 0));
}

uint64_t vd_device_features(void)
{
	uint64_t f;

	vd_wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	f = (uint64_t)vd_rd(VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	vd_wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	return f | vd_rd(VIRTIO_MMIO_DEVICE_FEATURES);
}

/*
 * virtio_dev_probe + virtio_mmio's finalize_features: reset, ACKNOWLEDGE,
 * DRIVER, accept (accept), FEATURES_OK. Returns Status as read back.
 */
uint32_t vd_negotiate(uint64_t accept)
{
	uint32_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	vd_wr(VIRTIO_MMIO_STATUS, 0);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_STATUS), 0));
	vd_wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vd_wr(VIRTIO_MMIO_STATUS, s);
	vd_wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vd_wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(accept >> 32));
	vd_wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vd_wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)accept);
	vd_wr(VIRTIO_MMIO_STATUS, s | VIRTIO_CONFIG_S_FEATURES_OK);
	return vd_rd(VIRTIO_MMIO_STATUS);
}

void vd_negotiate_ok(void)
{
	cr_assert(eq(u32,
		     vd_negotiate(vd_device_features()) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     VIRTIO_CONFIG_S_FEATURES_OK));
}

/* vm_setup_vq for queue 0 with (num) entries, up to QueueReady. */
void vd_program_queue(uint32_t num, uint64_t desc_gpa)
{
	memset(vd_gpa(DESC_GPA), 0, 0x3000);
	vd_qnum      = num;
	vd_avail_idx = 0;
	vd_wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_QUEUE_READY), 0));
	cr_assert(ge(u32, vd_rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 1));
	vd_wr(VIRTIO_MMIO_QUEUE_NUM, num);
	vd_wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc_gpa);
	vd_wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc_gpa >> 32));
	vd_wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)AVAIL_GPA);
	vd_wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(AVAIL_GPA >> 32));
	vd_wr(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)USED_GPA);
	vd_wr(VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(USED_GPA >> 32));
}

/* The whole of vm_setup_vq; returns QueueReady as read back. */
uint32_t vd_setup_queue(uint32_t num, uint64_t desc_gpa)
{
	vd_program_queue(num, desc_gpa);
	vd_wr(VIRTIO_MMIO_QUEUE_READY, 1);
	return vd_rd(VIRTIO_MMIO_QUEUE_READY);
}

void vd_driver_ok(void)
{
	vd_wr(VIRTIO_MMIO_STATUS,
	      vd_rd(VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_DRIVER_OK);
}

/* The whole Linux probe: features, queue 0 of (num), DRIVER_OK. */
void vd_start(uint32_t num)
{
	uint64_t f = vd_device_features();

	cr_assert(eq(u32, vd_negotiate(f) & VIRTIO_CONFIG_S_FEATURES_OK,
		     VIRTIO_CONFIG_S_FEATURES_OK));
	cr_assert(eq(u32, vd_setup_queue(num, DESC_GPA), 1));
	vd_driver_ok();
}

void vd_set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		 uint16_t next)
{
	struct vring_desc *d = (struct vring_desc *)vd_gpa(DESC_GPA) + i;

	d->addr  = htole64(addr);
	d->len   = htole32(len);
	d->flags = htole16(flags);
	d->next  = htole16(next);
}

static struct vring_used *used_ring(void)
{
	return vd_gpa(USED_GPA);
}

uint16_t vd_used_idx(void)
{
	return le16toh(used_ring()->idx);
}

/* Make chain (head) available and notify queue 0. */
void vd_kick(uint16_t head)
{
	struct vring_avail *a = vd_gpa(AVAIL_GPA);

	a->ring[vd_avail_idx % vd_qnum] = htole16(head);
	vd_avail_idx++;
	__atomic_store_n(&a->idx, htole16(vd_avail_idx), __ATOMIC_RELEASE);
	vd_wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

/* Another vCPU adds chain 0 again, without notifying, if there is room. */
static void produce(void)
{
	struct vring_avail *a = vd_gpa(AVAIL_GPA);

	if ((uint16_t)(vd_avail_idx - vd_used_idx()) >= vd_qnum)
		return;
	vd_producer_left--;
	a->ring[vd_avail_idx % vd_qnum] = 0;
	vd_avail_idx++;
	__atomic_store_n(&a->idx, htole16(vd_avail_idx), __ATOMIC_RELEASE);
}

void vd_put_hdr(uint32_t type, uint64_t sector)
{
	struct virtio_blk_outhdr h = {
		.type   = htole32(type),
		.sector = htole64(sector),
	};

	memcpy(vd_gpa(HDR_GPA), &h, sizeof(h));
}

uint8_t *vd_status(void)
{
	return vd_gpa(STATUS_GPA);
}

/*
 * A Linux-shaped request in descriptors 0, 1, 2: header, (len) bytes of
 * data at DATA_GPA (device-writable for T_IN and T_GET_ID), status.
 * Waits for nothing: the device serves it during the notify.
 */
void vd_request(uint32_t type, uint64_t sector, uint32_t len)
{
	uint16_t dflags = VRING_DESC_F_NEXT;

	if (type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID)
		dflags |= VRING_DESC_F_WRITE;
	vd_put_hdr(type, sector);
	*vd_status() = 0xff;
	if (len) {
		vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
		vd_set_desc(1, DATA_GPA, len, dflags, 2);
	} else {
		vd_set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 2);
	}
	vd_set_desc(2, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	vd_kick(0);
}

/* The used element the last request produced. */
struct vring_used_elem vd_last_used(void)
{
	struct vring_used_elem e =
		used_ring()->ring[(vd_used_idx() - 1) % vd_qnum];

	e.id  = le32toh(e.id);
	e.len = le32toh(e.len);
	return e;
}

bool vd_needs_reset(void)
{
	return vd_rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

uint32_t vd_cfg32(uint64_t off)
{
	return vd_rd(VIRTIO_MMIO_CONFIG + off);
}