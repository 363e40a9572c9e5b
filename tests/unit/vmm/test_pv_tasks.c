// SPDX-License-Identifier: MIT
/*
 * test_pv_tasks.c: the VMM's table of the guest's processes
 * (vmm/pv/pv_tasks.c, PVPMU_HC_TASK): every field a record does not use
 * must be zero, every field it uses must make sense, and each refusal is
 * counted; a flood is held to the rate and the table's size; records of a
 * process that exec()ed or exited stay for a while, then make room; an
 * operator reads them in order from any generation. No VM is run.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "pv_fake_vm.h"

#define SEC 1000000000ULL

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;

static void setup(void)
{
	pv_fake_vm(&vm, &vcpu);
}

static void teardown(void)
{
	vmm_pv_detach(&vm); /* frees the table and its paths */
}

TestSuite(vmm_pv_tasks, .init = setup, .fini = teardown);

static struct pvpmu_hc_task comm(int pid, const char *name, uint32_t flags)
{
	struct pvpmu_hc_task t = {.size  = sizeof(t),
				  .op    = PVPMU_TASK_COMM,
				  .pid   = pid,
				  .tid   = pid,
				  .flags = flags};

	strncpy((char *)t.comm, name, sizeof(t.comm) - 1);
	return t;
}

static struct pvpmu_hc_task mmap_rec(int pid, uint64_t start, size_t path_len)
{
	return (struct pvpmu_hc_task){.size     = sizeof(struct pvpmu_hc_task),
				      .op       = PVPMU_TASK_MMAP,
				      .pid      = pid,
				      .start    = start,
				      .len      = 0x2000,
				      .pgoff    = 0x1000,
				      .path_len = (uint32_t)path_len,
				      .path_gpa = 0x5000};
}

struct seen {
	unsigned int n;
	struct vmm_pv_task_rec r[8];
	char paths[8][64];
};

static void keep(void *opaque, const struct vmm_pv_task_rec *r)
{
	struct seen *s = opaque;

	if (s->n < 8) {
		s->r[s->n] = *r;
		if (r->path)
			snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s",
				 r->path);
		s->n++;
	}
}

Test(vmm_pv_tasks, good_records_are_kept_in_order_and_read_from_any_generation)
{
	struct pvpmu_hc_task c = comm(42, "alpha", PVPMU_TASK_EXEC),
			     m = mmap_rec(42, 0x400000, 11);
	struct vmm_pv_task_stats st;
	struct seen s = {0};

	cr_assert(eq(int, vmm_pv_task_add(&vm, &c, NULL, SEC), 0));
	cr_assert(eq(int, vmm_pv_task_add(&vm, &m, "/bin/alphaXXX", SEC), 0));
	cr_assert(eq(u32, vmm_pv_tasks_since(&vm, 0, 100, keep, &s, &st), 2));
	cr_expect(eq(u64, st.gen, 2));
	cr_expect(eq(u64, st.taken, 2));
	cr_expect(eq(u64, s.r[0].gen, 1));
	cr_expect(eq(str, s.r[0].comm, "alpha"));
	cr_expect(eq(u32, s.r[0].flags, PVPMU_TASK_EXEC));
	/* The path is the guest's path_len bytes, NUL-terminated here. */
	cr_expect(eq(str, s.paths[1], "/bin/alphaX"));
	cr_expect(eq(u64, s.r[1].start, 0x400000));
	memset(&s, 0, sizeof(s));
	cr_assert(eq(u32, vmm_pv_tasks_since(&vm, 1, 100, keep, &s, &st), 1));
	cr_expect(eq(u64, s.r[0].gen, 2));
	cr_assert(eq(u32, vmm_pv_tasks_since(&vm, 2, 100, keep, &s, &st), 0));
}

