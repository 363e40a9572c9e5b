// SPDX-License-Identifier: MIT
/*
 * seedgen.c: write the structured seeds of the fuzz targets, valid inputs
 * the fuzzer starts from (the text seeds, configs and record files, are
 * copied from the repository instead; README.md here):
 *   boot_image/  a freestanding ELF, a Linux vmlinux (ELF with a "Linux"
 *                note) and a bzImage (setup header, 64-bit entry)
 *   hypercall/   guest programs: ECHO, a perfmon2 session (create, write
 *                PMCs and PMDs, load, start, read, stop, unload, close),
 *                shared page, vector, sched, READ_MSG, SMPL_INFO, blocks
 *                across RAM's end
 *   arch_msr/    each model: program a counter to overflow with an
 *                interrupt, count, read status, clear
 *   ctl/         a client's frames: hello, info, a context's life, a
 *                session's life, packed drains
 *   record_file/ files written by the record writer (record_file.h):
 *                two VMs with samples and a note, and one without samples
 *   ctl_packed/  packed sample frames of smpl_drain (ctl_proto.h): none,
 *                three records (no arrays, some, all of both), records of
 *                a longer (later) layout
 *   snapshot_sections/ edit programs on the fake VM's snapshot: none (it
 *                restores), a notification vector below 32, a pending NMI
 *                with an LVTPC, a dropped vCPU, a vCPU with one MSR
 * Usage: fuzz_seedgen DIR (DIR/TARGET/ must exist).
 */
#include <asm/bootparam.h>
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pvpmu/abi.h>

#include "ctl_proto.h"
#include "elf_exec.h"
#include "record_file.h"
#include "snapshot_priv.h"

static const char *outdir;

struct buf {
	uint8_t b[8192];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b))
		abort();
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_le(struct buf *b, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		put(b, &(uint8_t){(uint8_t)(v >> (8 * i))}, 1);
}

static void save(const char *target, const char *name, const void *p, size_t n)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* ---- boot images ------------------------------------------------------ */

struct elf_image {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Nhdr nh;
	char name[8];
	uint32_t desc;
	uint8_t text[256];
};

static void make_elf(struct elf_image *v, uint64_t gpa, const char *note)
{
	memset(v, 0, sizeof(*v));
	elf_exec_header(&v->eh, gpa, offsetof(struct elf_image, ph),
			note ? 2 : 1);
	v->ph[0] = (Elf64_Phdr){.p_type   = PT_LOAD,
				.p_flags  = PF_R | PF_X,
				.p_offset = offsetof(struct elf_image, text),
				.p_vaddr  = gpa,
				.p_paddr  = gpa,
				.p_filesz = sizeof(v->text),
				.p_memsz  = sizeof(v->text) + 4096};
	if (note) {
		v->ph[1] =
			(Elf64_Phdr){.p_type   = PT_NOTE,
				     .p_offset = offsetof(struct elf_image, nh),
				     .p_filesz = sizeof(Elf64_Nhdr) + 8 + 4};
		v->ph[0].p_vaddr = 0xffffffff81000000ULL;
		v->nh.n_namesz   = (Elf64_Word)strlen(note) + 1;
		v->nh.n_descsz   = 4;
		v->nh.n_type     = 0x100;
		strcpy(v->name, note);
	}
	memset(v->text, 0xf4, sizeof(v->text)); /* hlt */
}

static void boot_images(void)
{
	enum { SETUP = 4, PM = 1024 };
	static uint8_t bz[(SETUP + 1) * 512 + PM];
	struct setup_header *h = (struct setup_header *)(bz + 0x1f1);
	struct elf_image v;

	make_elf(&v, 1ULL << 20, NULL);
	save("boot_image", "seed-elf", &v, sizeof(v));
	make_elf(&v, 16ULL << 20, "Linux");
	save("boot_image", "seed-vmlinux", &v, sizeof(v));
	h->setup_sects        = SETUP;
	h->boot_flag          = 0xaa55;
	h->jump               = 0x66eb;
	bz[0x201]             = 0x66;
	h->header             = 0x53726448; /* "HdrS" */
	h->version            = 0x020f;
	h->loadflags          = LOADED_HIGH;
	h->initrd_addr_max    = 0x7fffffff;
	h->kernel_alignment   = 0x200000;
	h->relocatable_kernel = 1;
	h->xloadflags         = XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G;
	h->cmdline_size       = 2047;
	h->init_size          = 0x200000;
	memset(bz + (SETUP + 1) * 512, 0xcc, PM);
	save("boot_image", "seed-bzimage", bz, sizeof(bz));
	/* Odd size: with an initrd and a command line (fuzz_boot_image.c). */
	save("boot_image", "seed-bzimage-initrd", bz, sizeof(bz) - 1);
}

