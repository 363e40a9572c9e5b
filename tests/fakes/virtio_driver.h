/* SPDX-License-Identifier: MIT */
/*
 * virtio_driver.h: a guest for the vmm/virtio unit tests, no KVM: guest
 * RAM at a fake GPA between two guard pages that gpa_ptr never hands out,
 * a temporary disk file, and a virtio-mmio driver doing what Linux's
 * virtio_mmio and virtio_blk do (probe, feature negotiation, queue 0,
 * Linux-shaped requests). The helpers assert (Criterion) instead of
 * returning errors. One guest per process: Criterion runs each test in
 * its own, with vd_setup/vd_teardown as the suite's fixture.
 */
#ifndef VIRTIO_DRIVER_H
#define VIRTIO_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_ring.h>

#include "vmm_virtio.h"

#define RAM_BASE 0x40000000ULL
#define RAM_SIZE 0x100000ULL

#define NR_SECTORS 64ULL
#define SECTOR     512U
#define SERIAL     "vpmu-disk-0"

/* Guest-physical layout the driver uses. */
#define DESC_GPA   (RAM_BASE + 0x0000)
#define AVAIL_GPA  (RAM_BASE + 0x1000)
#define USED_GPA   (RAM_BASE + 0x2000)
#define HDR_GPA    (RAM_BASE + 0x3000)
#define STATUS_GPA (RAM_BASE + 0x3800)
#define DATA_GPA   (RAM_BASE + 0x10000)

extern int vd_disk_fd;
extern struct vmm_virtio_dev *vd_dev;
extern const struct vmm_virtio_host vd_host;
extern uint32_t vd_qnum;      /* the driver's queue size */
extern uint16_t vd_avail_idx; /* the driver's next avail->idx */
extern bool vd_irq_level;     /* the interrupt line as last driven */
extern unsigned int vd_nr_irq_raises;
/*
 * While not 0, each look of the device at the available ring adds chain 0
 * again (as another vCPU would, without notifying) and counts down.
 */
extern unsigned int vd_producer_left;

/* Fixture: RAM, the disk (NR_SECTORS, vd_disk_byte), a read-write device. */
void vd_setup(void);
void vd_teardown(void);

/* The guest's gpa_ptr: NULL unless [gpa, gpa + len) is all RAM. */
void *vd_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len);
/* Host view of guest address (addr), which the caller knows is RAM. */
void *vd_gpa(uint64_t addr);
/* Byte (i) of the disk as created: distinct per sector and offset. */
uint8_t vd_disk_byte(uint64_t i);
/* Replace the device by a new one on the same disk. */
void vd_make_dev(bool read_only);
/* Whether the guard pages around RAM still hold their pattern. */
bool vd_guards_intact(void);

/* 4-byte register accesses, asserted to succeed. */
uint32_t vd_rd(uint64_t off);
void vd_wr(uint64_t off, uint32_t v);
uint32_t vd_cfg32(uint64_t off);
uint64_t vd_device_features(void);
bool vd_needs_reset(void);

/*
 * Reset, ACKNOWLEDGE, DRIVER, accept (accept), FEATURES_OK (Linux's
 * virtio_dev_probe and finalize_features). Returns Status as read back.
 */
uint32_t vd_negotiate(uint64_t accept);
/* vd_negotiate() of every offered feature, asserted to be accepted. */
void vd_negotiate_ok(void);
/* vm_setup_vq for queue 0 of (num) entries, up to QueueReady. */
void vd_program_queue(uint32_t num, uint64_t desc_gpa);
/* All of vm_setup_vq; returns QueueReady as read back. */
uint32_t vd_setup_queue(uint32_t num, uint64_t desc_gpa);
void vd_driver_ok(void);
/* The whole Linux probe: features, queue 0 of (num), DRIVER_OK. */
void vd_start(uint32_t num);

void vd_set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		 uint16_t next);
/* Make chain (head) available and notify queue 0. */
void vd_kick(uint16_t head);
uint16_t vd_used_idx(void);
/* The used element the last served chain produced (host byte order). */
struct vring_used_elem vd_last_used(void);

void vd_put_hdr(uint32_t type, uint64_t sector);
/* The status byte Linux-shaped requests use, at STATUS_GPA. */
uint8_t *vd_status(void);
/*
 * A Linux-shaped request in descriptors 0, 1, 2: header, (len) bytes of
 * data at DATA_GPA (device-writable for T_IN and T_GET_ID; none if 0),
 * status preset to 0xff. The device serves it during the notify.
 */
void vd_request(uint32_t type, uint64_t sector, uint32_t len);

#endif /* VIRTIO_DRIVER_H */
