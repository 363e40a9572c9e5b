// SPDX-License-Identifier: MIT
/*
 * vm_registry.c: the runtime directory and the registry entries of running
 * VMs (see vm_registry.h). Used by the VMM (write, remove) and by the host
 * commands (read).
 */
#include "vm_registry.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int vmm_runtime_dir(char *buf, size_t len)
{
	const char *env = getenv(VMM_RUNTIME_ENV);
	int n;

	if (env && env[0])
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/run/vpmu");
	else if ((env = getenv("XDG_RUNTIME_DIR")) && env[0])
		n = snprintf(buf, len, "%s/vpmu", env);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *vmm_runtime_strerror(int ret)
{
	if (ret == -ENOENT && !getenv(VMM_RUNTIME_ENV) && geteuid() != 0 &&
	    !getenv("XDG_RUNTIME_DIR"))
		return "no runtime directory: set " VMM_RUNTIME_ENV
		       " or XDG_RUNTIME_DIR";
	if (ret == -EPERM)
		return "refused: a runtime directory must be this user's own, "
		       "closed to others (mode 0700): chmod 0700 it if it is "
		       "yours, else set " VMM_RUNTIME_ENV;
	if (ret == -ENOTDIR)
		return "not a directory (a symlink or a file is in the way)";
	return strerror(-ret);
}

/*
 * The directory holds the VM's control socket and registry entry: whoever
 * else may write there could plant entries that point operators elsewhere
 * or replace the socket, and whoever may read it sees every VM. So it must
 * be a real directory (not a symlink) of this user with no group or other
 * permissions. It is refused, not repaired: the path may be one the user
 * named ($VPMU_RUNTIME_DIR=/tmp, or /run for root), whose mode is not ours
 * to change.
 */
static int check_dir(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || (st.st_mode & 07077))
		return -EPERM;
	return 0;
}

int vmm_runtime_dir_create(const char *dir)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return check_dir(tmp);
}

int vmm_registry_path(char *buf, size_t len, const char *dir, const char *uuid,
		      const char *suffix)
{
	int n = snprintf(buf, len, "%s/%s%s", dir, uuid, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static struct json_object *to_json(const struct vmm_reg_entry *e)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "uuid", json_object_new_string(e->uuid));
	json_object_object_add(o, "name", json_object_new_string(e->name));
	json_object_object_add(o, "pid", json_object_new_int(e->pid));
	json_object_object_add(o, "nr_vcpus",
			       json_object_new_int((int)e->nr_vcpus));
	json_object_object_add(o, "pmu", json_object_new_string(e->pmu));
	json_object_object_add(o, "image", json_object_new_string(e->image));
	json_object_object_add(o, "tsc_khz",
			       json_object_new_uint64(e->tsc_khz));
	json_object_object_add(o, "started", json_object_new_int64(e->started));
	json_object_object_add(o, "socket", json_object_new_string(e->socket));
	return o;
}

/*
 * Readers poll the directory while VMs start: they must never see half an
 * entry, hence the temporary file and rename(2), which is atomic.
 */
int vmm_registry_write(const char *dir, const struct vmm_reg_entry *e)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	struct json_object *o;
	const char *text;
	int fd, ret = 0;
	size_t len;

	ret = vmm_registry_path(path, sizeof(path), dir, e->uuid, ".json");
	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	o    = to_json(e);
	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY,
						 &len);
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		ret = errno ? -errno : -EIO;
	json_object_put(o);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

void vmm_registry_remove(const char *dir, const char *uuid)
{
	char path[PATH_MAX];

	if (!vmm_registry_path(path, sizeof(path), dir, uuid, ".json"))
		unlink(path);
	if (!vmm_registry_path(path, sizeof(path), dir, uuid, ".sock"))
		unlink(path);
}

static int get_str(struct json_object *o, const char *key, char *buf,
		   size_t len)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= len)
		return -EINVAL;
	snprintf(buf, len, "%s", json_object_get_string(v));
	return 0;
}

static int get_int(struct json_object *o, const char *key, int64_t min,
		   int64_t max, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -EINVAL;
	*out = json_object_get_int64(v);
	return *out < min || *out > max ? -EINVAL : 0;
}

int vmm_registry_read(const char *path, struct vmm_reg_entry *e)
{
	struct json_object *o = json_object_from_file(path);
	int64_t pid = 0, nr = 0, khz = 0, started = 0;
	int ret;

	if (!o)
		return access(path, R_OK) ? -errno : -EINVAL;
	memset(e, 0, sizeof(*e));
	ret = json_object_is_type(o, json_type_object) ? 0 : -EINVAL;
	if (!ret)
		ret = get_str(o, "uuid", e->uuid, sizeof(e->uuid));
	if (!ret)
		ret = get_str(o, "name", e->name, sizeof(e->name));
	if (!ret)
		ret = get_str(o, "pmu", e->pmu, sizeof(e->pmu));
	if (!ret)
		ret = get_str(o, "image", e->image, sizeof(e->image));
	if (!ret)
		ret = get_str(o, "socket", e->socket, sizeof(e->socket));
	if (!ret)
		ret = get_int(o, "pid", 1, INT32_MAX, &pid);
	if (!ret)
		ret = get_int(o, "nr_vcpus", 1, VMM_VCPUS_MAX, &nr);
	if (!ret)
		ret = get_int(o, "tsc_khz", 0, INT64_MAX, &khz);
	if (!ret)
		ret = get_int(o, "started", 0, INT64_MAX, &started);
	json_object_put(o);
	if (ret)
		return ret;
	e->pid      = (pid_t)pid;
	e->nr_vcpus = (unsigned int)nr;
	e->tsc_khz  = (uint64_t)khz;
	e->started  = started;
	return 0;
}

int vmm_registry_find_name(const char *dir, const char *name,
			   struct vmm_reg_entry *e)
{
	char path[PATH_MAX];
	struct dirent *d;
	int found = 0;
	size_t n;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while (!found && (d = readdir(dp))) {
		n = strlen(d->d_name);
		if (n < 6 || strcmp(d->d_name + n - 5, ".json") ||
		    snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >=
			    (int)sizeof(path) ||
		    vmm_registry_read(path, e) || strcmp(e->name, name))
			continue;
		found = kill(e->pid, 0) == 0 || errno == EPERM;
	}
	closedir(dp);
	return found;
}
