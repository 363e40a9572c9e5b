// SPDX-License-Identifier: MIT
/*
 * record_file.c: writing and reading record files (format in record_file.h).
 */
#include "record_file.h"
#include "ctl_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pvpmu/abi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct json_object *header_json(const struct rec_header *h)
{
	struct json_object *o = json_object_new_object(), *a, *v;
	unsigned int i;

	json_object_object_add(o, "vpmu_record",
			       json_object_new_int(REC_VERSION));
	json_object_object_add(o, "created", json_object_new_int64(h->created));
	json_object_object_add(o, "event", json_object_new_string(h->event));
	json_object_object_add(o, "code", json_object_new_int(h->code));
	json_object_object_add(o, "period", json_object_new_uint64(h->period));
	json_object_object_add(o, "freq", json_object_new_uint64(h->freq));
	a = json_object_new_array();
	for (i = 0; i < h->nr_events; i++)
		json_object_array_add(a, json_object_new_string(h->events[i]));
	json_object_object_add(o, "events", a);
	a = json_object_new_array();
	for (i = 0; i < h->nr_vms; i++) {
		v = json_object_new_object();
		json_object_object_add(v, "idx", json_object_new_int((int)i));
		json_object_object_add(v, "uuid",
				       json_object_new_string(h->vms[i].uuid));
		json_object_object_add(v, "name",
				       json_object_new_string(h->vms[i].name));
		json_object_object_add(v, "image",
				       json_object_new_string(h->vms[i].image));
		json_object_object_add(
			v, "nr_vcpus",
			json_object_new_int((int)h->vms[i].nr_vcpus));
		json_object_object_add(
			v, "tsc_khz",
			json_object_new_uint64(h->vms[i].tsc_khz));
		json_object_object_add(
			v, "build_id",
			json_object_new_string(h->vms[i].build_id));
		json_object_array_add(a, v);
	}
	json_object_object_add(o, "vms", a);
	if (h->callchain)
		json_object_object_add(o, "callchain",
				       json_object_new_boolean(1));
	return o;
}

static int put_line(struct rec_writer *w, struct json_object *o)
{
	int ok = fprintf(
		w->f, "%s\n",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	json_object_put(o);
	return ok < 0 ? (errno ? -errno : -EIO) : 0;
}

int rec_open(struct rec_writer *w, const char *path, const struct rec_header *h)
{
	int fd, ret;

	memset(w, 0, sizeof(*w));
	if (snprintf(w->path, sizeof(w->path), "%s", path) >=
	    (int)sizeof(w->path))
		return -ENAMETOOLONG;
	snprintf(w->tmp, sizeof(w->tmp), "%s.tmp", path);
	fd = ops_file_create_new(w->tmp);
	if (fd < 0)
		return fd;
	w->f = fdopen(fd, "w");
	if (!w->f) {
		ret = -errno;
		close(fd);
		unlink(w->tmp);
		return ret;
	}
	w->period = h->period;
	ret       = put_line(w, header_json(h));
	if (ret)
		rec_abort(w);
	return ret;
}

int rec_sample(struct rec_writer *w, const struct rec_sample *s)
{
	unsigned int i;
	int n;

	/* Hand-formatted: this is the hot path of a long record. */
	n = fprintf(w->f,
		    "{\"vm\":%u,\"cpu\":%u,\"ip\":%llu,\"set\":%u,\"t\":%llu,"
		    "\"pmd\":[",
		    s->vm, s->cpu, (unsigned long long)s->ip, s->set,
		    (unsigned long long)s->tstamp);
	for (i = 0; n >= 0 && i < s->nr_vals && i < REC_VALS_MAX; i++)
		n = fprintf(w->f, "%s%llu", i ? "," : "",
			    (unsigned long long)s->vals[i]);
	if (n >= 0 && s->nr_chain)
		n = fputs("],\"chain\":[", w->f);
	for (i = 0; n >= 0 && i < s->nr_chain && i < REC_CHAIN_MAX; i++)
		n = fprintf(w->f, "%s%llu", i ? "," : "",
			    (unsigned long long)s->chain[i]);
	if (n >= 0)
		n = fputc(']', w->f);
	if (n >= 0 && s->missed)
		n = fprintf(w->f, ",\"m\":%llu", (unsigned long long)s->missed);
	if (n >= 0 && s->period && s->period != w->period)
		n = fprintf(w->f, ",\"p\":%llu", (unsigned long long)s->period);
	if (n >= 0 && (s->pid > 0 || s->tid > 0))
		n = fprintf(w->f, ",\"pid\":%d,\"tid\":%d", (int)s->pid,
			    (int)s->tid);
	if (n >= 0)
		n = fputs("}\n", w->f);
	if (n < 0)
		return errno ? -errno : -EIO;
	w->samples++;
	return 0;
}

int rec_note(struct rec_writer *w, unsigned int vm, const char *msg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "note", json_object_new_string("vm_gone"));
	json_object_object_add(o, "vm", json_object_new_int((int)vm));
	json_object_object_add(o, "msg", json_object_new_string(msg));
	return put_line(w, o);
}

