/* SPDX-License-Identifier: MIT */
/*
 * vm_config.h: the settings of one VM, from the command line or from a libvirt
 * domain XML file.
 *
 * Nothing here prints or exits: every function returns 0 or -errno and, on
 * failure, writes one human-readable message into (err) that names the
 * source (file and element, or option) and what is wrong.
 */
#ifndef VMM_VM_CONFIG_H
#define VMM_VM_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uuid/uuid.h>

#include <vpmu_limits.h>

#define VMM_MEM_DEFAULT    (64ULL << 20)
#define VMM_MEM_MIN        (2ULL << 20)
#define VMM_MEM_MAX        (3ULL << 30) /* RAM ends below the 3 GiB hole */
#define VMM_CONFIG_ERR_LEN 512
#define VMM_CMDLINE_MAX    4096 /* bytes of a Linux command line, with NUL */
#define VMM_CONFIG_XML_MAX (1U << 20) /* bytes of a libvirt XML config */

/* Defaults of struct vmm_pmu_limits; every limit must be > 0. */
#define VMM_LIMIT_CONTEXTS 144 /* 64 vCPUs x (guest + operator) + 16 */
#define VMM_LIMIT_SETS     32
#define VMM_LIMIT_SMPL_MEM (16ULL << 20)
#define VMM_LIMIT_MSGS     64
#define VMM_LIMIT_ARG_SIZE 4096U /* one page: cf_arg_size_max (3.1.16) */
/*
 * Sampling limits per VM (vpmu_limits.max_smpl_rate and
 * max_overhead_pct): Linux's perf_event_max_sample_rate and
 * perf_cpu_time_max_percent defaults. VMM_SMPL_RATE_CAP bounds what a
 * config may set.
 */
#define VMM_LIMIT_SMPL_RATE 100000U
#define VMM_LIMIT_OVERHEAD  25U
#define VMM_SMPL_RATE_CAP   1000000U

/*
 * The XML namespace of vpmu's settings under a domain's <metadata>, and the
 * libvirt RelaxNG schema files are checked against (VPMU_LIBVIRT_SCHEMA in
 * the environment overrides the path). See configs/README.md.
 */
#define VMM_CONFIG_XMLNS      "https://github.com/vpmu/vpmu/xmlns/domain/1"
#define VMM_CONFIG_SCHEMA     "/usr/share/libvirt/schemas/domain.rng"
#define VMM_CONFIG_SCHEMA_ENV "VPMU_LIBVIRT_SCHEMA"

/*
 * Disks: virtio block devices over MMIO, /dev/vda, /dev/vdb, ... in the
 * order given (the first is the root file system unless the command line
 * names another root).
 */
#define VMM_DISKS_MAX 4

struct vmm_disk_config {
	char path[PATH_MAX]; /* a regular file, a block device or a folder */
	bool read_only;      /* the guest sees VIRTIO_BLK_F_RO */
	/*
	 * (path) is a folder: `vpmu run` makes a scratch ext4 image of it
	 * (vmm_config_disk_image) before the VM starts.
	 */
	bool from_dir;
	bool remove_after_open; /* (path) is that scratch image */
};

/* Host limits of the logical PMU (perfmon2 "host limits"), per VM. */
struct vmm_pmu_limits {
	uint32_t max_contexts;     /* contexts per VM */
	uint32_t max_sets;         /* event sets per context */
	uint64_t max_smpl_mem;     /* bytes of sampling buffers per VM */
	uint32_t max_msgs;         /* message queue depth per context */
	uint32_t max_arg_size;     /* bytes of one vector argument */
	uint32_t max_smpl_rate;    /* samples/s per context (hard maximum) */
	uint32_t max_overhead_pct; /* % of a vCPU's time for monitoring */
};

struct vmm_config {
	char name[VMM_NAME_MAX]; /* "" until set; a default is derived */
	uuid_t uuid;
	bool has_uuid;         /* false: vmm generates one */
	uint64_t mem_size;     /* bytes, multiple of 4 KiB */
	unsigned int nr_vcpus; /* 1 .. VMM_VCPUS_MAX */
	char image[PATH_MAX];  /* guest image: ELF, vmlinux or bzImage */
	char initrd[PATH_MAX]; /* Linux initrd, "" for none */
	char cmdline[VMM_CMDLINE_MAX]; /* Linux command line, "" default */
	bool has_cmdline;              /* cmdline given (even empty) */
	char console[PATH_MAX];        /* "" means stdout */
	bool stats;      /* print per-vCPU exit statistics at end */
	bool no_sandbox; /* --no-sandbox: no seccomp filter (vmm/sandbox) */
	char pmu_model[VMM_PMU_MODEL_LEN]; /* "auto", "intel-v2", ... */
	struct vmm_pmu_limits limits;
	char format_dir[PATH_MAX]; /* run-time sampling formats, "" none */
	struct vmm_disk_config disks[VMM_DISKS_MAX];
	unsigned int nr_disks;
	char source[PATH_MAX]; /* config file read, "" for the CLI */
	/*
	 * One line naming what the config file holds that vpmu ignores
	 * (config_elems.c), for `vpmu run` to print as a warning; "" none.
	 */
	char ignored[2 * VMM_CONFIG_ERR_LEN];
};

/*
 * Fill (cfg) with the defaults: no name, no uuid, 64 MiB, 1 vCPU, no image,
 * console on stdout, no stats, PMU model "auto", VMM_LIMIT_* limits.
 */
void vmm_config_defaults(struct vmm_config *cfg);

