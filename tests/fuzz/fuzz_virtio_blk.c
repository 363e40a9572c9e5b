// SPDX-License-Identifier: MIT
/*
 * fuzz_virtio_blk.c: the virtio-blk device on virtio-mmio (vmm/virtio) as
 * a hostile guest drives it. The input is a guest program of operations
 * (one byte selects each, its arguments follow): 4-byte register writes,
 * MMIO accesses of any size and offset, stores into guest RAM, descriptor
 * writes (addresses in RAM, at its end or anywhere), request headers,
 * kicks of any head, and a Linux-like re-probe with a queue size that may
 * be refused. Every input starts probed with an 8-entry queue, so even a
 * short one reaches the request path. Operations (selector byte mod 7,
 * then little-endian arguments):
 *   0 register write: index byte (offset 4 * index), u32 value
 *   1 any access: u16 offset, size byte (1 2 3 4 8 16), write byte, u64
 *   2 RAM store: u16 offset, u8 count, that many bytes
 *   3 descriptor: u8 index; address: mode byte, then u16 (RAM offset),
 *     u64 (anywhere), u8 (back from RAM's end) or u8 (after the header);
 *     length: selector byte (odd: u32, even: u16); u8 flags; u8 next
 *   4 kick: u16 head
 *   5 re-probe: u8, queue size 1 << (u8 % 10)
 *   6 header at HDR_GPA: u8 type (mod 16), selector byte (odd: u64
 *     sector, even: u8)
 * A first byte with bit 7 set makes the disk read-only.
 *
 * Guest RAM is a heap block of exactly its size (ASan sees any access
 * past it); the disk is a memfd of 16 sectors, zeroed for every input.
 * The devices are made and probed once per process; an input starts from
 * the probed registers copied back (setup() below says what that covers).
 * Checked after every operation: the register window still answers
 * (MagicValue), an aligned 4-byte register access never fails, and the
 * interrupt line is up exactly while InterruptStatus is not 0.
 */
#include "fuzz_input.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "virtio_priv.h"
#include "vmm_virtio.h"

#define RAM_BASE   0x10000ULL
#define RAM_SIZE   0x10000ULL
#define DESC_GPA   RAM_BASE
#define AVAIL_GPA  (RAM_BASE + 0x1000)
#define USED_GPA   (RAM_BASE + 0x2000)
#define HDR_GPA    (RAM_BASE + 0x3000)
#define DISK_BYTES (16 * 512)

static uint8_t *ram;
static int disk_fd = -1;
static struct vmm_virtio_dev *dev;
static bool irq_level;
static uint32_t qnum;
static uint16_t avail_idx;

static void *ram_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	(void)opaque;
	if (gpa < RAM_BASE || len > RAM_SIZE || gpa - RAM_BASE > RAM_SIZE - len)
		return NULL;
	return ram + (gpa - RAM_BASE);
}

static void set_irq(void *opaque, bool level)
{
	(void)opaque;
	irq_level = level;
}

static uint32_t rd(uint64_t off)
{
	uint32_t v;

	if (vmm_virtio_mmio_access(dev, off, false, &v, 4))
		abort();
	return le32toh(v);
}

static void wr(uint64_t off, uint32_t v)
{
	v = htole32(v);
	if (vmm_virtio_mmio_access(dev, off, true, &v, 4))
		abort();
}

