// SPDX-License-Identifier: MIT
/*
 * test_virtio_blk.c: the virtio-blk device on virtio-mmio (vmm/virtio),
 * driven as the Linux driver drives it: probe the registers, negotiate
 * features, set up queue 0, write descriptor chains, notify, read the
 * used ring and the status byte. Guest RAM is a buffer at a fake GPA with
 * guard pages either side that gpa_ptr never hands out; the disk is a
 * temporary file. Hostile chains (outside RAM, loops, too long, no status
 * byte) must end in an error answer or DEVICE_NEEDS_RESET, never a hang,
 * and must leave the guards alone.
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

#include "vmm_virtio.h"

#define RAM_BASE  0x40000000ULL
#define RAM_SIZE  0x100000ULL
#define GUARD     0x1000ULL
#define GUARD_PAT 0xa5

#define NR_SECTORS 64ULL
#define SECTOR     512U

/* Guest-physical layout the fake driver uses. */
#define DESC_GPA   (RAM_BASE + 0x0000)
#define AVAIL_GPA  (RAM_BASE + 0x1000)
#define USED_GPA   (RAM_BASE + 0x2000)
#define HDR_GPA    (RAM_BASE + 0x3000)
#define STATUS_GPA (RAM_BASE + 0x3800)
#define DATA_GPA   (RAM_BASE + 0x10000)

#define SERIAL "vpmu-disk-0"

static uint8_t *mem; /* guard, RAM, guard */
static uint8_t *ram;
static int disk_fd = -1;
static struct vmm_virtio_dev *dev;
static uint32_t qnum;      /* the driver's queue size */
static uint16_t avail_idx; /* the driver's next avail->idx */
static bool irq_level;
static unsigned int nr_irq_raises;
static unsigned int producer_left; /* chains "another vCPU" still adds */

static void produce(void);

static void *fake_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	(void)opaque;
	if (gpa < RAM_BASE || len > RAM_SIZE || gpa - RAM_BASE > RAM_SIZE - len)
		return NULL;
	/* The device looks at the available ring: another vCPU adds one. */
	if (producer_left && gpa == AVAIL_GPA)
		produce();
	return ram + (gpa - RAM_BASE);
}

static void fake_irq(void *opaque, bool level)
{
	(void)opaque;
	irq_level = level;
	if (level)
		nr_irq_raises++;
}

static const struct vmm_virtio_host host = {
	.gpa_ptr = fake_gpa_ptr,
	.irq     = fake_irq,
};

static void *gpa(uint64_t addr)
{
	return ram + (addr - RAM_BASE);
}

/* Byte (i) of the disk as created: distinct per sector and offset. */
static uint8_t disk_byte(uint64_t i)
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
	disk_fd = mkstemp(path);
	cr_assert(ge(int, disk_fd, 0), "mkstemp %s", path);
	unlink(path);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = disk_byte(i);
	cr_assert(eq(long, pwrite(disk_fd, buf, sizeof(buf), 0),
		     (long)sizeof(buf)));
}

static void make_dev(bool read_only)
{
	struct vmm_virtio_blk_params p = {
		.fd        = disk_fd,
		.read_only = read_only,
		.serial    = SERIAL,
	};

	vmm_virtio_dev_destroy(dev);
	dev = NULL;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &host, &dev), 0));
}

static void setup(void)
{
	mem = aligned_alloc(GUARD, RAM_SIZE + 2 * GUARD);
	cr_assert(not(eq(ptr, mem, NULL)));
	memset(mem, GUARD_PAT, RAM_SIZE + 2 * GUARD);
	ram = mem + GUARD;
	memset(ram, 0, RAM_SIZE);
	make_disk();
	make_dev(false);
}

static void teardown(void)
{
	vmm_virtio_dev_destroy(dev);
	dev = NULL;
	close(disk_fd);
	free(mem);
}

TestSuite(vmm_virtio_blk, .init = setup, .fini = teardown);

static bool guards_intact(void)
{
	uint64_t i;

	for (i = 0; i < GUARD; i++) {
		if (mem[i] != GUARD_PAT ||
		    mem[GUARD + RAM_SIZE + i] != GUARD_PAT)
			return false;
	}
	return true;
}

