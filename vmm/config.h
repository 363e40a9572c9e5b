/* SPDX-License-Identifier: MIT */
/*
 * config.h: the settings of one VM, from the command line or from a libvirt
 * domain XML file.
 *
 * Nothing here prints or exits: every function returns 0 or -errno and, on
 * failure, writes one human-readable message into (err) that names the
 * source (file and element, or option) and what is wrong.
 */
#ifndef VMM_CONFIG_H
#define VMM_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uuid/uuid.h>

#define VMM_NAME_MAX         64
#define VMM_VCPUS_MAX        64
#define VMM_MEM_DEFAULT      (64ULL << 20)
#define VMM_MEM_MIN          (2ULL << 20)
#define VMM_MEM_MAX          (3ULL << 30) /* RAM ends below the 3 GiB hole */
#define VMM_CONFIG_ERR_LEN   512
#define VMM_PMU_MODEL_LEN    16

/* Host limits of the logical PMU (perfmon2 "host limits"), per VM. */
struct vmm_pmu_limits {
	uint32_t max_contexts;    /* contexts per VM */
	uint32_t max_sets;        /* event sets per context */
	uint64_t max_smpl_mem;    /* bytes of sampling buffers per VM */
	uint32_t max_msgs;        /* message queue depth per context */
	uint32_t max_arg_size;    /* bytes of one vector argument */
};

struct vmm_config {
	char name[VMM_NAME_MAX];  /* "" until set; a default is derived */
	uuid_t uuid;
	bool has_uuid;            /* false: vmm generates one */
	uint64_t mem_size;        /* bytes, multiple of 4 KiB */
	unsigned int nr_vcpus;    /* 1 .. VMM_VCPUS_MAX */
	char image[PATH_MAX];     /* guest ELF image */
	char console[PATH_MAX];   /* "" means stdout */
	bool stats;               /* print per-vCPU exit statistics at end */
	char pmu_model[VMM_PMU_MODEL_LEN]; /* "auto", "intel-v2", ... */
	struct vmm_pmu_limits limits;
	char source[PATH_MAX];    /* config file read, "" for the CLI */
};

/* Fill (cfg) with the defaults: 64 MiB, 1 vCPU, console on stdout. */
void vmm_config_defaults(struct vmm_config *cfg);

/*
 * Parse a size such as "64M", "1G", "65536", "512K" or "2MiB" into bytes.
 * Returns 0 and sets (*out), or -EINVAL for malformed text and -ERANGE for
 * values that overflow 64 bits.
 */
int vmm_config_parse_size(const char *text, uint64_t *out);

/*
 * Parse `vpmu run` arguments (argv[0] is the first argument after "run"):
 *   IMAGE|CONFIG.xml [--vcpus N] [--mem SIZE] [--name NAME]
 *   [--console FILE] [--stats]
 * A first argument ending in ".xml" is loaded with vmm_config_load_xml();
 * options given on the command line then override the file.
 * Returns 0, or -EINVAL with a message in (err).
 */
int vmm_config_parse_run_args(struct vmm_config *cfg, int argc, char **argv,
			      char *err, size_t errlen);

/*
 * Read a libvirt domain XML file (path): it is validated against libvirt's
 * RelaxNG domain schema, then name, uuid, memory, vcpu, os/kernel and the
 * vpmu settings under <metadata> are read into (cfg).
 * Returns 0, or -errno with a message naming (path), the element and the
 * problem in (err).
 */
int vmm_config_load_xml(struct vmm_config *cfg, const char *path, char *err,
			size_t errlen);

/*
 * Check the whole configuration for consistency (ranges, image set).
 * Returns 0 or -EINVAL with a message in (err).
 */
int vmm_config_validate(const struct vmm_config *cfg, char *err,
			size_t errlen);

#endif /* VMM_CONFIG_H */
