// SPDX-License-Identifier: MIT
/*
 * pv_tasks.c: a hostile guest kernel's process records (PVPMU_HC_TASK),
 * from ring 0 without the SDK. First the records of one well-behaved
 * process (pid 7, "victim": its name and one mapping), then malformed
 * records of every kind, each of which must be refused with its status,
 * then a flood of well-formed ones, which the VMM must cut at its rate and
 * its table. Prints "pv_tasks: sent N, refused R, taken T, dropped D",
 * waits for one byte on the console (the test reads the VMM's table in
 * between), and exits 0, or 1 after naming what went wrong.
 */
#include "kernel.h"
#include "pvpmu_hc.h"

#define FLOOD 6000

static struct pvpmu_hc_task req;
static char path[PVPMU_TASK_PATH_MAX + 64];
static int failures;
static unsigned int sent, refused, taken, dropped;

static long send(const struct pvpmu_hc_task *t, const char *p)
{
	long ret;

	req = *t;
	if (p) {
		memcpy(path, p, strlen(p));
		req.path_gpa = virt_to_gpa(path);
	}
	ret = pvpmu_hypercall(PVPMU_HC_TASK, virt_to_gpa(&req));
	sent++;
	taken += ret == 0;
	refused += ret == -PVPMU_EINVAL || ret == -PVPMU_EFAULT;
	dropped += ret == -PVPMU_EAGAIN || ret == -PVPMU_ENOSPC;
	return ret;
}

static void expect(const char *what, long got, long want)
{
	if (got == want)
		return;
	kprintf("pv_tasks: %s: got %ld, want %ld\n", what, got, want);
	failures++;
}

static struct pvpmu_hc_task comm(int pid, const char *name)
{
	struct pvpmu_hc_task t = {.size  = sizeof(t),
				  .op    = PVPMU_TASK_COMM,
				  .pid   = pid,
				  .tid   = pid,
				  .flags = PVPMU_TASK_EXEC};

	memcpy(t.comm, name, strlen(name));
	return t;
}

static struct pvpmu_hc_task map(int pid, const char *p)
{
	return (struct pvpmu_hc_task){.size     = sizeof(struct pvpmu_hc_task),
				      .op       = PVPMU_TASK_MMAP,
				      .pid      = pid,
				      .start    = 0x400000,
				      .len      = 0x10000,
				      .path_len = (uint32_t)strlen(p)};
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	struct pvpmu_hc_task t;
	unsigned int i;
	char c;

	(void)bi;
	if (vcpu != 0)
		return;
	t = comm(7, "victim");
	expect("victim comm", send(&t, NULL), 0);
	t = map(7, "/bin/victim");
	expect("victim mmap", send(&t, "/bin/victim"), 0);

	t     = comm(8, "bad");
	t.pid = -1;
	expect("negative pid", send(&t, NULL), -PVPMU_EINVAL);
	t    = comm(8, "bad");
	t.op = 77;
	expect("unknown op", send(&t, NULL), -PVPMU_EINVAL);
	t = comm(8, "bad");
	memset(t.comm, 'x', sizeof(t.comm));
	expect("name without NUL", send(&t, NULL), -PVPMU_EINVAL);
	t       = map(8, "/bin/bad");
	t.start = 0x400010;
	expect("unaligned mapping", send(&t, "/bin/bad"), -PVPMU_EINVAL);
	t       = map(8, "/bin/bad");
	t.start = 0xffff800000000000ULL;
	expect("kernel-space mapping", send(&t, "/bin/bad"), -PVPMU_EINVAL);
	t = map(8, "bin/bad");
	expect("relative path", send(&t, "bin/bad"), -PVPMU_EINVAL);
	t          = map(8, "/bin/bad");
	t.path_len = PVPMU_TASK_PATH_MAX + 1;
	expect("path too long", send(&t, "/bin/bad"), -PVPMU_EINVAL);
	t          = map(8, "/bin/bad");
	t.path_gpa = 0xfffff000; /* past the guest's RAM */
	expect("path outside RAM", send(&t, NULL), -PVPMU_EFAULT);

	/* The flood: well-formed, as fast as the guest can ring. */
	for (i = 0; i < FLOOD; i++) {
		t = comm(1000 + (int)i, "flood");
		send(&t, NULL);
	}
	kprintf("pv_tasks: sent %u, refused %u, taken %u, dropped %u\n", sent,
		refused, taken, dropped);
	if (!dropped) {
		kprintf("pv_tasks: a flood of %d records was not cut\n", FLOOD);
		failures++;
	}
	while (console_read(&c, 1) < 1)
		__asm__ __volatile__("pause");
	if (failures)
		kprintf("pv_tasks: %d failure(s)\n", failures);
	else
		kprintf("pv_tasks: ok\n");
	guest_exit(failures ? 1 : 0);
}