/* ---- hypercall programs (fuzz_hypercall.c) ----------------------------- */

#define ARG_GPA 0x10000ULL
#define CTX_FD  0x10000 /* libvpmu's first handle: generation 1, slot 0 */

/* Call (nr) with (block) at GPA 0x1000 (+ delta) and (arg) at ARG_GPA. */
static void hc(struct buf *b, unsigned int nr, unsigned int where,
	       uint16_t delta, const void *blk, size_t len, const void *arg,
	       size_t alen)
{
	put_le(b, nr - 1, 1); /* bit 7 clear: 1 + call % 9 */
	put_le(b, where, 1);
	put_le(b, delta, 2);
	put_le(b, len, 1);
	put(b, blk, len);
	put_le(b, alen, 2);
	put(b, arg, alen);
	put_le(b, 0, 1); /* vCPU 0 */
}

static void pfm(struct buf *b, uint32_t cmd, int32_t fd, int32_t nargs,
		const void *arg, size_t alen)
{
	struct pvpmu_hc_pfm r = {.size     = sizeof(r),
				 .cmd      = cmd,
				 .fd       = fd,
				 .nargs    = nargs,
				 .arg_gpa  = alen ? ARG_GPA : 0,
				 .arg_size = alen,
				 .tid      = 1};

	hc(b, PVPMU_HC_PFM, 0, 0, &r, sizeof(r), arg, alen);
}

static void hypercalls(void)
{
	struct pvpmu_hc_echo echo  = {.size = sizeof(echo), .in = 42};
	struct pvpmu_hc_shared sh  = {.size = sizeof(sh), .gpa = 0x3000};
	struct pvpmu_hc_vector vec = {.size = sizeof(vec), .vector = 0xf0};
	struct pvpmu_hc_sched sc = {.size = sizeof(sc), .fd = CTX_FD, .tid = 1};
	struct pvpmu_hc_read_msg rm  = {.size = sizeof(rm), .fd = CTX_FD};
	struct pvpmu_hc_smpl_info si = {.size = sizeof(si), .fd = CTX_FD};
	struct pvpmu_hc_ctx cl       = {.size = sizeof(cl), .fd = CTX_FD};
	struct pfarg_ctx ctx         = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_pmc pmc         = {.reg_num   = 0,
					.reg_flags = PFM_REGFL_OVFL_NOTIFY,
					.reg_value = PVPMU_EV_HV_MSR_READS |
						     PVPMU_EVSEL_OS | PVPMU_EVSEL_USR};
	struct pfarg_pmd pmd         = {.reg_num = 0, .reg_value = ~0ULL - 2};
	struct pfarg_load ld         = {.load_pid = 0};
	struct pfarg_setdesc set     = {.set_id = 1};
	struct buf b                 = {.n = 0};

	hc(&b, PVPMU_HC_ECHO, 0, 0, &echo, sizeof(echo), NULL, 0);
	hc(&b, PVPMU_HC_NOP, 0, 0, NULL, 0, NULL, 0);
	save("hypercall", "seed-echo", b.b, b.n);

	b.n = 0;
	pfm(&b, PFM_CREATE_CONTEXT, 0, 1, &ctx, sizeof(ctx));
	pfm(&b, PFM_CREATE_EVTSETS, CTX_FD, 1, &set, sizeof(set));
	pfm(&b, PFM_WRITE_PMCS, CTX_FD, 1, &pmc, sizeof(pmc));
	pfm(&b, PFM_WRITE_PMDS, CTX_FD, 1, &pmd, sizeof(pmd));
	pfm(&b, PFM_LOAD_CONTEXT, CTX_FD, 1, &ld, sizeof(ld));
	pfm(&b, PFM_START, CTX_FD, 0, NULL, 0);
	pfm(&b, PFM_READ_PMDS, CTX_FD, 1, &pmd, sizeof(pmd));
	hc(&b, PVPMU_HC_READ_MSG, 0, 0, &rm, sizeof(rm), NULL, 0);
	hc(&b, PVPMU_HC_SMPL_INFO, 0, 0, &si, sizeof(si), NULL, 0);
	pfm(&b, PFM_STOP, CTX_FD, 0, NULL, 0);
	pfm(&b, PFM_UNLOAD_CONTEXT, CTX_FD, 0, NULL, 0);
	hc(&b, PVPMU_HC_CLOSE, 0, 0, &cl, sizeof(cl), NULL, 0);
	save("hypercall", "seed-pfm-session", b.b, b.n);

	b.n = 0;
	hc(&b, PVPMU_HC_SHARED, 0, 0, &sh, sizeof(sh), NULL, 0);
	hc(&b, PVPMU_HC_SET_VECTOR, 0, 0, &vec, sizeof(vec), NULL, 0);
	hc(&b, PVPMU_HC_SCHED, 0, 0, &sc, sizeof(sc), NULL, 0);
	sh.gpa = 0;
	hc(&b, PVPMU_HC_SHARED, 0, 0, &sh, sizeof(sh), NULL, 0);
	save("hypercall", "seed-shared-vector-sched", b.b, b.n);

	/* ECHO blocks straddling the end of RAM and the sampling window. */
	b.n = 0;
	hc(&b, PVPMU_HC_ECHO, 1, 12, &echo, sizeof(echo), NULL, 0);
	hc(&b, PVPMU_HC_ECHO, 1, 24, &echo, sizeof(echo), NULL, 0);
	hc(&b, PVPMU_HC_ECHO, 4, 2040, &echo, sizeof(echo), NULL, 0);
	hc(&b, PVPMU_HC_ECHO, 6, 8, &echo, sizeof(echo), NULL, 0);
	save("hypercall", "seed-boundaries", b.b, b.n);
}