int rec_task_note(struct rec_writer *w, const struct rec_task *t)
{
	const char *kind = vmm_ctl_task_op_name(t->op);
	struct json_object *o;

	if (!kind)
		return -EINVAL;
	o = json_object_new_object();
	json_object_object_add(o, "note", json_object_new_string(kind));
	json_object_object_add(o, "vm", json_object_new_int((int)t->vm));
	json_object_object_add(o, "pid", json_object_new_int(t->pid));
	if (t->op == PVPMU_TASK_COMM) {
		json_object_object_add(o, "tid", json_object_new_int(t->tid));
		json_object_object_add(o, "exec",
				       json_object_new_boolean(t->exec));
		json_object_object_add(o, "comm",
				       json_object_new_string(t->comm));
	} else if (t->op == PVPMU_TASK_MMAP) {
		json_object_object_add(o, "start",
				       json_object_new_uint64(t->start));
		json_object_object_add(o, "len",
				       json_object_new_uint64(t->len));
		json_object_object_add(o, "pgoff",
				       json_object_new_uint64(t->pgoff));
		json_object_object_add(o, "path",
				       json_object_new_string(t->path));
	}
	return put_line(w, o);
}

int rec_snap_note(struct rec_writer *w, unsigned int vm, uint64_t pauses,
		  uint64_t pause_ns)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "note", json_object_new_string("snapshot"));
	json_object_object_add(o, "vm", json_object_new_int((int)vm));
	json_object_object_add(o, "pauses", json_object_new_uint64(pauses));
	json_object_object_add(o, "pause_ns", json_object_new_uint64(pause_ns));
	return put_line(w, o);
}

/*
 * Order matters: end line, flush, fsync, close, and only then rename, so
 * that FILE never names a file without its end line, even after a crash.
 */
int rec_finish(struct rec_writer *w, uint64_t lost, uint64_t duration_ns,
	       const char *reason)
{
	struct json_object *o = json_object_new_object(), *e;
	int ret;

	e = json_object_new_object();
	json_object_object_add(e, "samples",
			       json_object_new_uint64(w->samples));
	json_object_object_add(e, "lost", json_object_new_uint64(lost));
	json_object_object_add(e, "duration_ns",
			       json_object_new_uint64(duration_ns));
	json_object_object_add(e, "reason", json_object_new_string(reason));
	if (w->throttled || w->missed) {
		json_object_object_add(e, "throttled",
				       json_object_new_uint64(w->throttled));
		json_object_object_add(e, "missed",
				       json_object_new_uint64(w->missed));
	}
	if (w->tasks_refused || w->tasks_dropped) {
		json_object_object_add(
			e, "tasks_refused",
			json_object_new_uint64(w->tasks_refused));
		json_object_object_add(
			e, "tasks_dropped",
			json_object_new_uint64(w->tasks_dropped));
	}
	json_object_object_add(o, "end", e);
	ret = put_line(w, o);
	if (!ret && (fflush(w->f) || fsync(fileno(w->f))))
		ret = -errno;
	if (fclose(w->f) && !ret)
		ret = -errno;
	w->f = NULL;
	if (!ret && rename(w->tmp, w->path) < 0)
		ret = -errno;
	if (ret)
		unlink(w->tmp);
	return ret;
}

void rec_abort(struct rec_writer *w)
{
	if (w->f)
		fclose(w->f);
	w->f = NULL;
	unlink(w->tmp);
}

/* ---- Reading ----------------------------------------------------------- */

struct reader {
	const char *path;
	unsigned long line;
	uint64_t lost, throttled, missed;
	uint64_t tasks_refused, tasks_dropped;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int
reader_fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, r->errlen, "%s:%lu: ", r->path, r->line);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool get(struct json_object *o, const char *k, json_type t,
		struct json_object **v)
{
	return json_object_object_get_ex(o, k, v) && json_object_is_type(*v, t);
}

static int str_field(struct json_object *o, const char *k, char *buf,
		     size_t len)
{
	struct json_object *v;

	if (!get(o, k, json_type_string, &v) ||
	    (size_t)json_object_get_string_len(v) >= len)
		return -EINVAL;
	snprintf(buf, len, "%s", json_object_get_string(v));
	return 0;
}

