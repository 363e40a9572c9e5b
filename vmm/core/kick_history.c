// SPDX-License-Identifier: MIT
/*
 * kick_history.c: the host's recent kick probes, so that a VM's charge
 * rests on more than its own 100 ms of probing.
 *
 * One probe reads the kernel's part of a kick per ns of exit with a spread
 * of about 2 % on a nested PVM host, from one start to the next: the host
 * was busier or quieter in those 100 ms than in the minutes the VM then
 * runs, and a charge 2 % off moves a 50 % overhead budget by a point. The
 * mean of the host's last few probes keeps what all of them measured, the
 * host's own kick, and loses most of what each one's moment added. Each VM
 * appends its probe to a file in the runtime directory (per user, on a
 * tmpfs), unless its thread waited for a CPU, and takes the mean of the
 * ratios of the probes of this boot (the kernel the kicks run through)
 * from the last day that lie near their median; the exit the ratio scales
 * is still each kick's own, so a host that became slower or faster since
 * is followed kick by kick. A file that cannot be read as one of ours is
 * replaced, never trusted.
 */
#include "vmm_core_priv.h"
#include "vm_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_VERSION   1
#define HISTORY_MAX_BYTES 16384
#define HISTORY_MAX_AGE_S (24 * 3600)
/* What a probe can have measured: a kick's exit under 1 ms (the charge
 * takes a longer one as the host's scheduling), its kernel part under
 * 10 ms. */
#define MAX_EXIT_NS   1000000ULL
#define MAX_KERNEL_NS 10000000ULL

static int get_u64(struct json_object *o, const char *key, uint64_t *v)
{
	struct json_object *f;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &f) ||
	    !json_object_is_type(f, json_type_int))
		return -EINVAL;
	x = json_object_get_int64(f);
	if (x < 0)
		return -EINVAL;
	*v = (uint64_t)x;
	return 0;
}

static int parse_probe(struct json_object *o, int64_t now,
		       struct vmm_kick_probe_rec *rec)
{
	uint64_t time_s;

	if (!json_object_is_type(o, json_type_object) ||
	    get_u64(o, "time", &time_s) ||
	    get_u64(o, "kernel_ns", &rec->kernel_ns) ||
	    get_u64(o, "exit_ns", &rec->exit_ns) || !rec->exit_ns ||
	    rec->exit_ns > MAX_EXIT_NS || !rec->kernel_ns ||
	    rec->kernel_ns > MAX_KERNEL_NS || time_s > (uint64_t)now + 60)
		return -EINVAL;
	rec->time = (int64_t)time_s;
	return 0;
}

int vmm_kick_history_parse(const char *text, const char *boot_id, int64_t now,
			   struct vmm_kick_probe_rec *recs, unsigned int max)
{
	struct json_object *root, *f, *probes;
	struct vmm_kick_probe_rec rec;
	unsigned int i, n = 0;
	size_t len;
	int ret = -EINVAL;

	root = json_tokener_parse(text);
	if (!root || !json_object_is_type(root, json_type_object))
		goto out;
	if (!json_object_object_get_ex(root, "v", &f) ||
	    !json_object_is_type(f, json_type_int) ||
	    json_object_get_int(f) != HISTORY_VERSION)
		goto out;
	if (!json_object_object_get_ex(root, "boot_id", &f) ||
	    !json_object_is_type(f, json_type_string) ||
	    !json_object_object_get_ex(root, "probes", &probes) ||
	    !json_object_is_type(probes, json_type_array))
		goto out;
	ret = 0;
	/* Another boot's kicks ran through another kernel: none of them. */
	if (strcmp(json_object_get_string(f), boot_id))
		goto out;
	len = json_object_array_length(probes);
	for (i = 0; i < len; i++) {
		if (parse_probe(json_object_array_get_idx(probes, i), now,
				&rec)) {
			ret = -EINVAL;
			goto out;
		}
		if (rec.time + HISTORY_MAX_AGE_S < now || !max)
			continue; /* the host of a day ago, or none asked */
		if (n == max) {   /* the newest are last: keep them */
			memmove(recs, recs + 1, (max - 1) * sizeof(*recs));
			n--;
		}
		recs[n++] = rec;
	}
	ret = (int)n;
out:
	json_object_put(root);
	return ret;
}

/*
 * A probe that shared the host with a busy neighbour (a CI run beside
 * read 0.3 where the host's kicks were 1.8) is no estimate of the host:
 * only the ratios within a quarter of the median count, and from five on
 * the highest and lowest of those are left out. When none is near it
 * (two probes far apart), the newest, this VM's own, as without a
 * history.
 */
