/* SPDX-License-Identifier: MIT */
/*
 * vm_registry.h: the runtime directory where running VMs announce themselves
 * to host operators.
 *
 *   $VPMU_RUNTIME_DIR, else /run/vpmu for root, else $XDG_RUNTIME_DIR/vpmu
 *     <uuid>.json   registry entry (written atomically: temp + rename)
 *     <uuid>.sock   control socket (mode 0600), see ctl_proto.h
 *     kick-probes   the host's recent kick probes, which the VMs' charge
 *                   for a kick is the mean of (vmm/core/kick_history.c)
 *
 * Entry: {"v":1,"uuid","name","pid","nr_vcpus","pmu","image","tsc_khz",
 * "started" (Unix time, s),"socket"}. An entry whose pid is gone, or whose
 * socket refuses connections, is stale: readers remove both files.
 */
#ifndef VMM_VM_REGISTRY_H
#define VMM_VM_REGISTRY_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include <vpmu_limits.h>

#define VMM_RUNTIME_ENV   "VPMU_RUNTIME_DIR"
#define VMM_SOCK_PATH_MAX 108 /* sizeof(sockaddr_un.sun_path) */
#define VMM_KICK_PROBES   "kick-probes"

struct vmm_reg_entry {
	char uuid[37];
	char name[VMM_NAME_MAX];
	pid_t pid;
	unsigned int nr_vcpus;
	char pmu[VMM_PMU_MODEL_LEN];
	char image[PATH_MAX];
	uint64_t tsc_khz;
	int64_t started; /* Unix time, seconds */
	char socket[VMM_SOCK_PATH_MAX];
};

/*
 * The runtime directory for this user into (buf): see above. Returns 0, or
 * -ENOENT when neither root nor XDG_RUNTIME_DIR gives one, -ENAMETOOLONG.
 */
int vmm_runtime_dir(char *buf, size_t len);

/*
 * Text for an error (ret) of vmm_runtime_dir(), vmm_runtime_dir_create()
 * or of reading the directory: -ENOENT from vmm_runtime_dir() says which
 * variable to set, -EPERM and -ENOTDIR why a directory was refused.
 */
const char *vmm_runtime_strerror(int ret);

/*
 * Create (dir) (and missing parents) with mode 0700. An existing (dir) must
 * be a directory of this user without group or other permissions (nor
 * set-id or sticky bits), else -EPERM (-ENOTDIR for a symlink or a file);
 * it is never chmod'ed. 0 or -errno.
 */
int vmm_runtime_dir_create(const char *dir);

/* (dir)/(uuid)(suffix) into (buf): 0 or -ENAMETOOLONG. */
int vmm_registry_path(char *buf, size_t len, const char *dir, const char *uuid,
		      const char *suffix);

/* Write the entry (e) as (dir)/<uuid>.json atomically: 0 or -errno. */
int vmm_registry_write(const char *dir, const struct vmm_reg_entry *e);

/* Remove (dir)/<uuid>.json and .sock (missing files are fine). */
void vmm_registry_remove(const char *dir, const char *uuid);

/* Read and check the entry at (path) into (*e): 0, -errno or -EINVAL. */
int vmm_registry_read(const char *path, struct vmm_reg_entry *e);

/*
 * Is a VM named (name) registered in (dir) with a live VMM (its pid
 * exists)? 1 with its entry in (*e), 0 if none (or no directory), -errno.
 * `vpmu run --name` refuses a name a running VM has.
 */
int vmm_registry_find_name(const char *dir, const char *name,
			   struct vmm_reg_entry *e);

#endif /* VMM_VM_REGISTRY_H */