Test(vmm_pv_tasks, malformed_records_are_refused_and_counted)
{
	struct pvpmu_hc_task bad[16];
	struct vmm_pv_task_stats st;
	struct seen s = {0};
	unsigned int i, n = 0;

	bad[n]       = comm(0, "x", 0); /* no process 0 */
	bad[n++].pid = 0;
	bad[n]       = comm(5, "x", 0);
	bad[n++].op  = 9;              /* unknown op */
	bad[n]       = comm(5, "", 0); /* empty name */
	n++;
	bad[n] = comm(5, "x", 0);
	memset(bad[n++].comm, 'a', PVPMU_TASK_COMM_LEN); /* no NUL */
	bad[n]           = comm(5, "x", 0);
	bad[n++].comm[5] = 'y'; /* bytes hidden after the NUL */
	bad[n]           = comm(5, "x", 0);
	bad[n++].flags   = 2; /* unknown flag */
	bad[n]           = comm(5, "x", 0);
	bad[n++].start   = 0x1000; /* a field COMM does not use */
	bad[n]           = mmap_rec(5, 0x400001, 7); /* not page-aligned */
	n++;
	bad[n]       = mmap_rec(5, 0x400000, 7);
	bad[n++].len = 0;
	bad[n] = mmap_rec(5, (1ULL << 47) - 0x1000, 7); /* past user space */
	n++;
	bad[n]       = mmap_rec(5, 0x400000, 7);
	bad[n++].tid = 3; /* a field MMAP does not use */
	for (i = 0; i < n; i++)
		cr_expect(eq(int, vmm_pv_task_add(&vm, &bad[i], "/bin/ok", SEC),
			     -PVPMU_EINVAL),
			  "record %u", i);
	/* Paths: relative, with a NUL inside, too long, outside RAM. */
	bad[0] = mmap_rec(5, 0x400000, 6);
	cr_expect(eq(int, vmm_pv_task_add(&vm, &bad[0], "bin/ok", SEC),
		     -PVPMU_EINVAL));
	cr_expect(eq(int, vmm_pv_task_add(&vm, &bad[0], "/bi\0ok", SEC),
		     -PVPMU_EINVAL));
	bad[0] = mmap_rec(5, 0x400000, PVPMU_TASK_PATH_MAX + 1);
	cr_expect(eq(int, vmm_pv_task_add(&vm, &bad[0], "/x", SEC),
		     -PVPMU_EINVAL));
	bad[0] = mmap_rec(5, 0x400000, 6);
	cr_expect(eq(int, vmm_pv_task_add(&vm, &bad[0], NULL, SEC),
		     -PVPMU_EFAULT));
	/* An exit uses nothing but its pid. */
	bad[0] = (struct pvpmu_hc_task){.size  = sizeof(bad[0]),
					.op    = PVPMU_TASK_EXIT,
					.pid   = 5,
					.pgoff = 1};
	cr_expect(eq(int, vmm_pv_task_add(&vm, &bad[0], NULL, SEC),
		     -PVPMU_EINVAL));
	vmm_pv_tasks_since(&vm, 0, 100, keep, &s, &st);
	cr_expect(eq(u32, s.n, 0), "nothing malformed is kept");
	cr_expect(eq(u64, st.refused, n + 5));
	cr_expect(eq(u64, st.taken, 0));
}

Test(vmm_pv_tasks, a_flood_is_held_to_the_rate_and_the_table)
{
	struct pvpmu_hc_task c;
	struct vmm_pv_task_stats st;
	struct seen s = {0};
	unsigned int i, ok = 0, again = 0, full = 0;
	int ret;

	/* One burst at one instant: the bucket's burst, then EAGAIN. */
	for (i = 0; i < 2 * VMM_PV_TASK_BURST; i++) {
		c   = comm(1000 + (int)i, "flood", 0);
		ret = vmm_pv_task_add(&vm, &c, NULL, SEC);
		ok += ret == 0;
		again += ret == -PVPMU_EAGAIN;
	}
	cr_expect(eq(u32, ok, VMM_PV_TASK_BURST));
	cr_expect(eq(u32, again, VMM_PV_TASK_BURST));
	/* Later the rate refills the bucket, but the table is full. */
	for (i = 0; i < 100; i++) {
		c   = comm(9000 + (int)i, "late", 0);
		ret = vmm_pv_task_add(&vm, &c, NULL, 3 * SEC);
		full += ret == -PVPMU_ENOSPC;
	}
	cr_expect(eq(u32, full, 100), "the table holds %d records",
		  VMM_PV_TASKS_MAX);
	vmm_pv_tasks_since(&vm, 0, 1, keep, &s, &st);
	cr_expect(eq(u64, st.dropped, VMM_PV_TASK_BURST + 100));
	cr_expect(eq(u32, st.held, VMM_PV_TASKS_MAX));
	cr_expect(eq(str, s.r[0].comm, "flood"), "the first records stay");
}

Test(vmm_pv_tasks, records_of_ended_processes_make_room_after_a_while)
{
	struct pvpmu_hc_task c, e = {.size = sizeof(e), .op = PVPMU_TASK_EXIT};
	struct vmm_pv_task_stats st;
	struct seen s = {0};
	uint64_t t    = SEC;
	unsigned int i;

	/* Fill the table at the rate the bucket allows, then end them. */
	for (i = 0; i < VMM_PV_TASKS_MAX; i++) {
		c = comm(100 + (int)i, "old", 0);
		t += SEC / VMM_PV_TASK_RATE;
		cr_assert(eq(int, vmm_pv_task_add(&vm, &c, NULL, t), 0));
	}
	e.pid = 100;
	t += SEC / VMM_PV_TASK_RATE;
	cr_assert(eq(int, vmm_pv_task_add(&vm, &e, NULL, t), -PVPMU_ENOSPC),
		  "full: even an exit waits for room");
	/* An exec of process 101 ends its old name... */
	c = comm(101, "new", PVPMU_TASK_EXEC);
	cr_assert(eq(int, vmm_pv_task_add(&vm, &c, NULL, t), -PVPMU_ENOSPC));
	/* ...which makes room once it has been dead long enough. */
	c = comm(102, "new", PVPMU_TASK_EXEC);
	t += VMM_PV_TASK_KEEP_NS + SEC;
	cr_assert(eq(int, vmm_pv_task_add(&vm, &c, NULL, t), 0));
	vmm_pv_tasks_since(&vm, VMM_PV_TASKS_MAX, 8, keep, &s, &st);
	cr_expect(eq(u32, s.n, 1));
	cr_expect(eq(str, s.r[0].comm, "new"));
	/* The refused exit still ended 100: its name went too. */
	cr_expect(eq(u32, st.held, VMM_PV_TASKS_MAX - 1),
		  "100's and 101's old names made room for 102's new one");
}
