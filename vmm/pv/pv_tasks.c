// SPDX-License-Identifier: MIT
/*
 * pv_tasks.c: the guest's processes as its kernel reports them
 * (PVPMU_HC_TASK): names and executable mappings, so that a host profile
 * can say which guest program a sample is in and resolve its symbols.
 *
 * Everything here comes from the guest, so it is bounded three ways: each
 * record is checked field by field; records are taken at a rate with a
 * burst (a token bucket), so a guest that floods is refused, not obeyed;
 * the table holds a fixed number of records. Records of a process that
 * exited or exec()ed stay a while (an operator polls about once a second
 * and must still see a short-lived program), then make room. Refusals are
 * counted for the operator (`vpmu record` prints them).
 */
#include "vmm_pv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pvpmu/abi.h>

#define USER_TOP  (1ULL << 47) /* end of x86-64 user space, 4-level */
#define PAGE_MASK 4095ULL

struct vmm_pv_tasks {
	pthread_mutex_t lock;
	struct vmm_pv_task_rec *rec; /* in generation order */
	unsigned int nr;
	uint64_t gen;
	uint64_t taken, refused, dropped;
	uint64_t tokens; /* records the bucket allows now */
	uint64_t refill_ns;
};

static struct vmm_pv_tasks *tasks_of(struct vmm_vm *vm, bool create)
{
	struct vmm_pv *p = vmm_pv(vm);
	struct vmm_pv_tasks *t;

	if (!p)
		return NULL;
	t = __atomic_load_n(&p->tasks, __ATOMIC_ACQUIRE);
	if (t || !create)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->rec = calloc(VMM_PV_TASKS_MAX, sizeof(*t->rec));
	if (!t->rec) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->tokens = VMM_PV_TASK_BURST;
	/* Two vCPUs may race to create it: one wins, the other frees. */
	{
		struct vmm_pv_tasks *none = NULL;

		if (!__atomic_compare_exchange_n(&p->tasks, &none, t, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			pthread_mutex_destroy(&t->lock);
			free(t->rec);
			free(t);
			t = none;
		}
	}
	return t;
}

static bool comm_ok(const uint8_t *c)
{
	size_t n = strnlen((const char *)c, PVPMU_TASK_COMM_LEN);
	size_t i;

	if (!n || n == PVPMU_TASK_COMM_LEN)
		return false;
	for (i = n; i < PVPMU_TASK_COMM_LEN; i++) {
		if (c[i])
			return false; /* NUL-padded, nothing hidden after */
	}
	return true;
}

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		if (*b++)
			return false;
	}
	return true;
}

/* Field by field: what each op uses, and zero in what it does not. */
static bool record_ok(const struct pvpmu_hc_task *r, const char *path)
{
	if (r->pid <= 0)
		return false;
	switch (r->op) {
	case PVPMU_TASK_COMM:
		return r->tid > 0 && !(r->flags & ~PVPMU_TASK_EXEC) &&
		       !r->path_len && !r->start && !r->len && !r->pgoff &&
		       !r->path_gpa && comm_ok(r->comm);
	case PVPMU_TASK_MMAP:
		return !r->tid && !r->flags && r->len && r->path_len &&
		       r->path_len <= PVPMU_TASK_PATH_MAX &&
		       !(r->start & PAGE_MASK) && !(r->len & PAGE_MASK) &&
		       !(r->pgoff & PAGE_MASK) && r->start < USER_TOP &&
		       r->len <= USER_TOP - r->start && path &&
		       path[0] == '/' && !memchr(path, '\0', r->path_len) &&
		       zero(r->comm, sizeof(r->comm));
	case PVPMU_TASK_EXIT:
		return !r->tid && !r->flags && !r->path_len && !r->start &&
		       !r->len && !r->pgoff && !r->path_gpa &&
		       zero(r->comm, sizeof(r->comm));
	default:
		return false;
	}
}

static bool take_token(struct vmm_pv_tasks *t, uint64_t now)
{
	uint64_t add;

	if (now > t->refill_ns) {
		add = (now - t->refill_ns) / (1000000000ULL / VMM_PV_TASK_RATE);
		if (add) {
			t->tokens    = t->tokens + add > VMM_PV_TASK_BURST
					       ? VMM_PV_TASK_BURST
					       : t->tokens + add;
			t->refill_ns = now;
		}
	} else if (!t->refill_ns) {
		t->refill_ns = now;
	}
	if (!t->tokens)
		return false;
	t->tokens--;
	return true;
}

