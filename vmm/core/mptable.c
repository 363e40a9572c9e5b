// SPDX-License-Identifier: MIT
/*
 * mptable.c: an Intel MultiProcessor Specification 1.4 table (pure, no
 * KVM), so that Linux finds every vCPU and the in-kernel I/O APIC without
 * ACPI: a floating pointer at VMM_MPTABLE_GPA (639 KiB, inside the first
 * KiB Linux scans), then the configuration table with one processor entry
 * per vCPU (local APIC id = vCPU index, vCPU 0 the bootstrap processor),
 * an ISA bus, the I/O APIC (id = number of vCPUs) with ISA IRQs 0-15 on
 * its pins 0-15, ExtINT on LINT0 and NMI on LINT1 of every local APIC.
 */
#include "vmm_core.h"

#include <errno.h>
#include <string.h>

#define MPF_SIGNATURE  "_MP_"
#define MPC_SIGNATURE  "PCMP"
#define MP_SPEC_REV    4
#define LAPIC_GPA      0xfee00000U
#define IOAPIC_GPA     0xfec00000U
#define LAPIC_VERSION  0x14
#define IOAPIC_VERSION 0x11
#define ISA_IRQS       16
#define CPU_ENABLED    1
#define CPU_BSP        2
#define MP_PROCESSOR   0
#define MP_BUS         1
#define MP_IOAPIC      2
#define MP_IOINTSRC    3
#define MP_LINTSRC     4
#define MP_INT         0
#define MP_NMI         1
#define MP_EXTINT      3
#define ALL_LAPICS     0xff

struct mpf {
	char signature[4];
	uint32_t config;
	uint8_t length, spec_rev, checksum, feature[5];
} __attribute__((packed));

struct mpc_header {
	char signature[4];
	uint16_t length;
	uint8_t spec_rev, checksum;
	char oem[8], product[12];
	uint32_t oem_ptr;
	uint16_t oem_size, count;
	uint32_t lapic;
	uint16_t ext_length;
	uint8_t ext_checksum, reserved;
} __attribute__((packed));

struct mpc_cpu {
	uint8_t type, apic_id, apic_ver, flags;
	uint32_t signature, features, reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type, id;
	char name[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type, id, ver, flags;
	uint32_t addr;
} __attribute__((packed));

struct mpc_intsrc { /* I/O and local interrupt assignments */
	uint8_t type, irq_type;
	uint16_t flags;
	uint8_t src_bus, src_irq, dst_apic, dst_pin;
} __attribute__((packed));

_Static_assert(sizeof(struct mpf) == 16, "MP floating pointer");
_Static_assert(sizeof(struct mpc_header) == 44, "MP config table header");
_Static_assert(sizeof(struct mpc_cpu) == 20, "MP processor entry");

size_t vmm_mptable_size(unsigned int nr_cpus)
{
	return sizeof(struct mpf) + sizeof(struct mpc_header) +
	       nr_cpus * sizeof(struct mpc_cpu) + sizeof(struct mpc_bus) +
	       sizeof(struct mpc_ioapic) +
	       (ISA_IRQS + 2) * sizeof(struct mpc_intsrc);
}

static uint8_t checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum      = 0;

	while (len--)
		sum += *b++;
	return (uint8_t)-sum;
}

static uint8_t *put(uint8_t *p, const void *entry, size_t len)
{
	memcpy(p, entry, len);
	return p + len;
}

static uint8_t *put_cpus(uint8_t *p, unsigned int nr_cpus)
{
	unsigned int i;

	for (i = 0; i < nr_cpus; i++) {
		struct mpc_cpu c = {
			.type     = MP_PROCESSOR,
			.apic_id  = (uint8_t)i,
			.apic_ver = LAPIC_VERSION,
			.flags    = CPU_ENABLED | (i == 0 ? CPU_BSP : 0),
		};

		p = put(p, &c, sizeof(c));
	}
	return p;
}

static uint8_t *put_interrupts(uint8_t *p, uint8_t ioapic_id)
{
	struct mpc_intsrc lint[] = {
		{MP_LINTSRC, MP_EXTINT, 0, 0, 0, ALL_LAPICS, 0},
		{MP_LINTSRC, MP_NMI, 0, 0, 0, ALL_LAPICS, 1},
	};
	unsigned int irq;

	for (irq = 0; irq < ISA_IRQS; irq++) {
		struct mpc_intsrc s = {MP_IOINTSRC,  MP_INT,    0,           0,
				       (uint8_t)irq, ioapic_id, (uint8_t)irq};

		p = put(p, &s, sizeof(s));
	}
	return put(p, lint, sizeof(lint));
}

int vmm_mptable_write(void *mem, uint64_t mem_size, unsigned int nr_cpus)
{
	uint8_t *base = (uint8_t *)mem + VMM_MPTABLE_GPA, *p;
	struct mpc_header *h;
	struct mpc_bus bus       = {MP_BUS, 0, {'I', 'S', 'A', ' ', ' ', ' '}};
	struct mpc_ioapic ioapic = {MP_IOAPIC, (uint8_t)nr_cpus, IOAPIC_VERSION,
				    CPU_ENABLED, IOAPIC_GPA};
	struct mpf *f            = (struct mpf *)base;

	if (nr_cpus == 0 || nr_cpus >= ALL_LAPICS ||
	    VMM_MPTABLE_GPA + vmm_mptable_size(nr_cpus) > mem_size)
		return -EINVAL;
	memset(base, 0, vmm_mptable_size(nr_cpus));
	h = (struct mpc_header *)(f + 1);
	p = (uint8_t *)(h + 1);
	p = put_cpus(p, nr_cpus);
	p = put(p, &bus, sizeof(bus));
	p = put(p, &ioapic, sizeof(ioapic));
	p = put_interrupts(p, ioapic.id);

	memcpy(h->signature, MPC_SIGNATURE, 4);
	memcpy(h->oem, "VPMU    ", 8);
	memcpy(h->product, "VPMU KVM    ", 12);
	h->length   = (uint16_t)(p - (uint8_t *)h);
	h->spec_rev = MP_SPEC_REV;
	h->count    = (uint16_t)(nr_cpus + 2 + ISA_IRQS + 2);
	h->lapic    = LAPIC_GPA;
	h->checksum = checksum(h, h->length);

	memcpy(f->signature, MPF_SIGNATURE, 4);
	f->config   = (uint32_t)(VMM_MPTABLE_GPA + sizeof(*f));
	f->length   = 1; /* in 16-byte units */
	f->spec_rev = MP_SPEC_REV;
	f->checksum = checksum(f, sizeof(*f));
	return 0;
}