uint64_t vmm_kick_history_ratio(const struct vmm_kick_probe_rec *recs,
				unsigned int n)
{
	uint64_t ratio[VMM_KICK_HISTORY_MAX], median, newest, sum = 0;
	unsigned int i, k = 0, first = 0;

	if (n > VMM_KICK_HISTORY_MAX)
		n = VMM_KICK_HISTORY_MAX;
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		ratio[i] = recs[i].kernel_ns * VMM_KICK_RATIO_ONE /
			   recs[i].exit_ns;
	newest = ratio[n - 1];
	qsort(ratio, n, sizeof(ratio[0]), vmm_kick_cmp_u64);
	median = n % 2 ? ratio[n / 2] : (ratio[n / 2 - 1] + ratio[n / 2]) / 2;
	for (i = 0; i < n; i++) {
		if (4 * ratio[i] >= 3 * median && 4 * ratio[i] <= 5 * median)
			ratio[k++] = ratio[i]; /* still sorted */
	}
	if (!k)
		return newest;
	if (k >= 5) {
		first = 1;
		k--;
	}
	for (i = first; i < k; i++)
		sum += ratio[i];
	return sum / (k - first);
}

static void read_boot_id(char *buf, size_t len)
{
	ssize_t n = -1;
	int fd;

	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0]      = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The file's text into (buf), "" when there is none. 0 or -errno. */
static int read_history(const char *path, char *buf, size_t len)
{
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	buf[0] = '\0';
	fd     = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size >= (off_t)len) {
		ret = -EINVAL;
		goto out;
	}
	n = read(fd, buf, len - 1);
	if (n < 0)
		ret = -errno;
	buf[n > 0 ? n : 0] = '\0';
out:
	close(fd);
	return ret;
}

static int write_history(const char *path, const char *boot_id,
			 const struct vmm_kick_probe_rec *recs, unsigned int n)
{
	struct json_object *root, *probes, *o;
	char tmp[PATH_MAX];
	const char *text;
	unsigned int i;
	size_t len;
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	root   = json_object_new_object();
	probes = json_object_new_array();
	json_object_object_add(root, "v", json_object_new_int(HISTORY_VERSION));
	json_object_object_add(root, "boot_id",
			       json_object_new_string(boot_id));
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "time",
				       json_object_new_int64(recs[i].time));
		json_object_object_add(
			o, "kernel_ns",
			json_object_new_int64((int64_t)recs[i].kernel_ns));
		json_object_object_add(
			o, "exit_ns",
			json_object_new_int64((int64_t)recs[i].exit_ns));
		json_object_array_add(probes, o);
	}
	json_object_object_add(root, "probes", probes);
	text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN,
						 &len);
	fd   = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		ret = errno ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	/* Readers never see half a file; a VM starting beside wins or loses. */
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	json_object_put(root);
	return ret;
}

/*
 * A probe whose thread waited for a CPU (a VM starting beside busy ones,
 * a test beside another) measured the host's contention as much as its
 * kicks: one that waited read 0.3 where the host's kicks were 1.8. It is
 * not kept, and its VM charges the kept probes' mean, at their exit,
 * when there are any.
 */
int vmm_kick_history_update(const char *dir, struct vmm_kick_cost *cost,
			    bool *replaced)
{
	struct vmm_kick_probe_rec recs[VMM_KICK_HISTORY_MAX];
	bool quiet = cost->cpu_ppm >= VMM_KICK_QUIET_PPM;
	char path[PATH_MAX], boot_id[64], *text;
	int64_t now = (int64_t)time(NULL);
	uint64_t ratio, exit_sum = 0;
	int i, n, ret = 0;

	*replaced = false;
	if (!cost->kernel_ns || !cost->exit_ns || cost->exit_ns > MAX_EXIT_NS ||
	    cost->kernel_ns > MAX_KERNEL_NS)
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%s", dir, VMM_KICK_PROBES) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	text = malloc(HISTORY_MAX_BYTES);
	if (!text)
		return -ENOMEM;
	read_boot_id(boot_id, sizeof(boot_id));
	n = 0;
	if (read_history(path, text, HISTORY_MAX_BYTES)) {
		*replaced = true; /* not a regular file we could read */
		unlink(path);
	} else if (text[0]) {
		n         = vmm_kick_history_parse(text, boot_id, now, recs,
						   VMM_KICK_HISTORY_MAX - quiet);
		*replaced = n < 0;
		n         = n < 0 ? 0 : n;
	}
	free(text);
	if (quiet) {
		recs[n++] = (struct vmm_kick_probe_rec){
			.time      = now,
			.kernel_ns = cost->kernel_ns,
			.exit_ns   = cost->exit_ns};
		ret = write_history(path, boot_id, recs, (unsigned int)n);
	} else if (*replaced) {
		ret = write_history(path, boot_id, recs, 0);
	}
	if (!n)
		return ret; /* a busy host's probe, and nothing better */
	ratio = vmm_kick_history_ratio(recs, (unsigned int)n);
	if (!quiet) { /* its exit waited too: the kept ones' */
		for (i = 0; i < n; i++)
			exit_sum += recs[i].exit_ns;
		cost->exit_ns = exit_sum / (uint64_t)n;
	}
	/* Written or not, this VM charges what the host's probes agree on. */
	cost->kernel_ns = ratio * cost->exit_ns / VMM_KICK_RATIO_ONE;
	cost->lost_ns   = cost->kernel_ns + cost->user_ns;
	cost->nr_probes = (unsigned int)n;
	return ret;
}