/* ---- architectural MSR programs (fuzz_arch_msr.c) ----------------------- */

static void msr_rd(struct buf *b, uint32_t msr)
{
	put_le(b, 0, 1);
	put_le(b, 0xff, 1); /* any index */
	put_le(b, msr, 4);
}

static void msr_wr(struct buf *b, uint32_t msr, uint64_t v)
{
	put_le(b, 1, 1);
	put_le(b, 0xff, 1);
	put_le(b, msr, 4);
	put_le(b, v, 8);
}

static void count(struct buf *b, uint32_t n)
{
	put_le(b, 2, 1);
	put_le(b, n, 4);
	put_le(b, 1000, 2);
}

static void cpuid(struct buf *b, unsigned int which)
{
	put_le(b, 3, 1);
	put_le(b, which, 1);
}

static void arch_msrs(void)
{
	const uint64_t ev = PVPMU_EV_HV_MSR_READS | PVPMU_EVSEL_OS |
			    PVPMU_EVSEL_USR | PVPMU_EVSEL_INT | PVPMU_EVSEL_EN;
	struct buf b = {.n = 0};

	put_le(&b, 0, 1); /* intel-v2 */
	cpuid(&b, 0);
	msr_wr(&b, 0x186, ev);               /* IA32_PERFEVTSEL0 */
	msr_wr(&b, 0xc1, (1ULL << 48) - 10); /* IA32_PMC0 */
	msr_wr(&b, 0x38d, 0x333);            /* fixed counters on */
	msr_wr(&b, 0x38f, 0x7000000ffULL);   /* GLOBAL_CTRL */
	count(&b, 20);
	msr_rd(&b, 0x38e); /* GLOBAL_STATUS */
	msr_rd(&b, 0xc1);
	msr_rd(&b, 0x309);
	msr_wr(&b, 0x390, 1); /* GLOBAL_OVF_CTRL */
	msr_rd(&b, 0x345);
	msr_wr(&b, 0x4c1, 5); /* full-width PMC0 */
	save("arch_msr", "seed-intel-v2", b.b, b.n);

	b.n = 0;
	put_le(&b, 1, 1); /* amd-core */
	cpuid(&b, 1);
	msr_wr(&b, 0xc0010000, ev); /* K7 EVNTSEL0 */
	msr_wr(&b, 0xc0010004, (1ULL << 48) - 10);
	count(&b, 20);
	msr_rd(&b, 0xc0010004);
	msr_wr(&b, 0xc0010200, ev); /* F15h PERF_CTL0 */
	msr_rd(&b, 0xc0010201);
	save("arch_msr", "seed-amd-core", b.b, b.n);

	b.n = 0;
	put_le(&b, 2, 1); /* amd-v2 */
	cpuid(&b, 2);
	msr_wr(&b, 0xc0010200, ev);
	msr_wr(&b, 0xc0010201, (1ULL << 48) - 10);
	msr_wr(&b, 0xc0000301, 0x3f); /* GLOBAL_CTL */
	count(&b, 20);
	msr_rd(&b, 0xc0000300);    /* GLOBAL_STATUS */
	msr_wr(&b, 0xc0000302, 1); /* STATUS_CLR */
	msr_wr(&b, 0xc0000303, 2); /* STATUS_SET */
	save("arch_msr", "seed-amd-v2", b.b, b.n);
}