/* The records of a process no longer live: kept, then made room for. */
static void mark_dead(struct vmm_pv_tasks *t, int32_t pid, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < t->nr; i++) {
		if (t->rec[i].pid == pid && !t->rec[i].dead_ns)
			t->rec[i].dead_ns = now;
	}
}

/* Drop records dead for longer than VMM_PV_TASK_KEEP_NS, keeping order. */
static void make_room(struct vmm_pv_tasks *t, uint64_t now)
{
	unsigned int i, k = 0;

	for (i = 0; i < t->nr; i++) {
		struct vmm_pv_task_rec *r = &t->rec[i];

		if (r->dead_ns && now - r->dead_ns > VMM_PV_TASK_KEEP_NS) {
			free(r->path);
			continue;
		}
		t->rec[k++] = *r;
	}
	t->nr = k;
}

int vmm_pv_task_add(struct vmm_vm *vm, const struct pvpmu_hc_task *req,
		    const char *path, uint64_t now_ns)
{
	struct vmm_pv_tasks *t = tasks_of(vm, true);
	struct vmm_pv_task_rec *r;
	char *copy = NULL;
	int ret    = 0;

	if (!t)
		return -PVPMU_ENOMEM;
	if (req->op == PVPMU_TASK_MMAP && record_ok(req, path)) {
		copy = malloc(req->path_len + 1);
		if (!copy)
			return -PVPMU_ENOMEM;
		memcpy(copy, path, req->path_len);
		copy[req->path_len] = '\0';
	}
	pthread_mutex_lock(&t->lock);
	if (!record_ok(req, path)) {
		t->refused++;
		/* No path: the hypercall found it outside guest RAM. */
		ret = req->op == PVPMU_TASK_MMAP && !path && req->path_len &&
				      req->path_len <= PVPMU_TASK_PATH_MAX
			      ? -PVPMU_EFAULT
			      : -PVPMU_EINVAL;
		goto out;
	}
	if (!take_token(t, now_ns)) {
		t->dropped++;
		ret = -PVPMU_EAGAIN;
		goto out;
	}
	if (req->op == PVPMU_TASK_EXIT ||
	    (req->op == PVPMU_TASK_COMM && (req->flags & PVPMU_TASK_EXEC)))
		mark_dead(t, req->pid, now_ns);
	if (t->nr == VMM_PV_TASKS_MAX)
		make_room(t, now_ns);
	if (t->nr == VMM_PV_TASKS_MAX) {
		t->dropped++;
		ret = -PVPMU_ENOSPC;
		goto out;
	}
	r  = &t->rec[t->nr++];
	*r = (struct vmm_pv_task_rec){
		.gen   = ++t->gen,
		.op    = req->op,
		.flags = req->flags,
		.pid   = req->pid,
		.tid   = req->tid,
		.start = req->start,
		.len   = req->len,
		.pgoff = req->pgoff,
		.path  = copy,
		/* An exit describes no live process from the start. */
		.dead_ns = req->op == PVPMU_TASK_EXIT ? now_ns : 0,
	};
	memcpy(r->comm, req->comm, sizeof(r->comm));
	copy = NULL;
	t->taken++;
out:
	pthread_mutex_unlock(&t->lock);
	free(copy);
	return ret;
}

unsigned int
vmm_pv_tasks_since(struct vmm_vm *vm, uint64_t since, unsigned int max,
		   void (*fn)(void *opaque, const struct vmm_pv_task_rec *r),
		   void *opaque, struct vmm_pv_task_stats *st)
{
	struct vmm_pv_tasks *t = tasks_of(vm, false);
	unsigned int i, n = 0;

	memset(st, 0, sizeof(*st));
	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr && n < max; i++) {
		if (t->rec[i].gen > since) {
			fn(opaque, &t->rec[i]);
			n++;
		}
	}
	st->gen     = t->gen;
	st->taken   = t->taken;
	st->refused = t->refused;
	st->dropped = t->dropped;
	st->held    = t->nr;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void vmm_pv_tasks_free(struct vmm_vm *vm)
{
	struct vmm_pv *p = vmm_pv(vm);
	struct vmm_pv_tasks *t;
	unsigned int i;

	if (!p || !p->tasks)
		return;
	t        = p->tasks;
	p->tasks = NULL;
	for (i = 0; i < t->nr; i++)
		free(t->rec[i].path);
	pthread_mutex_destroy(&t->lock);
	free(t->rec);
	free(t);
}
