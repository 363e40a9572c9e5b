// SPDX-License-Identifier: MIT
/*
 * replay.c: the replay backend: scripted, deterministic event streams
 * (rates per unit of run time, or explicit deltas per read) behind the
 * backend ops table. See replay.h.
 */
#include "replay.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_SEC 1000000000ULL

struct stream {
	uint32_t cpu;
	uint16_t code;
	bool is_rate;
	uint64_t rate;    /* events per second */
	uint64_t *deltas; /* steps */
	size_t nr_deltas;
	size_t pos;
};

struct vpmu_replay {
	struct vpmu_event_info *events;
	unsigned int nr_events;
	struct stream *streams;
	unsigned int nr_streams;
};

int vpmu_replay_create(struct vpmu_replay **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void vpmu_replay_destroy(struct vpmu_replay *r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->nr_streams; i++)
		free(r->streams[i].deltas);
	free(r->streams);
	free(r->events);
	free(r);
}

static const struct vpmu_event_info *find_event(const struct vpmu_replay *r,
						uint16_t code)
{
	unsigned int i;

	for (i = 0; i < r->nr_events; i++) {
		if (r->events[i].code == code)
			return &r->events[i];
	}
	return NULL;
}

int vpmu_replay_add_event(struct vpmu_replay *r, uint16_t code,
			  const char *name)
{
	struct vpmu_event_info *ev;

	if (find_event(r, code))
		return -EEXIST;
	ev = realloc(r->events, (r->nr_events + 1) * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	r->events = ev;
	r->events[r->nr_events++] =
		(struct vpmu_event_info){.code = code, .name = name};
	return 0;
}

/* The stream of (cpu, code), created empty if needed; NULL on ENOMEM. */
static struct stream *get_stream(struct vpmu_replay *r, uint32_t cpu,
				 uint16_t code)
{
	struct stream *st;
	unsigned int i;

	for (i = 0; i < r->nr_streams; i++) {
		st = &r->streams[i];
		if (st->cpu == cpu && st->code == code) {
			free(st->deltas);
			*st = (struct stream){.cpu = cpu, .code = code};
			return st;
		}
	}
	st = realloc(r->streams, (r->nr_streams + 1) * sizeof(*st));
	if (!st)
		return NULL;
	r->streams = st;
	st         = &r->streams[r->nr_streams++];
	*st        = (struct stream){.cpu = cpu, .code = code};
	return st;
}

int vpmu_replay_set_rate(struct vpmu_replay *r, uint32_t cpu, uint16_t code,
			 uint64_t per_sec)
{
	struct stream *st;

	if (!find_event(r, code))
		return -ENOENT;
	if (per_sec > VPMU_REPLAY_MAX_RATE)
		return -EINVAL;
	st = get_stream(r, cpu, code);
	if (!st)
		return -ENOMEM;
	st->is_rate = true;
	st->rate    = per_sec;
	return 0;
}

int vpmu_replay_set_steps(struct vpmu_replay *r, uint32_t cpu, uint16_t code,
			  const uint64_t *deltas, size_t n)
{
	struct stream *st;
	uint64_t *copy;

	if (!find_event(r, code))
		return -ENOENT;
	if (n == 0 || !deltas)
		return -EINVAL;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, deltas, n * sizeof(*copy));
	st = get_stream(r, cpu, code);
	if (!st) {
		free(copy);
		return -ENOMEM;
	}
	st->deltas    = copy;
	st->nr_deltas = n;
	return 0;
}

static struct vpmu_replay *replay_of(const struct vpmu_backend *b)
{
	return b->priv;
}

static int replay_describe(const struct vpmu_backend *b, uint16_t code,
			   struct vpmu_event_info *info)
{
	const struct vpmu_event_info *ev = find_event(replay_of(b), code);

	if (!ev)
		return -ENOENT;
	if (info)
		*info = *ev;
	return 0;
}

static int replay_enumerate(const struct vpmu_backend *b, unsigned int idx,
			    struct vpmu_event_info *info)
{
	struct vpmu_replay *r = replay_of(b);