/* ---- control frames (fuzz_ctl.c) ---------------------------------------- */

static void frame(struct buf *b, const char *json)
{
	uint32_t n = (uint32_t)strlen(json);

	put_le(b, __builtin_bswap32(n), 4); /* big-endian length */
	put(b, json, n);
}

static void ctl_frames(void)
{
	struct buf b = {.n = 0};

	frame(&b, "{\"v\":1,\"id\":1,\"cmd\":\"hello\"}");
	frame(&b, "{\"v\":1,\"id\":2,\"cmd\":\"info\"}");
	frame(&b, "{\"v\":1,\"id\":3,\"cmd\":\"resolve\",\"name\":"
		  "\"hv_exits\"}");
	save("ctl", "seed-hello-info", b.b, b.n);

	b.n = 0;
	frame(&b, "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":0,"
		  "\"smpl_buf_size\":65536}");
	frame(&b, "{\"v\":1,\"id\":2,\"cmd\":\"create_evtsets\",\"ctx\":65536,"
		  "\"sets\":[{\"id\":1,\"flags\":2,\"timeout_ns\":1000000}]}");
	frame(&b, "{\"v\":1,\"id\":3,\"cmd\":\"write_pmcs\",\"ctx\":65536,"
		  "\"pmcs\":[{\"num\":0,\"value\":196608,\"flags\":1,"
		  "\"smpl_pmds\":2}]}");
	frame(&b, "{\"v\":1,\"id\":4,\"cmd\":\"write_pmds\",\"ctx\":65536,"
		  "\"pmds\":[{\"num\":0,\"value\":18446744073709551600,"
		  "\"short_reset\":18446744073709551600}]}");
	frame(&b, "{\"v\":1,\"id\":5,\"cmd\":\"load\",\"ctx\":65536,"
		  "\"vcpu\":0}");
	frame(&b, "{\"v\":1,\"id\":6,\"cmd\":\"start\",\"ctx\":65536}");
	frame(&b, "{\"v\":1,\"id\":7,\"cmd\":\"read_pmds\",\"ctx\":65536,"
		  "\"pmds\":[{\"num\":0},{\"num\":1,\"set\":1}]}");
	frame(&b, "{\"v\":1,\"id\":8,\"cmd\":\"getinfo_evtsets\",\"ctx\":"
		  "65536,\"sets\":[0,1]}");
	frame(&b, "{\"v\":1,\"id\":9,\"cmd\":\"smpl_drain\",\"ctx\":65536,"
		  "\"max\":10}");
	frame(&b, "{\"v\":1,\"id\":10,\"cmd\":\"stop\",\"ctx\":65536}");
	frame(&b, "{\"v\":1,\"id\":11,\"cmd\":\"unload\",\"ctx\":65536}");
	frame(&b, "{\"v\":1,\"id\":12,\"cmd\":\"destroy\",\"ctx\":65536}");
	save("ctl", "seed-context", b.b, b.n);

	/*
	 * Drains whose samples follow in a binary frame. The
	 * context of a fresh fake VM is 65680 (generation 1, the first
	 * host slot: vpmu/mech/context.c).
	 */
	b.n = 0;
	frame(&b, "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":0,"
		  "\"smpl_buf_size\":65536,\"callchain\":4}");
	frame(&b, "{\"v\":1,\"id\":2,\"cmd\":\"smpl_drain\",\"ctx\":65680,"
		  "\"packed\":1}");
	frame(&b, "{\"v\":1,\"id\":3,\"cmd\":\"smpl_drain\",\"ctx\":65680,"
		  "\"packed\":1,\"max\":1}");
	frame(&b, "{\"v\":1,\"id\":4,\"cmd\":\"smpl_drain\",\"ctx\":65680,"
		  "\"packed\":2}");
	frame(&b, "{\"v\":1,\"id\":5,\"cmd\":\"destroy\",\"ctx\":65680}");
	save("ctl", "seed-drain-packed", b.b, b.n);

	b.n = 0;
	frame(&b, "{\"v\":1,\"id\":1,\"cmd\":\"session_open\",\"vcpus\":[0,1],"
		  "\"pmcs\":[{\"num\":0,\"value\":196608}],\"sets\":[{\"id\":"
		  "0,\"flags\":2,\"timeout_ns\":1000000}]}");
	frame(&b, "{\"v\":1,\"id\":2,\"cmd\":\"session_read\",\"session\":0}");
	frame(&b, "{\"v\":1,\"id\":3,\"cmd\":\"session_close\","
		  "\"session\":0}");
	save("ctl", "seed-session", b.b, b.n);

	b.n = 0;
	frame(&b, "{\"v\":2,\"id\":1,\"cmd\":\"hello\"}");
	frame(&b, "{\"v\":1,\"id\":2,\"cmd\":\"nope\"}");
	put_le(&b, 0xffffffff, 4); /* a broken length ends it */
	save("ctl", "seed-errors", b.b, b.n);
}

