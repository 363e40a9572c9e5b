// SPDX-License-Identifier: MIT
/*
 * test_registry.c: the runtime directory of host operators
 * without a VM: entries round-trip, the directory follows
 * $VPMU_RUNTIME_DIR, and discovery removes the entry (and socket) of a
 * VMM that is gone while keeping a live one.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_client.h"
#include "vm_registry.h"
#include "ops_cmd.h"

static char dir[] = "/tmp/vpmu-reg-XXXXXX";

static void setup(void)
{
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert(eq(int, system(cmd), 0));
}

TestSuite(vmm_registry, .init = setup, .fini = teardown);

static void entry(struct vmm_reg_entry *e, const char *uuid, pid_t pid)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->uuid, sizeof(e->uuid), "%s", uuid);
	snprintf(e->name, sizeof(e->name), "vm-%.4s", uuid);
	snprintf(e->pmu, sizeof(e->pmu), "intel-v2");
	snprintf(e->image, sizeof(e->image), "/images/guest.elf");
	snprintf(e->socket, sizeof(e->socket), "%s/%s.sock", dir, uuid);
	e->pid      = pid;
	e->nr_vcpus = 4;
	e->tsc_khz  = 2400000;
	e->started  = 1700000000;
}

Test(vmm_registry, round_trip_and_runtime_dir)
{
	struct vmm_reg_entry w, r;
	char path[256], rd[256];

	entry(&w, "11111111-2222-3333-4444-555555555555", getpid());
	cr_assert(eq(int, vmm_registry_write(dir, &w), 0));
	snprintf(path, sizeof(path), "%s/%s.json", dir, w.uuid);
	cr_assert(eq(int, vmm_registry_read(path, &r), 0));
	cr_assert(eq(int, memcmp(&w, &r, sizeof(w)), 0));
	snprintf(path, sizeof(path), "%s/%s.json.tmp", dir, w.uuid);
	cr_assert(ne(int, access(path, F_OK), 0), "temporary file left");
	setenv(VMM_RUNTIME_ENV, dir, 1);
	cr_assert(eq(int, vmm_runtime_dir(rd, sizeof(rd)), 0));
	cr_assert(eq(str, rd, dir));
	vmm_registry_remove(dir, w.uuid);
	snprintf(path, sizeof(path), "%s/%s.json", dir, w.uuid);
	cr_assert(ne(int, access(path, F_OK), 0));
}

/* A pid that no longer exists: a reaped child's. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

Test(vmm_registry, discovery_removes_stale_entries)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct vmm_reg_entry live, dead, *found;
	char path[256], notes[512] = "";
	unsigned int n;
	FILE *f;
	int fd;

	entry(&live, "aaaaaaaa-0000-0000-0000-000000000000", getpid());
	entry(&dead, "bbbbbbbb-0000-0000-0000-000000000000", dead_pid());
	/* The live one listens; the dead one left its socket file behind. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", live.socket);
	cr_assert(eq(int, bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0));
	cr_assert(eq(int, listen(fd, 4), 0));
	f = fopen(dead.socket, "w");
	fclose(f);
	cr_assert(eq(int, vmm_registry_write(dir, &live), 0));
	cr_assert(eq(int, vmm_registry_write(dir, &dead), 0));
	/* Garbage in the directory is ignored. */
	snprintf(path, sizeof(path),
		 "%s/cccccccc-0000-0000-0000-000000000000"
		 ".json",
		 dir);
	f = fopen(path, "w");
	fputs("{not json", f);
	fclose(f);

	f = fmemopen(notes, sizeof(notes), "w");
	cr_assert(eq(int, ops_client_discover(dir, &found, &n, f), 0));
	fclose(f);
	cr_assert(eq(u32, n, 1));
	cr_assert(eq(str, found[0].uuid, live.uuid));
	free(found);
	cr_assert(not(eq(ptr, strstr(notes, "stale entry of VM 'vm-bbbb'"),
			 NULL)),
		  "%s", notes);
	snprintf(path, sizeof(path), "%s/%s.json", dir, dead.uuid);
	cr_assert(ne(int, access(path, F_OK), 0), "stale entry kept");
	cr_assert(ne(int, access(dead.socket, F_OK), 0), "stale socket kept");
	close(fd);
}

/* ---- Who owns the runtime directory ----------------------------------- */

static mode_t mode_of(const char *path)
{
	struct stat st;

	cr_assert(eq(int, lstat(path, &st), 0), "%s", path);
	return st.st_mode & 07777;
}

/*
 * Ours but open to others: refused and left as it is (the user may have
 * named /tmp or /run); 0700 and a new directory are fine.
 */