/*
 * Replace every folder disk of (cfg) by a scratch ext4 image of its files
 * (mke2fs -d, run as a child process; its own message goes to stderr),
 * made as a new file in the folder (dir); the VMM removes each image once
 * it has opened it. 0, or -errno with a message in (err).
 */
int vmm_config_disk_images(struct vmm_config *cfg, const char *dir, char *err,
			   size_t errlen);

/*
 * Parse a size such as "64M", "1G", "65536", "512K" or "2MiB" into bytes:
 * decimal digits, then optionally one of the binary suffixes B, K, KiB, M,
 * MiB, G, GiB, T, TiB, P, PiB, E, EiB (any case; K and KiB both mean 1024).
 * Decimal suffixes such as "MB" are rejected rather than guessed at.
 * Returns 0 and sets (*out), or -EINVAL for malformed text (empty, sign,
 * spaces, fraction, unknown suffix) and -ERANGE for values that overflow
 * 64 bits. (*out) is untouched on failure.
 */
int vmm_config_parse_size(const char *text, uint64_t *out);

/*
 * One option of `vpmu run`. vmm_run_opts[] is the only list of them:
 * vmm_config_parse_run_args() parses with it and the `vpmu` front end
 * prints `vpmu run --help` from it.
 */
struct vmm_run_opt {
	const char *name; /* long name without the leading "--" */
	const char *arg;  /* the value's name in the usage; NULL: a flag */
	const char *help; /* one sentence; '\n' continues on a new line */
};

#define VMM_RUN_NR_OPTS 14 /* rows of vmm_run_opts[] */

/* The options of `vpmu run`, in the order the usage lists them. */
extern const struct vmm_run_opt vmm_run_opts[VMM_RUN_NR_OPTS];

/*
 * Parse `vpmu run` arguments (argv[0] is the first argument after "run"):
 *   IMAGE|CONFIG.xml [OPTIONS]
 * with the options of vmm_run_opts[], each as "--opt value" or
 * "--opt=value" (a flag takes no value) and spelt in full.
 * --kernel names the image instead of the positional argument (one of the
 * two, not both, unless the positional argument is a CONFIG.xml, whose
 * <kernel> it then replaces). --initrd, --append and --disk are for Linux
 * images; each --disk adds a disk after those of the config file.
 * Options may come before or after the one positional argument; "--" ends
 * the options. A repeated option takes its last value. A positional
 * argument ending in ".xml" is loaded with vmm_config_load_xml(); options
 * then override the file.
 * (cfg) is rebuilt from scratch (defaults, file, options) and only written
 * on success; (argv) is not modified and no global state (optind) is used,
 * so this may be called repeatedly. The result is checked with
 * vmm_config_validate().
 * Returns 0, or -EINVAL (-errno for an unreadable file) with a message in
 * (err) naming the option or file at fault.
 */
int vmm_config_parse_run_args(struct vmm_config *cfg, int argc, char **argv,
			      char *err, size_t errlen);

/*
 * Read a libvirt domain XML file (path) into (cfg): defaults, then <name>,
 * <uuid>, <memory> (or <currentMemory>) with libvirt units, <vcpu>,
 * <os><kernel> (the guest image), <os><initrd> and <os><cmdline> (Linux
 * images only), <features><pmu state='off'> (model "none"), virtio
 * <devices><disk> (the file must exist) and the settings in the
 * VMM_CONFIG_XMLNS namespace under <metadata>. Every other element is
 * ignored (named in cfg->ignored) or refused (-EINVAL naming it) as the
 * table of config_elems.c says. The file must be well-formed, be valid
 * against libvirt's RelaxNG domain schema, and pass vpmu's own checks of
 * the elements it reads; when both vpmu and the schema object, vpmu's more
 * precise message is reported. (cfg->source) is set to (path).
 * (cfg) is only written on success. The file is untrusted input: it must
 * be a regular file of at most VMM_CONFIG_XML_MAX bytes and have no DTD
 * (<!DOCTYPE>, hence no entities), so reading it takes bounded memory.
 * Returns 0, or -ENOENT/-EACCES (file or schema unreadable), -EFBIG (over
 * VMM_CONFIG_XML_MAX), -EINVAL (not a regular file, a DTD, not
 * well-formed, schema-invalid or bad value) or -ENOMEM, with a message in
 * (err) naming (path), the line and element where known, and the problem.
 */
int vmm_config_load_xml(struct vmm_config *cfg, const char *path, char *err,
			size_t errlen);

/*
 * Check the whole configuration for consistency: memory a multiple of
 * 4 KiB within VMM_MEM_MIN..VMM_MEM_MAX, 1..VMM_VCPUS_MAX vCPUs, an image,
 * a name (if set) of [A-Za-z0-9._-] shorter than VMM_NAME_MAX, a known PMU
 * model (auto, intel-v2, amd-core, amd-v2, none) and non-zero limits.
 * Returns 0 or -EINVAL with a message in (err).
 */
int vmm_config_validate(const struct vmm_config *cfg, char *err, size_t errlen);

/*
 * The run-time sampling formats an installed vpmu ships: the folder
 * VPMU_FORMATS_RELDIR (CMake: from the install's bindir to
 * LIBDIR/vpmu/formats) beside the running program (/proc/self/exe), so an
 * install found under any prefix loads its own formats and never a build
 * tree's. Fills (dir) of (len) bytes and returns 0 if that folder exists,
 * else -ENOENT (a build tree has none: build/lib/vpmu/formats) or
 * -ENAMETOOLONG.
 */
int vmm_config_installed_format_dir(char *dir, size_t len);

#endif /* VMM_VM_CONFIG_H */