static int parse_vms(struct json_object *a, struct rec_header *h)
{
	struct json_object *o, *v;
	size_t i, n = json_object_array_length(a);

	if (n == 0 || n > 4096)
		return -EINVAL;
	h->vms = calloc(n, sizeof(*h->vms));
	if (!h->vms)
		return -ENOMEM;
	h->nr_vms = (unsigned int)n;
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(a, i);
		if (!json_object_is_type(o, json_type_object) ||
		    str_field(o, "uuid", h->vms[i].uuid,
			      sizeof(h->vms[i].uuid)) ||
		    str_field(o, "name", h->vms[i].name,
			      sizeof(h->vms[i].name)) ||
		    str_field(o, "image", h->vms[i].image,
			      sizeof(h->vms[i].image)) ||
		    !get(o, "nr_vcpus", json_type_int, &v))
			return -EINVAL;
		h->vms[i].nr_vcpus = (unsigned int)json_object_get_int(v);
		if (get(o, "tsc_khz", json_type_int, &v))
			h->vms[i].tsc_khz = json_object_get_uint64(v);
		if (json_object_object_get_ex(o, "build_id", &v) &&
		    str_field(o, "build_id", h->vms[i].build_id,
			      sizeof(h->vms[i].build_id)))
			return -EINVAL;
	}
	return 0;
}

static int parse_header(struct reader *r, struct json_object *o,
			struct rec_header *h)
{
	struct json_object *v, *a;
	size_t i, n;

	if (!get(o, "vpmu_record", json_type_int, &v))
		return reader_fail(r, "not a vpmu record file (no header)");
	if (json_object_get_int(v) != REC_VERSION)
		return reader_fail(
			r, "record format version %d not supported (want %d)",
			json_object_get_int(v), REC_VERSION);
	if (str_field(o, "event", h->event, sizeof(h->event)) ||
	    !get(o, "code", json_type_int, &v))
		return reader_fail(r, "header: bad event");
	h->code = (uint16_t)json_object_get_int(v);
	if (get(o, "period", json_type_int, &v))
		h->period = json_object_get_uint64(v);
	if (get(o, "freq", json_type_int, &v))
		h->freq = json_object_get_uint64(v);
	if (get(o, "created", json_type_int, &v))
		h->created = json_object_get_int64(v);
	if (!get(o, "events", json_type_array, &a) ||
	    (n = json_object_array_length(a)) > REC_EVENTS_MAX)
		return reader_fail(r, "header: bad events");
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(a, i);
		if (!json_object_is_type(v, json_type_string))
			return reader_fail(r, "header: bad events");
		snprintf(h->events[i], sizeof(h->events[i]), "%s",
			 json_object_get_string(v));
	}
	h->nr_events = (unsigned int)n;
	if (!get(o, "vms", json_type_array, &a) || parse_vms(a, h))
		return reader_fail(r, "header: bad vms");
	if (get(o, "callchain", json_type_boolean, &v))
		h->callchain = json_object_get_boolean(v);
	return 0;
}

static int parse_sample(struct reader *r, struct json_object *o,
			const struct rec_header *h, struct rec_sample *s)
{
	struct json_object *v[5], *a;
	static const char *const keys[] = {"vm", "cpu", "ip", "set", "t"};
	size_t i, n;

	for (i = 0; i < 5; i++) {
		if (!get(o, keys[i], json_type_int, &v[i]))
			return reader_fail(r, "sample: missing or bad '%s'",
					   keys[i]);
	}
	memset(s, 0, sizeof(*s));
	s->vm     = (unsigned int)json_object_get_int(v[0]);
	s->cpu    = (unsigned int)json_object_get_int(v[1]);
	s->ip     = json_object_get_uint64(v[2]);
	s->set    = (unsigned int)json_object_get_int(v[3]);
	s->tstamp = json_object_get_uint64(v[4]);
	if (json_object_get_int(v[0]) < 0 || s->vm >= h->nr_vms ||
	    json_object_get_int(v[1]) < 0 || s->cpu >= h->vms[s->vm].nr_vcpus)
		return reader_fail(r, "sample: vm or cpu out of range");
	if (!get(o, "pmd", json_type_array, &a) ||
	    (n = json_object_array_length(a)) > REC_VALS_MAX)
		return reader_fail(r, "sample: bad 'pmd'");
	for (i = 0; i < n; i++)
		s->vals[i] =
			json_object_get_uint64(json_object_array_get_idx(a, i));
	s->nr_vals = (unsigned int)n;
	/* Optional weight of the sample. */
	a = NULL;
	if (json_object_object_get_ex(o, "m", &a) &&
	    !json_object_is_type(a, json_type_int))
		return reader_fail(r, "sample: bad 'm'");
	if (a && json_object_is_type(a, json_type_int))
		s->missed = json_object_get_uint64(a);
	a = NULL;
	if (json_object_object_get_ex(o, "p", &a) &&
	    !json_object_is_type(a, json_type_int))
		return reader_fail(r, "sample: bad 'p'");
	if (a && json_object_is_type(a, json_type_int))
		s->period = json_object_get_uint64(a);
	if (get(o, "pid", json_type_int, &a))
		s->pid = json_object_get_int(a);
	if (get(o, "tid", json_type_int, &a))
		s->tid = json_object_get_int(a);
	if (!json_object_object_get_ex(o, "chain", &a))
		return 0;
	if (!json_object_is_type(a, json_type_array) ||
	    (n = json_object_array_length(a)) > REC_CHAIN_MAX)
		return reader_fail(r, "sample: bad 'chain'");
	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(a, i);

		if (!json_object_is_type(c, json_type_int))
			return reader_fail(r, "sample: bad 'chain'");
		s->chain[i] = json_object_get_uint64(c);
	}
	s->nr_chain = (unsigned int)n;
	return 0;
}

