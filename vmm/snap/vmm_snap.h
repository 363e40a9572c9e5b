/* SPDX-License-Identifier: MIT */
/*
 * vmm_snap.h: the snapshot file container, no KVM: a header
 * (magic, version, host CPU vendor, PMU model, sizes) and typed sections,
 * each with its length and a CRC32 (zlib), guest memory stored sparsely
 * (a page bitmap, then only the non-zero pages). The layout is documented
 * in docs/snapshot-format.md; what goes in each section is the VMM's
 * business (vmm/core/snapshot_*.c).
 *
 * Writing appends sections to a file descriptor and rewrites the header
 * last (nr_sections, its CRC), so a file cut short is always refused.
 * Reading maps the file and checks all of it (header, every section's
 * length and CRC, known types, one VM and one END section last, the memory
 * bitmap against its length) before the caller sees any section: a bad
 * file is refused with one message naming the section, before a VM exists.
 */
#ifndef VMM_SNAP_H
#define VMM_SNAP_H

#include <stddef.h>
#include <stdint.h>

#define VMM_SNAP_MAGIC     "VPMUSNAP"
#define VMM_SNAP_VERSION   1
#define VMM_SNAP_PAGE_SIZE 4096ULL

enum vmm_snap_type {
	VMM_SNAP_VM      = 1, /* struct vmm_snap_vm */
	VMM_SNAP_VCPU    = 2, /* one per vCPU (index): KVM state */
	VMM_SNAP_DEVICES = 3, /* UART and other device state */
	VMM_SNAP_VPMU    = 4, /* libvpmu's blob (vpmu_domain_save) */
	VMM_SNAP_VM_PMU  = 5, /* the VMM's PMU glue: arch models, hv stats */
	VMM_SNAP_MEMORY  = 6, /* guest RAM, sparse */
	VMM_SNAP_END     = 0xffff,
};

/* File header, 104 bytes at offset 0. */
struct vmm_snap_hdr {
	char magic[8];        /* VMM_SNAP_MAGIC, not NUL-terminated */
	uint32_t version;     /* VMM_SNAP_VERSION */
	uint32_t hdr_size;    /* sizeof(struct vmm_snap_hdr) */
	char vendor[16];      /* host CPUID vendor, e.g. "AuthenticAMD" */
	char pmu_model[16];   /* "intel-v2", "amd-core", "amd-v2", "none" */
	uint64_t mem_size;    /* guest RAM bytes */
	uint32_t nr_vcpus;    /* VMM_SNAP_VCPU sections */
	uint32_t nr_sections; /* including END */
	uint64_t created_ns;  /* CLOCK_REALTIME when written */
	uint32_t page_size;   /* VMM_SNAP_PAGE_SIZE */
	uint32_t reserved[5];
	uint32_t flags;   /* 0 */
	uint32_t hdr_crc; /* CRC32 of the header with this field 0 */
};

/* Every section starts with this, then (length) bytes of payload. */
struct vmm_snap_sect_hdr {
	uint32_t type;   /* enum vmm_snap_type */
	uint32_t index;  /* vCPU index for VMM_SNAP_VCPU, else 0 */
	uint64_t length; /* payload bytes */
	uint32_t crc;    /* CRC32 of the payload */
	uint32_t reserved;
};

/* ---- writing ----------------------------------------------------------- */

struct vmm_snap_writer {
	int fd;
	struct vmm_snap_hdr hdr;
	uint64_t off;      /* end of what is written */
	uint64_t sect_off; /* header of the open section */
	struct vmm_snap_sect_hdr sect;
	int err; /* first error, sticky */
};

/*
 * Start a file on (fd) (empty, seekable) with header (hdr) (magic, version,
 * sizes and CRC are filled in here). Returns 0 or -errno.
 */
int vmm_snap_write_begin(struct vmm_snap_writer *w, int fd,
			 const struct vmm_snap_hdr *hdr);
/* Open a section; then any number of _write, then _end. */
int vmm_snap_sect_begin(struct vmm_snap_writer *w, uint32_t type,
			uint32_t index);
int vmm_snap_sect_write(struct vmm_snap_writer *w, const void *p, size_t n);
int vmm_snap_sect_end(struct vmm_snap_writer *w);
/* A whole section in one call. */
int vmm_snap_write_sect(struct vmm_snap_writer *w, uint32_t type,
			uint32_t index, const void *p, size_t n);
/*
 * The VMM_SNAP_MEMORY section of (mem, size) (a multiple of the page
 * size): a bitmap of the non-zero pages, then those pages. (*stored), if
 * not NULL, gets how many pages were written.
 */
int vmm_snap_write_memory(struct vmm_snap_writer *w, const void *mem,
			  uint64_t size, uint64_t *stored);
/* Write the END section and the final header; fsync. Returns 0 or -errno. */
int vmm_snap_write_end(struct vmm_snap_writer *w);

/* ---- reading ----------------------------------------------------------- */

struct vmm_snap_section {
	uint32_t type, index;
	const void *data;
	uint64_t length;
};

#define VMM_SNAP_MAX_SECTIONS 4200 /* 4096 vCPUs and the rest */

struct vmm_snap {
	struct vmm_snap_hdr hdr;
	struct vmm_snap_section *sect;
	unsigned int nr;
	void *map; /* the mapped file (vmm_snap_open) */
	size_t map_len;
};

/* What the restoring host is; NULL fields are not checked. */
struct vmm_snap_expect {
	const char *vendor;
	const char *pmu_model;
};

/*
 * Check the snapshot (buf, len) completely and index its sections into
 * (*out) (pointers into (buf), which must outlive it). Returns 0, or
 * -EINVAL with a message naming the section (or the header) in (err).
 * Pure: no I/O, for tests and the fuzzer.
 */
int vmm_snap_parse(const void *buf, size_t len,
		   const struct vmm_snap_expect *exp, struct vmm_snap *out,
		   char *err, size_t errlen);
/* Map (path) read-only and parse it. -errno with a message naming it. */
int vmm_snap_open(const char *path, const struct vmm_snap_expect *exp,
		  struct vmm_snap *out, char *err, size_t errlen);
/* Free what parse/open built. Safe on a zeroed struct. */
void vmm_snap_close(struct vmm_snap *s);

/* The section (type, index), or NULL. */
const struct vmm_snap_section *vmm_snap_find(const struct vmm_snap *s,
					     uint32_t type, uint32_t index);

/*
 * Copy the memory section (m) (checked by parse) into (mem, size), which
 * must be zeroed and exactly the size it describes. Returns 0 or -EINVAL.
 */
int vmm_snap_memory_load(const struct vmm_snap_section *m, void *mem,
			 uint64_t size);

/* "VM", "vCPU", "devices", "vPMU", "VM PMU", "memory", "end", "unknown". */
const char *vmm_snap_type_name(uint32_t type);

#endif /* VMM_SNAP_H */