static uint32_t rd(uint64_t off)
{
	uint32_t v = 0xdeadbeef;

	cr_assert(eq(int, vmm_virtio_mmio_access(dev, off, false, &v, 4), 0));
	return le32toh(v);
}

static void wr(uint64_t off, uint32_t v)
{
	v = htole32(v);
	cr_assert(eq(int, vmm_virtio_mmio_access(dev, off, true, &v, 4), 0));
}

static uint64_t device_features(void)
{
	uint64_t f;

	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	f = (uint64_t)rd(VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	return f | rd(VIRTIO_MMIO_DEVICE_FEATURES);
}

/*
 * virtio_dev_probe + virtio_mmio's finalize_features: reset, ACKNOWLEDGE,
 * DRIVER, accept (accept), FEATURES_OK. Returns Status as read back.
 */
static uint32_t negotiate(uint64_t accept)
{
	uint32_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	wr(VIRTIO_MMIO_STATUS, 0);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_STATUS), 0));
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	wr(VIRTIO_MMIO_STATUS, s);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(accept >> 32));
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)accept);
	wr(VIRTIO_MMIO_STATUS, s | VIRTIO_CONFIG_S_FEATURES_OK);
	return rd(VIRTIO_MMIO_STATUS);
}

static void negotiate_ok(void)
{
	cr_assert(eq(u32,
		     negotiate(device_features()) & VIRTIO_CONFIG_S_FEATURES_OK,
		     VIRTIO_CONFIG_S_FEATURES_OK));
}

/* vm_setup_vq for queue 0 with (num) entries, up to QueueReady. */
static void program_queue(uint32_t num, uint64_t desc_gpa)
{
	memset(gpa(DESC_GPA), 0, 0x3000);
	qnum      = num;
	avail_idx = 0;
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_QUEUE_READY), 0));
	cr_assert(ge(u32, rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 1));
	wr(VIRTIO_MMIO_QUEUE_NUM, num);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc_gpa);
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc_gpa >> 32));
	wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)AVAIL_GPA);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(AVAIL_GPA >> 32));
	wr(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)USED_GPA);
	wr(VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(USED_GPA >> 32));
}

/* The whole of vm_setup_vq; returns QueueReady as read back. */
static uint32_t setup_queue(uint32_t num, uint64_t desc_gpa)
{
	program_queue(num, desc_gpa);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	return rd(VIRTIO_MMIO_QUEUE_READY);
}

static void driver_ok(void)
{
	wr(VIRTIO_MMIO_STATUS,
	   rd(VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_DRIVER_OK);
}

/* The whole Linux probe: features, queue 0 of (num), DRIVER_OK. */
static void start(uint32_t num)
{
	uint64_t f = device_features();

	cr_assert(eq(u32, negotiate(f) & VIRTIO_CONFIG_S_FEATURES_OK,
		     VIRTIO_CONFIG_S_FEATURES_OK));
	cr_assert(eq(u32, setup_queue(num, DESC_GPA), 1));
	driver_ok();
}

static void set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct vring_desc *d = (struct vring_desc *)gpa(DESC_GPA) + i;

	d->addr  = htole64(addr);
	d->len   = htole32(len);
	d->flags = htole16(flags);
	d->next  = htole16(next);
}

static struct vring_used *used(void)
{
	return gpa(USED_GPA);
}

static uint16_t used_idx(void)
{
	return le16toh(used()->idx);
}