static const char *opt_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return get(o, k, json_type_string, &v) ? json_object_get_string(v)
					       : NULL;
}

static uint64_t opt_u64(struct json_object *o, const char *k)
{
	struct json_object *v;

	return get(o, k, json_type_int, &v) ? json_object_get_uint64(v) : 0;
}

int rec_task_fields(struct json_object *o, uint32_t op, struct rec_task *t)
{
	struct json_object *v;

	t->op   = op;
	t->pid  = get(o, "pid", json_type_int, &v) ? json_object_get_int(v) : 0;
	t->tid  = (int32_t)opt_u64(o, "tid");
	t->exec = get(o, "exec", json_type_boolean, &v) &&
		  json_object_get_boolean(v);
	t->start = opt_u64(o, "start");
	t->len   = opt_u64(o, "len");
	t->pgoff = opt_u64(o, "pgoff");
	t->comm  = opt_str(o, "comm");
	t->path  = opt_str(o, "path");
	if (t->pid <= 0 || !vmm_ctl_task_op_name(op) ||
	    (op == PVPMU_TASK_COMM && !t->comm) ||
	    (op == PVPMU_TASK_MMAP && (!t->path || !t->len)))
		return -EINVAL;
	return 0;
}

/* A comm, mmap or exit note, checked, to (a->task_fn). */
static int parse_task(struct reader *r, struct json_object *o,
		      const struct rec_header *h, uint32_t op,
		      const struct rec_read_args *a)
{
	struct rec_task t;
	struct json_object *v;

	if (!get(o, "vm", json_type_int, &v) ||
	    json_object_get_uint64(v) >= h->nr_vms)
		return reader_fail(r, "process note: bad 'vm'");
	if (rec_task_fields(o, op, &t))
		return reader_fail(r, "process note: bad 'pid', or missing "
				      "'comm' or 'path'");
	t.vm = (unsigned int)json_object_get_uint64(v);
	return a->task_fn && a->task_fn(a->opaque, &t) ? -ECANCELED : 0;
}

/*
 * A note: "snapshot" adds to its VM's pause counts; process notes go to
 * (a->task_fn); other notes are skipped. 0 or -EINVAL.
 */
static int parse_note(struct reader *r, struct json_object *o,
		      const struct rec_header *h, const char *kind,
		      const struct rec_read_args *a)
{
	struct json_object *v;
	uint64_t vm;

	if (vmm_ctl_task_op(kind))
		return parse_task(r, o, h, vmm_ctl_task_op(kind), a);
	if (strcmp(kind, "snapshot"))
		return 0;
	if (!get(o, "vm", json_type_int, &v) ||
	    (vm = json_object_get_uint64(v)) >= h->nr_vms)
		return reader_fail(r, "snapshot note: bad 'vm'");
	if (get(o, "pauses", json_type_int, &v))
		h->vms[vm].snap_pauses += json_object_get_uint64(v);
	if (get(o, "pause_ns", json_type_int, &v))
		h->vms[vm].snap_pause_ns += json_object_get_uint64(v);
	return 0;
}