/* What Linux does in virtio_dev_probe and vm_setup_vq. */
static void probe(uint32_t num)
{
	uint32_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, s);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, rd(VIRTIO_MMIO_DEVICE_FEATURES));
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, rd(VIRTIO_MMIO_DEVICE_FEATURES));
	wr(VIRTIO_MMIO_STATUS, s | VIRTIO_CONFIG_S_FEATURES_OK);
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_NUM, num);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)DESC_GPA);
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)AVAIL_GPA);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)USED_GPA);
	wr(VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	wr(VIRTIO_MMIO_STATUS,
	   rd(VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_DRIVER_OK);
	qnum      = num && num <= 256 ? num : 1;
	avail_idx = 0;
}

static uint64_t desc_addr(struct fuzz_in *in)
{
	switch (fuzz_take(in, 1) % 4) {
	case 0:
		return RAM_BASE + fuzz_take(in, 2);
	case 1:
		return fuzz_take(in, 8);
	case 2:
		return RAM_BASE + RAM_SIZE - fuzz_take(in, 1);
	default:
		return HDR_GPA + fuzz_take(in, 1);
	}
}

static void put_desc(struct fuzz_in *in)
{
	struct vring_desc d;
	uint8_t idx = (uint8_t)fuzz_take(in, 1);

	d.addr = htole64(desc_addr(in));
	d.len  = htole32((uint32_t)fuzz_take(in, fuzz_take(in, 1) % 2 ? 4 : 2));
	d.flags = htole16((uint16_t)fuzz_take(in, 1));
	d.next  = htole16((uint16_t)fuzz_take(in, 1));
	memcpy(ram + (DESC_GPA - RAM_BASE) + idx * sizeof(d), &d, sizeof(d));
}

static void kick(uint16_t head)
{
	struct vring_avail *a = (void *)(ram + (AVAIL_GPA - RAM_BASE));

	a->ring[avail_idx % qnum] = htole16(head);
	a->idx                    = htole16(++avail_idx);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

static void any_access(struct fuzz_in *in)
{
	static const unsigned int sizes[] = {1, 2, 3, 4, 8, 16};
	uint8_t buf[16];
	uint64_t off      = fuzz_take(in, 2) % (VMM_VIRTIO_MMIO_SIZE + 0x100);
	unsigned int size = sizes[fuzz_take(in, 1) % 6];
	bool is_write     = fuzz_take(in, 1) & 1;
	int ret;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &(uint64_t){fuzz_take(in, 8)}, 8);
	ret = vmm_virtio_mmio_access(dev, off, is_write, buf, size);
	if (ret && ret != -EINVAL)
		abort();
}

static void poke_ram(struct fuzz_in *in)
{
	uint64_t off = fuzz_take(in, 2) % RAM_SIZE;
	size_t n     = (size_t)fuzz_take(in, 1);

	if (n > in->left)
		n = in->left;
	if (n > RAM_SIZE - off)
		n = RAM_SIZE - off;
	memcpy(ram + off, in->p, n);
	in->p += n;
	in->left -= n;
}

static void put_hdr(struct fuzz_in *in)
{
	struct virtio_blk_outhdr h = {0};

	/* One statement each: the input is read in a fixed order. */
	h.type   = htole32((uint32_t)fuzz_take(in, 1) % 16);
	h.sector = htole64(fuzz_take(in, fuzz_take(in, 1) % 2 ? 8 : 1));
	memcpy(ram + (HDR_GPA - RAM_BASE), &h, sizeof(h));
}

static void write_reg(struct fuzz_in *in)
{
	uint64_t off = fuzz_take(in, 1) * 4 % VIRTIO_MMIO_CONFIG;

	wr(off, (uint32_t)fuzz_take(in, 4));
}

static void step(struct fuzz_in *in)
{
	switch (fuzz_take(in, 1) % 7) {
	case 0:
		write_reg(in);
		break;
	case 1:
		any_access(in);
		break;
	case 2:
		poke_ram(in);
		break;
	case 3:
		put_desc(in);
		break;
	case 4:
		kick((uint16_t)fuzz_take(in, 2));
		break;
	case 5:
		probe(1U << (fuzz_take(in, 1) % 10));
		break;
	default:
		put_hdr(in);
		break;
	}
}

/*
 * Per process: RAM, the disk (a memfd, also mapped to be checked) and two
 * devices (read-write, read-only), each probed once with an 8-entry queue
 * and its guest-writable registers kept (probed[]). An input starts from
 * those registers copied back: making a device and probing it through 20
 * register accesses was half of an input's time. The rest of a device
 * (config space, offered features, backing) is fixed at creation; the
 * chain scratch is filled before every use. Op 5 runs the probe itself.
 */
static struct vmm_virtio_dev *devs[2];
static struct vmm_virtio_dev probed[2];
static uint8_t *disk; /* the disk's bytes, mapped */

/* The registers a guest can change, from (src) to (dst). */
static void copy_regs(struct vmm_virtio_dev *dst,
		      const struct vmm_virtio_dev *src)
{
	dst->drv_features     = src->drv_features;
	dst->features_sel     = src->features_sel;
	dst->drv_features_sel = src->drv_features_sel;
	dst->queue_sel        = src->queue_sel;
	dst->status           = src->status;
	dst->int_status       = src->int_status;
	memcpy(dst->vq, src->vq, sizeof(dst->vq));
}

static void create(void)
{
	struct vmm_virtio_host host = {.gpa_ptr = ram_ptr, .irq = set_irq};
	struct vmm_virtio_blk_params p;
	unsigned int i;

	ram     = aligned_alloc(4096, RAM_SIZE);
	disk_fd = memfd_create("vpmu-fuzz-disk", MFD_CLOEXEC);
	if (!ram || disk_fd < 0 || ftruncate(disk_fd, DISK_BYTES))
		abort();
	disk = mmap(NULL, DISK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		    disk_fd, 0);
	if (disk == MAP_FAILED)
		abort();
	for (i = 0; i < 2; i++) {
		p = (struct vmm_virtio_blk_params){
			.fd = disk_fd, .serial = "fuzz", .read_only = i};
		if (vmm_virtio_blk_create(&p, &host, &devs[i]))
			abort();
		dev = devs[i];
		probe(8);
		if (irq_level)
			abort();
		copy_regs(&probed[i], dev);
	}
}

/* Zero what an input may have written: RAM and, if it changed, the disk. */
static void setup(void)
{
	static const uint8_t zeros[DISK_BYTES];

	if (!ram)
		create();
	/* memcmp, not a loop: every compare of a loop here is traced. */
	if (memcmp(disk, zeros, DISK_BYTES))
		memset(disk, 0, DISK_BYTES);
	memset(ram, 0, RAM_SIZE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned int ro   = size && (data[0] & 0x80);

	setup();
	dev = devs[ro];
	copy_regs(dev, &probed[ro]);
	irq_level = false;
	qnum      = 8;
	avail_idx = 0;
	while (in.left) {
		step(&in);
		if (rd(VIRTIO_MMIO_MAGIC_VALUE) != 0x74726976)
			abort();
		if ((rd(VIRTIO_MMIO_INTERRUPT_STATUS) != 0) != irq_level)
			abort();
	}
	return 0;
}