/* Make chain (head) available and notify queue 0. */
static void kick(uint16_t head)
{
	struct vring_avail *a = gpa(AVAIL_GPA);

	a->ring[avail_idx % qnum] = htole16(head);
	avail_idx++;
	__atomic_store_n(&a->idx, htole16(avail_idx), __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

/* Another vCPU adds chain 0 again, without notifying, if there is room. */
static void produce(void)
{
	struct vring_avail *a = gpa(AVAIL_GPA);

	if ((uint16_t)(avail_idx - used_idx()) >= qnum)
		return;
	producer_left--;
	a->ring[avail_idx % qnum] = 0;
	avail_idx++;
	__atomic_store_n(&a->idx, htole16(avail_idx), __ATOMIC_RELEASE);
}

static void put_hdr(uint32_t type, uint64_t sector)
{
	struct virtio_blk_outhdr h = {
		.type   = htole32(type),
		.sector = htole64(sector),
	};

	memcpy(gpa(HDR_GPA), &h, sizeof(h));
}

static uint8_t *status(void)
{
	return gpa(STATUS_GPA);
}

/*
 * A Linux-shaped request in descriptors 0, 1, 2: header, (len) bytes of
 * data at DATA_GPA (device-writable for T_IN and T_GET_ID), status.
 * Waits for nothing: the device serves it during the notify.
 */
static void request(uint32_t type, uint64_t sector, uint32_t len)
{
	uint16_t dflags = VRING_DESC_F_NEXT;

	if (type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID)
		dflags |= VRING_DESC_F_WRITE;
	put_hdr(type, sector);
	*status() = 0xff;
	if (len) {
		set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
		set_desc(1, DATA_GPA, len, dflags, 2);
	} else {
		set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 2);
	}
	set_desc(2, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	kick(0);
}

/* The used element the last request produced. */
static struct vring_used_elem last_used(void)
{
	struct vring_used_elem e = used()->ring[(used_idx() - 1) % qnum];

	e.id  = le32toh(e.id);
	e.len = le32toh(e.len);
	return e;
}

static bool needs_reset(void)
{
	return rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

static uint32_t cfg32(uint64_t off)
{
	return rd(VIRTIO_MMIO_CONFIG + off);
}

Test(vmm_virtio_blk, probe_values)
{
	uint64_t f = device_features();
	uint64_t v = 0;
	uint16_t w = 0;

	cr_assert(eq(u32, rd(VIRTIO_MMIO_MAGIC_VALUE), 0x74726976));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_VERSION), 2));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_DEVICE_ID), 2));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_VENDOR_ID), VMM_VIRTIO_VENDOR_ID));
	cr_assert(eq(u64, f,
		     (1ULL << VIRTIO_F_VERSION_1) |
			     (1ULL << VIRTIO_BLK_F_FLUSH) |
			     (1ULL << VIRTIO_BLK_F_BLK_SIZE) |
			     (1ULL << VIRTIO_BLK_F_SEG_MAX)));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 256));
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 0), "one queue");
	cr_assert(eq(u32, rd(VIRTIO_MMIO_STATUS), 0));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_CONFIG_GENERATION), 0));

	/* Capacity as Linux reads a 64-bit field: two 32-bit halves. */
	cr_assert(eq(u32, cfg32(0), NR_SECTORS));
	cr_assert(eq(u32, cfg32(4), 0));
	cr_assert(eq(u32, cfg32(offsetof(struct virtio_blk_config, seg_max)),
		     254));
	cr_assert(eq(u32, cfg32(offsetof(struct virtio_blk_config, blk_size)),
		     512));
	cr_assert(eq(
		int,
		vmm_virtio_mmio_access(dev, VIRTIO_MMIO_CONFIG, false, &v, 8),
		0));
	cr_assert(eq(u64, le64toh(v), NR_SECTORS));
	cr_assert(
		eq(int,
		   vmm_virtio_mmio_access(
			   dev,
			   VIRTIO_MMIO_CONFIG +
				   offsetof(struct virtio_blk_config, blk_size),
			   false, &w, 2),
		   0));
	cr_assert(eq(u16, le16toh(w), 512));
	/* Past the configuration space: zeros. */
	cr_assert(eq(u32, rd(VIRTIO_MMIO_CONFIG + 0x200), 0));
}

Test(vmm_virtio_blk, bad_register_access_is_refused_and_reads_zero)
{
	uint16_t w = 0xffff;
	uint32_t v = 0xffffffff;

	cr_assert(eq(int,
		     vmm_virtio_mmio_access(dev, VIRTIO_MMIO_MAGIC_VALUE, false,
					    &w, 2),
		     -EINVAL));
	cr_assert(eq(u16, w, 0));
	cr_assert(eq(int,
		     vmm_virtio_mmio_access(dev, VIRTIO_MMIO_MAGIC_VALUE + 1,
					    false, &v, 4),
		     -EINVAL));
	cr_assert(eq(u32, v, 0));
	v = 0xffffffff;
	cr_assert(eq(
		int,
		vmm_virtio_mmio_access(dev, VMM_VIRTIO_MMIO_SIZE, false, &v, 4),
		-EINVAL));
	cr_assert(eq(u32, v, 0));
	/* A write to a read-only register changes nothing. */
	wr(VIRTIO_MMIO_MAGIC_VALUE, 0);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_MAGIC_VALUE), 0x74726976));
}