/* One line after the header. 1 at the end line, 0 to go on, -EINVAL. */
static int parse_line(struct reader *r, struct json_object *o,
		      const struct rec_header *h, uint64_t *count,
		      const struct rec_read_args *a)
{
	struct json_object *e, *v;
	struct rec_sample s;
	int ret;

	if (get(o, "end", json_type_object, &e)) {
		if (!get(e, "samples", json_type_int, &v) ||
		    json_object_get_uint64(v) != *count)
			return reader_fail(
				r,
				"end: sample count does not match the "
				"file (%llu samples read)",
				(unsigned long long)*count);
		if (get(e, "lost", json_type_int, &v))
			r->lost = json_object_get_uint64(v);
		if (get(e, "throttled", json_type_int, &v))
			r->throttled = json_object_get_uint64(v);
		if (get(e, "missed", json_type_int, &v))
			r->missed = json_object_get_uint64(v);
		r->tasks_refused = opt_u64(e, "tasks_refused");
		r->tasks_dropped = opt_u64(e, "tasks_dropped");
		return 1;
	}
	if (get(o, "note", json_type_string, &v))
		return parse_note(r, o, h, json_object_get_string(v), a);
	ret = parse_sample(r, o, h, &s);
	if (ret)
		return ret;
	(*count)++;
	return a->fn && a->fn(a->opaque, &s) ? -ECANCELED : 0;
}

/* stdin for "-" (not closed by us), else the named file. */
static FILE *open_input(const char *path)
{
	int fd;

	if (strcmp(path, "-"))
		return fopen(path, "re");
	fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? NULL : fdopen(fd, "r");
}

/* One line: 1 at the end line, 0 to go on, -EINVAL/-ECANCELED. */
static int one_line(struct reader *r, const struct rec_read_args *a,
		    const char *line, struct rec_header *h, uint64_t *count)
{
	struct json_object *o = json_tokener_parse(line);
	int ret;

	if (!o || !json_object_is_type(o, json_type_object))
		ret = reader_fail(r, "not a JSON object");
	else if (r->line == 1)
		ret = parse_header(r, o, h);
	else
		ret = parse_line(r, o, h, count, a);
	json_object_put(o);
	if (!ret && r->line == 1 && a->hdr_fn && a->hdr_fn(a->opaque, h))
		ret = -ECANCELED;
	return ret;
}

int rec_read_ex(const struct rec_read_args *a, struct rec_header *h)
{
	struct reader r = {.path = a->path, .err = a->err, .errlen = a->errlen};
	bool partial    = a->flags & REC_READ_PARTIAL;
	uint64_t count  = 0;
	size_t cap      = 0;
	char *line      = NULL;
	ssize_t n;
	int ret = 0, done = 0;
	FILE *f;

	memset(h, 0, sizeof(*h));
	f = open_input(a->path);
	if (!f) {
		ret = -errno;
		snprintf(a->err, a->errlen, "%s: %s", a->path, strerror(errno));
		return ret;
	}
	while (!ret && !done && (n = getline(&line, &cap, f)) > 0) {
		r.line++;
		ret = one_line(&r, a, line, h, &count);
		/* A killed writer cuts its last line anywhere: drop it. */
		if (ret == -EINVAL && line[n - 1] != '\n') {
			if (partial && r.line > 1) {
				h->torn_line = true;
				ret          = 0;
				break;
			}
			ret = reader_fail(
				&r, "line cut short: the file is "
				    "incomplete (was its writer killed?)");
		}
		if (ret == 1) {
			done = 1;
			ret  = 0;
		}
	}
	if (!ret && !done) {
		r.line++;
		if (r.line == 1)
			ret = reader_fail(&r, "empty file");
		else if (partial)
			h->truncated = true;
		else
			ret = reader_fail(&r,
					  "no end line: the file is truncated");
	}
	if (!ret && done && getline(&line, &cap, f) > 0) {
		r.line++;
		ret = reader_fail(&r, "data after the end line");
	}
	h->lost          = r.lost;
	h->throttled     = r.throttled;
	h->missed        = r.missed;
	h->tasks_refused = r.tasks_refused;
	h->tasks_dropped = r.tasks_dropped;
	h->lines         = r.line;
	free(line);
	fclose(f);
	if (ret)
		rec_header_free(h);
	return ret;
}

int rec_read(const char *path, struct rec_header *h, rec_sample_fn_t fn,
	     void *opaque, char *err, size_t errlen)
{
	const struct rec_read_args a = {.path   = path,
					.fn     = fn,
					.opaque = opaque,
					.err    = err,
					.errlen = errlen};

	return rec_read_ex(&a, h);
}

void rec_header_free(struct rec_header *h)
{
	free(h->vms);
	h->vms    = NULL;
	h->nr_vms = 0;
}
