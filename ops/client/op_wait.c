// SPDX-License-Identifier: MIT
/*
 * op_wait.c: how `vpmu stat`, `record` and `top` sleep between
 * the things they were asked to do. One ppoll over the command's own file
 * descriptors and every live VM's socket, with a deadline; the command's
 * signals are blocked except inside that ppoll, so one arriving between the
 * command's checks and its sleep ends the sleep instead of being lost. No
 * other wake-up: no polling interval.
 */
#include "ctl_client.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int ops_wait_begin(struct ops_wait *w, const struct ops_session *s,
		   unsigned int nr_fds, const int *sigs)
{
	sigset_t block;
	unsigned int i;

	w->nr_fds = nr_fds;
	w->p      = calloc(nr_fds + s->nr_vms + 1, sizeof(*w->p));
	if (!w->p)
		return -ENOMEM;
	for (i = 0; i < nr_fds; i++)
		w->p[i].fd = -1;
	sigemptyset(&block);
	for (i = 0; sigs && sigs[i]; i++)
		sigaddset(&block, sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &w->sleep_mask);
	return 0;
}

int ops_wait(struct ops_wait *w, struct ops_session *s, uint64_t until)
{
	uint64_t now = vpmu_monotonic_ns(), d;
	unsigned int vm, n = w->nr_fds, i;
	struct timespec ts;
	int ready = 0, ret;

	for (i = 0; i < w->nr_fds; i++)
		w->p[i].revents = 0;
	if (until <= now)
		return 0;
	d  = until - now;
	ts = (struct timespec){(time_t)(d / 1000000000ULL),
			       (long)(d % 1000000000ULL)};
	for (vm = 0; vm < s->nr_vms; vm++)
		w->p[n++] = (struct pollfd){
			.fd     = s->vms[vm].gone ? -1 : s->vms[vm].cl.fd,
			.events = POLLIN};
	ret = ppoll(w->p, n, until == UINT64_MAX ? NULL : &ts, &w->sleep_mask);
	if (ret <= 0)
		return 0; /* the deadline, or a signal (EINTR) */
	for (i = 0; i < w->nr_fds; i++)
		ready += w->p[i].revents != 0;
	/* The VMM never writes between requests: readable is its end. */
	if (ret > ready)
		ops_check_alive(s);
	return ready;
}

void ops_wait_end(struct ops_wait *w)
{
	sigprocmask(SIG_SETMASK, &w->sleep_mask, NULL);
	free(w->p);
	w->p = NULL;
}