Test(vmm_virtio_blk, read_lands_file_bytes_in_guest_memory)
{
	uint8_t *data = gpa(DATA_GPA);
	uint32_t i;

	start(128);
	request(VIRTIO_BLK_T_IN, 3, 2 * SECTOR);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u32, last_used().id, 0));
	cr_assert(eq(u32, last_used().len, 2 * SECTOR + 1));
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	for (i = 0; i < 2 * SECTOR; i++)
		cr_assert(eq(u8, data[i], disk_byte(3 * SECTOR + i)), "byte %u",
			  i);
	cr_assert(eq(u8, data[2 * SECTOR], 0), "nothing past the buffer");

	/* One used buffer: a vring interrupt, lowered by the driver's ACK. */
	cr_assert(eq(u32, nr_irq_raises, 1));
	cr_assert(irq_level);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_INTERRUPT_STATUS),
		     VIRTIO_MMIO_INT_VRING));
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
	cr_assert(not(irq_level));
	cr_assert(guards_intact());
}

Test(vmm_virtio_blk, write_lands_in_file_at_sector_offset)
{
	uint8_t got[3 * SECTOR];
	uint32_t i;

	start(128);
	for (i = 0; i < SECTOR; i++)
		((uint8_t *)gpa(DATA_GPA))[i] = (uint8_t)(0x5a ^ i);
	request(VIRTIO_BLK_T_OUT, 5, SECTOR);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, last_used().len, 1), "only the status written");
	cr_assert(eq(long, pread(disk_fd, got, sizeof(got), 4 * SECTOR),
		     (long)sizeof(got)));
	for (i = 0; i < SECTOR; i++) {
		cr_assert(eq(u8, got[i], disk_byte(4 * SECTOR + i)));
		cr_assert(eq(u8, got[SECTOR + i], (uint8_t)(0x5a ^ i)));
		cr_assert(
			eq(u8, got[2 * SECTOR + i], disk_byte(6 * SECTOR + i)));
	}

	/* And it reads back through the device. */
	memset(gpa(DATA_GPA), 0, SECTOR);
	request(VIRTIO_BLK_T_IN, 5, SECTOR);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(int, memcmp(gpa(DATA_GPA), got + SECTOR, SECTOR), 0));
}

Test(vmm_virtio_blk, header_and_data_may_share_a_descriptor)
{
	uint8_t got[SECTOR];

	/* VERSION_1 implies ANY_LAYOUT: header and data in one buffer. */
	start(128);
	put_hdr(VIRTIO_BLK_T_OUT, 7);
	memset(gpa(HDR_GPA + 16), 0x77, SECTOR);
	*status() = 0xff;
	set_desc(0, HDR_GPA, 16 + SECTOR, VRING_DESC_F_NEXT, 1);
	set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	kick(0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(long, pread(disk_fd, got, SECTOR, 7 * SECTOR),
		     (long)SECTOR));
	cr_assert(eq(u8, got[0], 0x77));
	cr_assert(eq(u8, got[SECTOR - 1], 0x77));
}

Test(vmm_virtio_blk, flush_answers_ok)
{
	start(128);
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, last_used().len, 1));
}

Test(vmm_virtio_blk, get_id_returns_padded_serial)
{
	uint8_t want[VIRTIO_BLK_ID_BYTES] = SERIAL;

	start(128);
	memset(gpa(DATA_GPA), 0xee, 64);
	request(VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, last_used().len, VIRTIO_BLK_ID_BYTES + 1));
	cr_assert(eq(int, memcmp(gpa(DATA_GPA), want, sizeof(want)), 0));
	cr_assert(
		eq(u8, ((uint8_t *)gpa(DATA_GPA))[VIRTIO_BLK_ID_BYTES], 0xee));
}