/* ---- record files (fuzz_record_file.c) ---------------------------------- */

static void record(const char *name, unsigned int nr_samples)
{
	struct rec_sample s  = {.nr_vals = 2};
	struct rec_vm vms[2] = {
		{.uuid     = "11111111-2222-3333-4444-555555555555",
		 .name     = "a",
		 .image    = "/nonexistent/a.elf",
		 .nr_vcpus = 2,
		 .tsc_khz  = 2000000},
		{.uuid     = "66666666-7777-8888-9999-000000000000",
		 .name     = "b",
		 .image    = "",
		 .nr_vcpus = 1},
	};
	struct rec_header h = {.event     = "hv_guest_cycles",
			       .code      = PVPMU_EV_HV_GUEST_CYCLES,
			       .period    = 1000,
			       .created   = 1700000000,
			       .nr_events = 2,
			       .events    = {"hv_guest_cycles", "hv_exits"},
			       .vms       = vms,
			       .nr_vms    = 2};
	struct rec_writer w;
	char path[1024];
	unsigned int i;

	snprintf(path, sizeof(path), "%s/record_file/%s", outdir, name);
	if (rec_open(&w, path, &h))
		exit(1);
	for (i = 0; i < nr_samples; i++) {
		s.vm      = i % 2;
		s.cpu     = i % 3 == 2 && s.vm == 0 ? 1 : 0;
		s.ip      = 0x100000 + 16 * (i % 5);
		s.tstamp  = 1000 * i;
		s.vals[0] = 1000 * (i + 1);
		s.vals[1] = i;
		if (rec_sample(&w, &s))
			exit(1);
	}
	if (rec_note(&w, 1, "vm \"b\" gone") ||
	    rec_finish(&w, 1, 5000000, "done"))
		exit(1);
}

/* ---- packed sample frames (fuzz_ctl_packed.c) -------------------------- */

