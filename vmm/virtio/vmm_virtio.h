/* SPDX-License-Identifier: MIT */
/*
 * vmm_virtio.h: virtio devices on the virtio-mmio transport (version 2,
 * split virtqueues), with no KVM and no VM behind them. Today one device
 * type: the block device (virtio-blk) on a backing file.
 *
 * Objects:
 *   struct vmm_virtio_dev   one device: its MMIO register window, its
 *                           virtqueues, its backend (the backing file)
 *   struct vmm_virtio_host  what the device needs from the VMM: guest RAM
 *                           (gpa_ptr) and its interrupt line (irq)
 *
 * Call sequence (the VMM):
 *   vmm_virtio_blk_create(&params, &host, &dev)   before the vCPUs run
 *   vmm_virtio_mmio_cmdline(buf, len, base, irq)  for the kernel command
 *                                                 line (Linux finds the
 *                                                 device there, no ACPI)
 *   every MMIO exit in [base, base + VMM_VIRTIO_MMIO_SIZE):
 *       vmm_virtio_mmio_access(dev, gpa - base, is_write, data, len)
 *   vmm_virtio_dev_destroy(dev)                   after the vCPUs stopped
 *
 * Threading: every entry point takes the device mutex, so several vCPU
 * threads may call concurrently. A QueueNotify write serves the queue
 * synchronously in the calling vCPU thread (preadv/pwritev/fdatasync on
 * the backing file): simple, and a guest then waits on its own disk only.
 * The host callbacks run with the device mutex held and must not call
 * back into the device.
 *
 * Guest input: every address the guest gives (rings, descriptors) goes
 * through gpa_ptr before it is used; a request the device cannot parse
 * is completed with an error status, or when even that is impossible,
 * the device sets DEVICE_NEEDS_RESET and stops serving until the driver
 * resets it. An access the transport does not define (size, alignment)
 * returns -EINVAL for the caller to count and is otherwise ignored; no
 * guest action stops the device for good or reaches memory outside what
 * gpa_ptr returned.
 *
 * Errors: 0 or -errno.
 */
#ifndef VMM_VIRTIO_H
#define VMM_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of guest-physical space one device's register window takes. */
#define VMM_VIRTIO_MMIO_SIZE 0x1000ULL

/* VendorID register: "VPMU" read as a little-endian 32-bit value. */
#define VMM_VIRTIO_VENDOR_ID 0x554d5056U

/* QueueNumMax of every queue: the largest ring a driver may set up. */
#define VMM_VIRTIO_QUEUE_NUM_MAX 256U

/* Length of the T_GET_ID answer (VIRTIO_BLK_ID_BYTES). */
#define VMM_VIRTIO_BLK_SERIAL_MAX 20

struct vmm_virtio_dev;

/*
 * The VMM's side of a device. Both callbacks are required; (opaque) is
 * passed back to them unchanged.
 */
struct vmm_virtio_host {
	/*
	 * Host address of guest-physical [gpa, gpa + len), or NULL unless the
	 * whole range is guest RAM the device may read and write. (len) is
	 * at least 1. The device uses the pointer only until the call into
	 * it returns and asks again next time, so the memory map may change
	 * between calls.
	 */
	void *(*gpa_ptr)(void *opaque, uint64_t gpa, uint64_t len);
	/*
	 * Drive the device's interrupt line. (level) true each time the
	 * device sets a bit in InterruptStatus, also when the line is
	 * already up (an edge-triggered wiring sends one edge per call);
	 * false once the driver has acknowledged every bit.
	 */
	void (*irq)(void *opaque, bool level);
	void *opaque;
};

/* What a block device serves. */
struct vmm_virtio_blk_params {
	/*
	 * Backing file or block device, open for reading and writing
	 * (reading only is enough when (read_only)). Borrowed: the caller
	 * closes it after vmm_virtio_dev_destroy(). Its size at creation,
	 * rounded down to 512 bytes, is the disk's capacity.
	 */
	int fd;
	/* Offer VIRTIO_BLK_F_RO and fail every write with S_IOERR. */
	bool read_only;
	/*
	 * T_GET_ID answer (Linux: /sys/block/vdX/serial), NUL-terminated;
	 * the first VMM_VIRTIO_BLK_SERIAL_MAX bytes are used. NULL: empty.
	 */
	const char *serial;
};

/*
 * Create a virtio-blk device on (p)->fd with the host callbacks (host),
 * copied. It offers VIRTIO_F_VERSION_1, VIRTIO_BLK_F_FLUSH,
 * VIRTIO_BLK_F_BLK_SIZE (512), VIRTIO_BLK_F_SEG_MAX and, when
 * (p)->read_only, VIRTIO_BLK_F_RO; one request queue.
 * Returns 0 and fills (*out), or -EINVAL (bad parameters or host
 * callbacks, (p)->fd neither a regular file nor a block device, smaller
 * than one sector), -errno of fstat/lseek, -ENOMEM. Free with
 * vmm_virtio_dev_destroy().
 */
int vmm_virtio_blk_create(const struct vmm_virtio_blk_params *p,
			  const struct vmm_virtio_host *host,
			  struct vmm_virtio_dev **out);

/*
 * Free (d) (NULL is a no-op). No vCPU may be inside
 * vmm_virtio_mmio_access() on it. Does not close the backing file.
 */
void vmm_virtio_dev_destroy(struct vmm_virtio_dev *d);

/*
 * One guest access of (size) bytes at (offset) in the device's register
 * window: a write takes its value from (data), a read stores it there
 * (little-endian, as the guest sees it). Registers below 0x100 take
 * 4-byte aligned accesses; the device configuration space at 0x100 takes
 * 1, 2, 4 or 8 bytes.
 * Returns 0, or -EINVAL for an access the transport does not define (bad
 * size or alignment, offset outside the window): a read then yields
 * zeros and a write is dropped, so the caller may just complete the
 * access and count or log the error.
 */
int vmm_virtio_mmio_access(struct vmm_virtio_dev *d, uint64_t offset,
			   bool is_write, void *data, unsigned int size);

/*
 * Format the Linux kernel parameter declaring a device whose window is at
 * guest-physical (base) with interrupt (irq):
 * "virtio_mmio.device=4K@0x<base>:<irq>" into (buf) of (len) bytes.
 * Returns the length written (without the NUL), or -ENOSPC if (buf) is
 * too short, -EINVAL if (base) is not 4 KiB aligned.
 */
int vmm_virtio_mmio_cmdline(char *buf, size_t len, uint64_t base,
			    unsigned int irq);

#endif /* VMM_VIRTIO_H */