Test(vmm_virtio_blk, unknown_request_type_is_unsupported)
{
	start(128);
	request(VIRTIO_BLK_T_DISCARD, 0, 0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_UNSUPP));
	cr_assert(eq(u32, last_used().len, 1));
}

Test(vmm_virtio_blk, read_only_disk_offers_ro_and_refuses_writes)
{
	uint8_t got[SECTOR];
	uint32_t i;

	make_dev(true);
	cr_assert(ne(u64, device_features() & (1ULL << VIRTIO_BLK_F_RO), 0));
	start(128);
	memset(gpa(DATA_GPA), 0x33, SECTOR);
	request(VIRTIO_BLK_T_OUT, 1, SECTOR);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_IOERR));
	cr_assert(eq(long, pread(disk_fd, got, SECTOR, SECTOR), (long)SECTOR));
	for (i = 0; i < SECTOR; i++)
		cr_assert(eq(u8, got[i], disk_byte(SECTOR + i)));

	/* Reads and flushes still work. */
	request(VIRTIO_BLK_T_IN, 1, SECTOR);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u8, ((uint8_t *)gpa(DATA_GPA))[0], disk_byte(SECTOR)));
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(not(needs_reset()));
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

	start(128);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(gpa(DATA_GPA), 0xcc, 2 * SECTOR + 1);
		request(VIRTIO_BLK_T_IN, bad[i].sector, bad[i].len);
		cr_assert(eq(u8, *status(), VIRTIO_BLK_S_IOERR), "row %zu", i);
		cr_assert(eq(u32, last_used().len, 1), "row %zu", i);
		cr_assert(eq(u8, ((uint8_t *)gpa(DATA_GPA))[0], 0xcc),
			  "row %zu: buffer untouched", i);
		request(VIRTIO_BLK_T_OUT, bad[i].sector, bad[i].len);
		cr_assert(eq(u8, *status(), VIRTIO_BLK_S_IOERR), "row %zu", i);
	}
	/* The last whole sector is fine. */
	request(VIRTIO_BLK_T_IN, NR_SECTORS - 1, SECTOR);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(not(needs_reset()));
}

Test(vmm_virtio_blk, data_outside_ram_is_ioerr_and_untouched)
{
	static const uint64_t bad[] = {
		RAM_BASE + RAM_SIZE - SECTOR / 2, /* half past the end */
		RAM_BASE - SECTOR,                /* below RAM */
		UINT64_MAX - 8,                   /* end wraps around */
	};
	uint8_t *good = gpa(DATA_GPA);
	size_t i;

	start(128);
	memset(gpa(bad[0]), 0x11, SECTOR / 2);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* A good sector, then one not (or not all) in RAM. */
		memset(good, 0x22, SECTOR);
		put_hdr(VIRTIO_BLK_T_IN, 0);
		*status() = 0xff;
		set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
		set_desc(1, DATA_GPA, SECTOR,
			 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
		set_desc(2, bad[i], SECTOR,
			 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 3);
		set_desc(3, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
		kick(0);
		cr_assert(eq(u8, *status(), VIRTIO_BLK_S_IOERR), "row %zu", i);
		cr_assert(eq(u32, last_used().len, 1), "row %zu", i);
		/* The request was not started: not even the good part. */
		cr_assert(eq(u8, good[0], 0x22), "row %zu", i);
		cr_assert(eq(u8, *(uint8_t *)gpa(bad[0]), 0x11), "row %zu", i);
		cr_assert(guards_intact(), "row %zu", i);
	}
	cr_assert(eq(u16, used_idx(), 3));
	cr_assert(not(needs_reset()), "the device can go on");
}

Test(vmm_virtio_blk, header_outside_ram_or_short_is_ioerr)
{
	start(128);
	*status() = 0xff;
	set_desc(0, RAM_BASE + RAM_SIZE, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	kick(0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_IOERR));

	put_hdr(VIRTIO_BLK_T_IN, 0);
	*status() = 0xff;
	set_desc(0, HDR_GPA, 8, VRING_DESC_F_NEXT, 1);
	kick(0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_IOERR));
	cr_assert(eq(u32, last_used().len, 1));
	cr_assert(guards_intact());
}