static void packed_frames(void)
{
	static const uint16_t nv[3] = {0, 2, VMM_CTL_SAMPLE_VALS};
	static const uint16_t nc[3] = {0, 2, VMM_CTL_CHAIN_MAX};
	uint64_t vals[VMM_CTL_SAMPLE_VALS], chain[VMM_CTL_CHAIN_MAX];
	struct vmm_ctl_pk_rec r;
	struct buf b = {.n = 0}, l = {.n = 0};
	unsigned int i, k;
	size_t sz;

	for (k = 0; k < VMM_CTL_SAMPLE_VALS; k++)
		vals[k] = 1000 * (k + 1);
	for (k = 0; k < VMM_CTL_CHAIN_MAX; k++)
		chain[k] = 0xffffffff81000000ULL + 64 * k;
	vmm_ctl_pk_put_hdr(b.b, 0);
	save("ctl_packed", "seed-empty", b.b, VMM_CTL_PK_HDR);
	vmm_ctl_pk_put_hdr(b.b, 3);
	b.n = VMM_CTL_PK_HDR;
	/* The same records with 8 more bytes each: a later layout. */
	put_le(&l, VMM_CTL_PK_VERSION, 2);
	put_le(&l, VMM_CTL_PK_REC + 8, 2);
	put_le(&l, 3, 4);
	for (i = 0; i < 3; i++) {
		r  = (struct vmm_ctl_pk_rec){.cpu       = (uint16_t)i,
					     .ovfl_pmd  = 1,
					     .nr_missed = (uint16_t)(i * 2),
					     .pid       = 100,
					     .tid       = (int32_t)(100 + i),
					     .tstamp    = 1000000ULL * i,
					     .ip     = 0xffffffff81000100ULL + i,
					     .period = 1000000,
					     .nr_vals  = nv[i],
					     .nr_chain = nc[i],
					     .vals     = vals,
					     .chain    = chain};
		sz = vmm_ctl_pk_put(b.b + b.n, &r);
		put(&l, b.b + b.n, VMM_CTL_PK_REC);
		put_le(&l, 0, 8);
		put(&l, b.b + b.n + VMM_CTL_PK_REC, sz - VMM_CTL_PK_REC);
		b.n += sz;
	}
	save("ctl_packed", "seed-three", b.b, b.n);
	save("ctl_packed", "seed-longer-records", l.b, l.n);
}

/* fuzz_snapshot_sections.c's edits: put32 and resize on a section. */
static void put32(struct buf *b, unsigned int sect, size_t off, uint32_t v)
{
	put_le(b, 3, 1);
	put_le(b, sect, 1);
	put_le(b, off, 2);
	put_le(b, v, 4);
}

static void snapshot_sections(void)
{
	const size_t vcpu_pmu = offsetof(struct snap_vcpu, pmu);
	struct buf b          = {0};

	save("snapshot_sections", "seed-baseline", "", 0);
	put32(&b, 1, vcpu_pmu + offsetof(struct vmm_snap_vcpu_pmu, vector), 14);
	save("snapshot_sections", "seed-vector-14", b.b, b.n);
	b.n = 0;
	put32(&b, 2, vcpu_pmu + offsetof(struct vmm_snap_vcpu_pmu, pmi), 0x100);
	put32(&b, 2, vcpu_pmu + offsetof(struct vmm_snap_vcpu_pmu, lvtpc),
	      0x400);
	save("snapshot_sections", "seed-pmi-nmi", b.b, b.n);
	b.n = 0;
	put_le(&b, 2, 1);
	put_le(&b, 2, 1);
	save("snapshot_sections", "seed-drop-vcpu1", b.b, b.n);
	b.n = 0;
	put_le(&b, 1, 1); /* resize vCPU 0 to one MSR more */
	put_le(&b, 1, 1);
	put_le(&b, sizeof(struct snap_vcpu) + sizeof(struct kvm_msr_entry), 2);
	put32(&b, 1, offsetof(struct snap_vcpu, nmsrs), 1);
	save("snapshot_sections", "seed-one-msr", b.b, b.n);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seedgen DIR\n");
		return 2;
	}
	outdir = argv[1];
	boot_images();
	hypercalls();
	arch_msrs();
	ctl_frames();
	record("seed-two-vms.rec", 12);
	record("seed-empty.rec", 0);
	packed_frames();
	snapshot_sections();
	return 0;
}