	if (idx >= r->nr_events)
		return -ENOENT;
	*info = r->events[idx];
	return 0;
}

/*
 * An open event: scratch[0] = run ns of the last read, scratch[1] = carried
 * remainder (events * 1e9). Its stream is looked up by (cpu, code) on each
 * read, so scripts may change while it is open and a step cursor survives
 * reopening.
 */
static struct stream *stream_of(struct vpmu_bevent *e)
{
	struct vpmu_replay *r = replay_of(e->be);
	uintptr_t hint        = (uintptr_t)e->priv;
	unsigned int i;

	/* e->priv caches the stream's index + 1 (the array may move). */
	if (hint && hint <= r->nr_streams) {
		struct stream *st = &r->streams[hint - 1];

		if (st->cpu == e->ev.cpu_index && st->code == e->ev.code)
			return st;
	}
	for (i = 0; i < r->nr_streams; i++) {
		if (r->streams[i].cpu == e->ev.cpu_index &&
		    r->streams[i].code == e->ev.code) {
			e->priv = (void *)(uintptr_t)(i + 1);
			return &r->streams[i];
		}
	}
	return NULL;
}

static int replay_open(struct vpmu_bevent *e, uint64_t now_ns)
{
	if (!find_event(replay_of(e->be), e->ev.code))
		return -ENOENT;
	e->priv       = NULL;
	e->scratch[0] = now_ns;
	e->scratch[1] = 0;
	return 0;
}

static void replay_close(struct vpmu_bevent *e)
{
	e->scratch[0] = 0;
}

static int replay_read(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta)
{
	struct stream *st = stream_of(e);
	uint64_t dns      = now_ns - e->scratch[0], frac;

	e->scratch[0] = now_ns;
	*delta        = 0;
	if (!st)
		return 0;
	if (!st->is_rate) {
		/* A step is a slice of run time: reads at one instant get 0. */
		if (dns && st->pos < st->nr_deltas)
			*delta = st->deltas[st->pos++];
		return 0;
	}
	/* rate < 1.8e10 keeps (dns % 1e9) * rate within 64 bits. */
	frac          = (dns % NS_PER_SEC) * st->rate + e->scratch[1];
	*delta        = (dns / NS_PER_SEC) * st->rate + frac / NS_PER_SEC;
	e->scratch[1] = frac % NS_PER_SEC;
	return 0;
}

/*
 * Run ns until (nevents) more events: the least t with
 * rem + t * rate >= nevents * 1e9. With nevents = q * rate + r that is
 * q * 1e9 + ceil((r * 1e9 - rem) / rate), all in 64 bits since
 * rate <= 1e10 and rem < 1e9.
 */
static int replay_arm(struct vpmu_bevent *e, uint64_t nevents, uint64_t *in_ns)
{
	struct stream *st = stream_of(e);
	uint64_t q, r, rem = e->scratch[1];

	*in_ns = VPMU_NO_DEADLINE;
	if (!st || !st->is_rate || st->rate == 0)
		return 0;
	q = nevents / st->rate;
	r = nevents % st->rate;
	if (q >= (VPMU_NO_DEADLINE - NS_PER_SEC) / NS_PER_SEC)
		return 0; /* centuries away */
	if (r * NS_PER_SEC >= rem)
		*in_ns = q * NS_PER_SEC +
			 (r * NS_PER_SEC - rem + st->rate - 1) / st->rate;
	else
		*in_ns = q * NS_PER_SEC - (rem - r * NS_PER_SEC) / st->rate;
	return 0;
}

void vpmu_replay_instance(struct vpmu_replay *r, struct vpmu_backend *out)
{
	out->ops  = &vpmu_replay_backend;
	out->priv = r;
}

const struct vpmu_backend_ops vpmu_replay_backend = {
	.name      = "replay",
	.describe  = replay_describe,
	.enumerate = replay_enumerate,
	.open      = replay_open,
	.close     = replay_close,
	.read      = replay_read,
	.arm       = replay_arm,
};