/* The chain cannot carry an answer: used with length 0, needs reset. */
static void assert_needs_reset_answer(void)
{
	cr_assert(eq(u32, last_used().len, 0));
	cr_assert(eq(u8, *status(), 0xff), "no status byte written");
	cr_assert(needs_reset());
	cr_assert(eq(u32,
		     rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG,
		     VIRTIO_MMIO_INT_CONFIG));
	cr_assert(irq_level);
}

Test(vmm_virtio_blk, missing_or_readable_status_needs_reset)
{
	start(128);
	put_hdr(VIRTIO_BLK_T_IN, 0);
	*status() = 0xff;
	/* The "status" descriptor lacks the write flag. */
	set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, STATUS_GPA, 1, 0, 0);
	kick(0);
	cr_assert(eq(u16, used_idx(), 1));
	assert_needs_reset_answer();

	/* A device that needs a reset serves nothing more... */
	set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	kick(0);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u8, *status(), 0xff));

	/* ...until the driver resets it. */
	start(128);
	cr_assert(not(needs_reset()));
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
}

Test(vmm_virtio_blk, status_outside_ram_needs_reset)
{
	start(128);
	put_hdr(VIRTIO_BLK_T_FLUSH, 0);
	set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, RAM_BASE + RAM_SIZE, 1, VRING_DESC_F_WRITE, 0);
	*status() = 0xff;
	kick(0);
	assert_needs_reset_answer();
	cr_assert(guards_intact());
}

Test(vmm_virtio_blk, descriptor_loop_ends_in_error)
{
	start(128);
	put_hdr(VIRTIO_BLK_T_IN, 0);
	*status() = 0xff;
	set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, DATA_GPA, SECTOR, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
		 2);
	set_desc(2, STATUS_GPA, 1, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	kick(0);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u32, last_used().id, 0));
	assert_needs_reset_answer();
	cr_assert(guards_intact());
}

Test(vmm_virtio_blk, chain_as_long_as_the_queue_works_one_more_does_not)
{
	uint16_t i;

	/* 8 descriptors: header, 6 sectors, status. */
	start(8);
	put_hdr(VIRTIO_BLK_T_IN, 10);
	*status() = 0xff;
	set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	for (i = 1; i <= 6; i++)
		set_desc(i, DATA_GPA + (i - 1) * SECTOR, SECTOR,
			 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 1);
	set_desc(7, STATUS_GPA, 1, VRING_DESC_F_WRITE, 0);
	kick(0);
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	cr_assert(eq(u32, last_used().len, 6 * SECTOR + 1));
	cr_assert(eq(u8, ((uint8_t *)gpa(DATA_GPA))[5 * SECTOR],
		     disk_byte(15 * SECTOR)));

	/* The 8th descriptor chains on: a 9th would revisit one. */
	*status() = 0xff;
	set_desc(7, STATUS_GPA, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 0);
	kick(0);
	cr_assert(eq(u16, used_idx(), 2));
	assert_needs_reset_answer();
}

Test(vmm_virtio_blk, next_outside_the_table_needs_reset)
{
	start(8);
	put_hdr(VIRTIO_BLK_T_FLUSH, 0);
	*status() = 0xff;
	set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 8);
	kick(0);
	assert_needs_reset_answer();
}