Test(vmm_registry, own_dir_open_to_others_is_refused)
{
	static const mode_t modes[] = {0777, 0755, 0750, 0701, 0710, 01700};
	char sub[128];
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		cr_assert(eq(int, chmod(dir, modes[i]), 0));
		cr_expect(eq(int, vmm_runtime_dir_create(dir), -EPERM),
			  "mode %o", modes[i]);
		cr_expect(eq(u32, mode_of(dir), modes[i]), "mode changed");
	}
	cr_assert(eq(int, chmod(dir, 0700), 0));
	cr_expect(eq(int, vmm_runtime_dir_create(dir), 0));
	/* A new one is created 0700, whatever the umask. */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	umask(0);
	cr_assert(eq(int, vmm_runtime_dir_create(sub), 0));
	cr_expect(eq(u32, mode_of(sub), 0700));
}

/*
 * Someone else's directory is refused and left alone. Root gives the
 * directory away; another user uses "/", which root owns.
 */
Test(vmm_registry, dir_of_another_user_is_refused)
{
	const char *other = dir;
	mode_t before;

	if (geteuid() == 0)
		cr_assert(eq(int, chown(dir, 65534, 65534), 0));
	else
		other = "/";
	cr_assert(eq(int, chmod(dir, 0700), 0));
	before = mode_of(other);
	cr_expect(eq(int, vmm_runtime_dir_create(other), -EPERM));
	cr_expect(eq(u32, mode_of(other), before), "mode changed");
	cr_expect(not(eq(ptr,
			 strstr(vmm_runtime_strerror(-EPERM),
				"must be this user's own"),
			 NULL)),
		  "%s", vmm_runtime_strerror(-EPERM));
	if (geteuid() == 0)
		cr_assert(eq(int, chown(dir, 0, 0), 0));
}

/* A symlink or a file where the directory should be is refused. */
Test(vmm_registry, symlink_or_file_is_refused)
{
	char real[128], link[128], file[128];
	FILE *f;

	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	cr_assert(eq(int, mkdir(real, 0700), 0));
	cr_assert(eq(int, symlink(real, link), 0));
	cr_expect(eq(int, vmm_runtime_dir_create(link), -ENOTDIR));
	f = fopen(file, "w");
	cr_assert(f != NULL);
	fclose(f);
	cr_expect(eq(int, vmm_runtime_dir_create(file), -ENOTDIR));
}

/*
 * `vpmu list --no-libvirt` run by a user who cannot read (dir): in a child
 * (as uid 65534 when the test runs as root). Returns its exit status and
 * its stderr in (msg).
 */
static int list_as_other(char *msg, size_t len)
{
	char errf[128];
	bool exited;
	ssize_t n;
	pid_t pid;
	int fd, st;

	snprintf(errf, sizeof(errf), "%s.err", dir);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char *argv[] = {"--no-libvirt", NULL};

		fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd < 0 || dup2(fd, 2) < 0 ||
		    !freopen("/dev/null", "w", stdout))
			_exit(90);
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(91);
		setenv(VMM_RUNTIME_ENV, dir, 1);
		_exit(ops_cmd_list(1, argv));
	}
	cr_assert(eq(int, waitpid(pid, &st, 0), pid));
	fd = open(errf, O_RDONLY);
	cr_assert(fd >= 0);
	n                  = read(fd, msg, len - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(errf);
	exited = WIFEXITED(st);
	cr_assert(exited, "child status %d", st);
	return WEXITSTATUS(st);
}

Test(vmm_registry, list_refuses_an_unreadable_dir)
{
	char msg[512];
	int ret;

	cr_assert(eq(int, chmod(dir, 0300), 0)); /* no read for anyone */
	ret = list_as_other(msg, sizeof(msg));
	chmod(dir, 0700);
	cr_expect(eq(int, ret, 1), "%s", msg);
	cr_expect(strstr(msg, "vpmu list: cannot read the runtime directory") &&
			  strstr(msg, dir) && strstr(msg, "Permission denied"),
		  "%s", msg);
}

/* Entries the user may not read are an error too, not an empty list. */
Test(vmm_registry, list_refuses_unreadable_entries)
{
	struct vmm_reg_entry e;
	char path[256], msg[512];
	int ret;

	entry(&e, "dddddddd-0000-0000-0000-000000000000", getpid());
	cr_assert(eq(int, vmm_registry_write(dir, &e), 0));
	snprintf(path, sizeof(path), "%s/%s.json", dir, e.uuid);
	cr_assert(eq(int, chmod(path, 0), 0));
	cr_assert(eq(int, chmod(dir, 0755), 0));
	ret = list_as_other(msg, sizeof(msg));
	cr_expect(eq(int, ret, 1), "%s", msg);
	cr_expect(strstr(msg, "vpmu list: cannot read the runtime directory") &&
			  strstr(msg, "Permission denied"),
		  "%s", msg);
}
