// SPDX-License-Identifier: MIT
/*
 * test_registry.c: the runtime directory of host operators (issue 7)
 * without a VM: entries round-trip, the directory follows
 * $VPMU_RUNTIME_DIR, and discovery removes the entry (and socket) of a
 * VMM that is gone while keeping a live one.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_client.h"
#include "vm_registry.h"

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
	cr_assert(eq(int, vmm_client_discover(dir, &found, &n, f), 0));
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