Test(vmm_virtio_blk, readable_after_writable_or_indirect_needs_reset)
{
	start(128);
	put_hdr(VIRTIO_BLK_T_OUT, 0);
	*status() = 0xff;
	set_desc(0, HDR_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, STATUS_GPA, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
	set_desc(2, DATA_GPA, SECTOR, 0, 0);
	kick(0);
	assert_needs_reset_answer();

	/* INDIRECT was not offered. */
	start(128);
	set_desc(0, DATA_GPA, 16 * 3, VRING_DESC_F_INDIRECT, 0);
	kick(0);
	assert_needs_reset_answer();
}

Test(vmm_virtio_blk, head_outside_the_table_needs_reset)
{
	start(8);
	*status() = 0xff;
	kick(8);
	cr_assert(eq(u16, used_idx(), 0), "nothing to return it with");
	cr_assert(needs_reset());
}

Test(vmm_virtio_blk, avail_index_beyond_the_ring_needs_reset)
{
	struct vring_avail *a = gpa(AVAIL_GPA);

	start(8);
	a->idx = htole16(9);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	cr_assert(eq(u16, used_idx(), 0));
	cr_assert(needs_reset());
}

Test(vmm_virtio_blk, queue_size_must_be_a_power_of_two_up_to_max)
{
	static const uint32_t bad[] = {0, 3, 100, 255, 512, 0x10000};
	size_t i;

	negotiate_ok();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(eq(u32, setup_queue(bad[i], DESC_GPA), 0), "size %u",
			  bad[i]);
	cr_assert(eq(u32, setup_queue(1, DESC_GPA), 1));
	wr(VIRTIO_MMIO_QUEUE_READY, 0);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_QUEUE_READY), 0));
	cr_assert(eq(u32, setup_queue(256, DESC_GPA), 1));
}

Test(vmm_virtio_blk, rings_outside_ram_or_misaligned_are_refused)
{
	negotiate_ok();
	cr_assert(eq(u32, setup_queue(128, RAM_BASE + RAM_SIZE - 16), 0));
	cr_assert(eq(u32, setup_queue(128, 0), 0));
	cr_assert(eq(u32, setup_queue(128, DESC_GPA + 8), 0), "16-aligned");
	cr_assert(eq(u32, setup_queue(128, DESC_GPA), 1));
}

Test(vmm_virtio_blk, notify_before_ready_or_driver_ok_is_ignored)
{
	/* Rings programmed and DRIVER_OK, but QueueReady never written. */
	negotiate_ok();
	program_queue(128, DESC_GPA);
	driver_ok();
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 0));
	cr_assert(eq(u8, *status(), 0xff));
	cr_assert(eq(u32, nr_irq_raises, 0));

	/* Queue ready but no DRIVER_OK yet: still nothing. */
	negotiate_ok();
	cr_assert(eq(u32, setup_queue(128, DESC_GPA), 1));
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 0));
	cr_assert(eq(u8, *status(), 0xff));

	/* DRIVER_OK: the next notify serves what was waiting. */
	driver_ok();
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
	/* A notify for a queue that does not exist does nothing. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 5);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u32, nr_irq_raises, 1));
}

Test(vmm_virtio_blk, no_interrupt_flag_suppresses_the_interrupt)
{
	struct vring_avail *a = gpa(AVAIL_GPA);

	start(128);
	a->flags = htole16(VRING_AVAIL_F_NO_INTERRUPT);
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u32, nr_irq_raises, 0));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
}

Test(vmm_virtio_blk, reset_clears_queue_and_interrupt_state)
{
	start(128);
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 2));
	cr_assert(irq_level);

	wr(VIRTIO_MMIO_STATUS, 0);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_STATUS), 0));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_QUEUE_READY), 0));
	cr_assert(eq(u32, rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
	cr_assert(not(irq_level));
	/* Features are negotiated afresh. */
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE |
				       VIRTIO_CONFIG_S_DRIVER |
				       VIRTIO_CONFIG_S_FEATURES_OK);
	cr_assert(eq(u32, rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK,
		     0));

	/* A new driver starts its rings at index 0 again. */
	start(64);
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 1));
	cr_assert(eq(u32, last_used().id, 0));
	cr_assert(eq(u8, *status(), VIRTIO_BLK_S_OK));
}

Test(vmm_virtio_blk, features_ok_needs_version_1_and_offered_bits_only)
{
	uint64_t f = device_features();

	cr_assert(eq(u32,
		     negotiate(f & ~(1ULL << VIRTIO_F_VERSION_1)) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     0));
	/* Queues stay idle even if the driver presses on. */
	setup_queue(128, DESC_GPA);
	driver_ok();
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, used_idx(), 0));

	cr_assert(eq(u32,
		     negotiate(f | (1ULL << VIRTIO_RING_F_EVENT_IDX)) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     0));
	cr_assert(eq(u32,
		     negotiate(1ULL << VIRTIO_F_VERSION_1) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     VIRTIO_CONFIG_S_FEATURES_OK),
		  "a subset with VERSION_1 is fine");
}

