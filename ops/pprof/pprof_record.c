// SPDX-License-Identifier: MIT
/*
 * pprof_record.c: `vpmu report --pprof OUT FILE`: a record file (from
 * `vpmu record`) converted to the pprof profile `vpmu serve` serves: the
 * same sample types (samples, the sampled event with its period times
 * the periods the sample stands for (rec_weight: report's count), then
 * what each other recorded event counted since the vCPU's previous
 * sample), functions from each VM's image. Written to OUT.tmp, renamed.
 */
#include "pprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec_profile.h"
#include "record_file.h"

struct conv {
	struct rec_header h;
	struct symtab *st;
	struct pprof_builder *b;
	unsigned int nr_st;
	uint64_t *last; /* [vm][cpu][k] */
	unsigned int nr_cpus_max;
	int64_t t_first, t_last;
	struct guest_procs procs; /* from the file's process notes */
	struct pprof_guest pg;
	size_t nr; /* samples read */
};

static int add_task(void *opaque, const struct rec_task *t)
{
	struct conv *c = opaque;

	return guest_procs_add(&c->procs, t, c->nr);
}

static int add(void *opaque, const struct rec_sample *s)
{
	struct conv *c         = opaque;
	struct pprof_sample ps = {.vm = s->vm, .vcpu = s->cpu};
	uint64_t *last;
	unsigned int k;

	if (s->vm >= c->h.nr_vms || s->cpu >= c->nr_cpus_max)
		return 0; /* rec_read() checked the VM; be safe anyway */
	/* Callers (`vpmu record -g`), leaf first, in the guest's files. */
	pprof_sample_stack(&ps, s->ip, s->chain, s->nr_chain);
	if (pprof_guest_frames(c->b, &c->pg, &c->procs, s->vm, &ps, s->pid,
			       s->tid, c->nr++, &c->st[s->vm],
			       c->h.vms[s->vm].image))
		return -ENOMEM;
	last = &c->last[((size_t)s->vm * c->nr_cpus_max + s->cpu) *
			REC_VALS_MAX];
	/* A sample stands for 1 + the periods it missed, as in report. */
	ps.values[0] = 1;
	ps.values[1] = (int64_t)(rec_weight(&c->h, s) * c->h.period);
	for (k = 1;
	     k < c->h.nr_events && k < s->nr_vals && k + 1 < PPROF_TYPES_MAX;
	     k++) {
		ps.values[k + 1] = (int64_t)(s->vals[k] - last[k]);
		last[k]          = s->vals[k];
	}
	return pprof_add(c->b, &ps);
}

/* After the header, before any sample: types, symbols, tables. */
static int setup(void *opaque, const struct rec_header *h)
{
	struct conv *c                       = opaque;
	struct pprof_type t[PPROF_TYPES_MAX] = {{"samples", "count"}};
	unsigned int n                       = 1, i;
	int ret;

	(void)h; /* the same header as c->h: the read fills it in place */

	snprintf(t[n].type, sizeof(t[n].type), "%s", c->h.event);
	t[n++].unit = pprof_unit_of(c->h.event);
	for (i = 1; i < c->h.nr_events && n < PPROF_TYPES_MAX; i++) {
		snprintf(t[n].type, sizeof(t[n].type), "%s", c->h.events[i]);
		t[n++].unit = pprof_unit_of(c->h.events[i]);
	}
	ret = pprof_new(&c->b, t, n, 1, (int64_t)c->h.period);
	if (ret)
		return ret;
	c->st    = calloc(c->h.nr_vms + 1, sizeof(*c->st));
	c->nr_st = c->st ? c->h.nr_vms : 0;
	for (i = 0; i < c->h.nr_vms; i++)
		if (c->h.vms[i].nr_vcpus > c->nr_cpus_max)
			c->nr_cpus_max = c->h.vms[i].nr_vcpus;
	c->last =
		calloc((size_t)c->h.nr_vms * c->nr_cpus_max * REC_VALS_MAX + 1,
		       sizeof(uint64_t));
	if (!c->st || !c->last)
		return -ENOMEM;
	for (i = 0; i < c->h.nr_vms && !ret; i++) {
		if (symtab_load(&c->st[i], c->h.vms[i].image))
			fprintf(stderr,
				"vpmu report: VM %s: no symbols from %s: "
				"addresses only\n",
				c->h.vms[i].name, c->h.vms[i].image);
		ret = pprof_add_vm(c->b, i, c->h.vms[i].name, c->h.vms[i].uuid,
				   c->h.vms[i].image, &c->st[i]);
	}
	return ret;
}

static int write_file(const char *out, const uint8_t *data, size_t len)
{
	char tmp[PATH_MAX + 8];
	FILE *f;
	int fd, ret = 0;

	/* Never written through a symlink planted at OUT.tmp. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	fd = ops_file_create_new(tmp);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	if (fwrite(data, 1, len, f) != len || fflush(f) || fsync(fileno(f)))
		ret = -errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, out))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int pprof_from_record(const char *in, const char *out, const char *symfs)
{
	struct conv c = {.procs.symfs = symfs};
	uint8_t *data = NULL;
	char err[512] = "";
	unsigned int i;
	size_t len;
	int ret;
	const struct rec_read_args a = {
		.path    = in,
		.flags   = REC_READ_PARTIAL,
		.hdr_fn  = setup,
		.fn      = add,
		.task_fn = add_task,
		.opaque  = &c,
		.err     = err,
		.errlen  = sizeof(err),
	};

	/* One read: tables sized from the header it read. */
	ret = rec_read_ex(&a, &c.h);
	if (!ret && c.h.truncated)
		fprintf(stderr,
			"vpmu report: %s is incomplete (its recorder was "
			"stopped): converting its complete samples\n",
			in);
	if (!ret)
		ret = pprof_finish(c.b, c.h.created * 1000000000LL, 0, &data,
				   &len);
	if (!ret)
		ret = write_file(out, data, len);
	if (ret)
		fprintf(stderr, "vpmu report: --pprof %s: %s\n", out,
			err[0] ? err : strerror(-ret));
	else
		fprintf(stderr, "vpmu report: %s: %llu samples\n", out,
			(unsigned long long)pprof_nr_samples(c.b));
	for (i = 0; i < c.nr_st; i++)
		symtab_free(&c.st[i]);
	free(c.st);
	free(c.last);
	pprof_guest_free(&c.pg);
	guest_procs_free(&c.procs);
	free(data);
	pprof_free(c.b);
	rec_header_free(&c.h);
	return ret ? 1 : 0;
}