Test(vmm_virtio_blk, create_refuses_bad_parameters)
{
	struct vmm_virtio_blk_params p = {.fd = disk_fd};
	struct vmm_virtio_host no_irq  = {.gpa_ptr = fake_gpa_ptr};
	struct vmm_virtio_dev *d       = NULL;
	int pipe_fd[2];

	cr_assert(eq(int, vmm_virtio_blk_create(&p, &no_irq, &d), -EINVAL));
	p.fd = -1;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &host, &d), -EINVAL));
	cr_assert(eq(ptr, d, NULL));
	/* Neither a file nor a block device: no size to serve. */
	cr_assert(eq(int, pipe(pipe_fd), 0));
	p.fd = pipe_fd[0];
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &host, &d), -EINVAL));
	close(pipe_fd[0]);
	close(pipe_fd[1]);
	/* Less than one sector. */
	cr_assert(eq(int, ftruncate(disk_fd, 100), 0));
	p.fd = disk_fd;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &host, &d), -EINVAL));
	cr_assert(eq(ptr, d, NULL));
}

Test(vmm_virtio_blk, cmdline_declares_the_window)
{
	char buf[64];

	cr_assert(eq(int,
		     vmm_virtio_mmio_cmdline(buf, sizeof(buf), 0xd0000000, 5),
		     (int)strlen("virtio_mmio.device=4K@0xd0000000:5")));
	cr_assert(eq(str, buf, "virtio_mmio.device=4K@0xd0000000:5"));
	cr_assert(eq(int, vmm_virtio_mmio_cmdline(buf, 10, 0xd0000000, 5),
		     -ENOSPC));
	cr_assert(eq(int, vmm_virtio_mmio_cmdline(buf, sizeof(buf), 0x800, 5),
		     -EINVAL));
}

Test(vmm_virtio_blk, a_notify_serves_what_was_there_when_it_came)
{
	unsigned int i;

	start(8);
	producer_left = 100;
	request(VIRTIO_BLK_T_FLUSH, 0, 0);
	/*
	 * The device serves what was there when it read avail->idx, at most
	 * the queue size; what the other vCPU adds later waits for its own
	 * notify, so this vCPU comes back to its guest.
	 */
	cr_assert(le(u16, used_idx(), 8));
	cr_assert(lt(u16, used_idx(), avail_idx));
	for (i = 0; i < 1000 && used_idx() != avail_idx; i++)
		wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	cr_assert(eq(u32, producer_left, 0));
	cr_assert(eq(u16, used_idx(), avail_idx));
	cr_assert(eq(u16, used_idx(), 101));
	cr_assert(not(needs_reset()));
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

Test(vmm_virtio_blk, random_chains_stay_in_ram_and_end)
{
	static const uint32_t types[] = {
		VIRTIO_BLK_T_IN,     VIRTIO_BLK_T_OUT,     VIRTIO_BLK_T_FLUSH,
		VIRTIO_BLK_T_GET_ID, VIRTIO_BLK_T_DISCARD, 0x80000000,
	};
	unsigned int round, i, n, nr_served = 0, nr_resets = 0;
	uint16_t before;

	for (round = 0; round < 20000; round++) {
		if (round == 0 || needs_reset()) {
			nr_resets += round != 0;
			start(1U << (rnd() % 9));
		}
		put_hdr(types[rnd() % 6],
			rnd() % 4 ? rnd() % (NR_SECTORS + 2) : rnd());
		n = (unsigned int)(rnd() % qnum) + 1;
		for (i = 0; i < n; i++)
			set_desc((uint16_t)(rnd() % qnum), rnd_addr(),
				 rnd_len(), (uint16_t)(rnd() % 8),
				 (uint16_t)(rnd() % (qnum + 1)));
		before = used_idx();
		kick((uint16_t)(rnd() % (qnum + 1)));
		cr_assert(guards_intact(), "round %u", round);
		nr_served += used_idx() != before;
	}
	/* Both outcomes happened: the walk is not trivially refusing. */
	cr_assert(gt(u32, nr_served, 1000));
	cr_assert(gt(u32, nr_resets, 1000));
}
