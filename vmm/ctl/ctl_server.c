// SPDX-License-Identifier: MIT
/*
 * ctl_server.c: the control thread of a VM (see ctl_server.h): the listening
 * socket, peer credential checks, one poll loop over the clients and the
 * wake eventfd, and the registry entry's life. The thread never blocks on
 * one client: replies are queued and sent when the socket has
 * room (ctl_conn.c), and connection limits close what would hold a slot.
 */
#include "ctl_priv.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm_pv.h"
#include "vmm_sandbox.h"
#include "vpmu_limits.h"
#include "vpmu_common.h"

#define CTL_BACKLOG 16

int vmm_control_init(struct vmm_vm *vm, const struct vmm_config *cfg)
{
	struct vmm_control *ctl = calloc(1, sizeof(*ctl));
	unsigned int i, j;
	int ret;

	if (!ctl)
		return -ENOMEM;
	ret = vmm_ctl_sync_init(ctl, vm->nr_vcpus);
	if (ret) {
		free(ctl);
		return ret;
	}
	ctl->vm        = vm;
	ctl->listen_fd = ctl->wake_fd = -1;
	ctl->frame_timeout_ns         = VMM_CTL_FRAME_TIMEOUT_NS;
	ctl->stall_timeout_ns         = VMM_CTL_STALL_TIMEOUT_NS;
	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		ctl->clients[i].fd = -1;
		for (j = 0; j < VMM_CTL_CTX_MAX; j++)
			ctl->clients[i].ctx[j].handle = -1;
	}
	snprintf(ctl->entry.pmu, sizeof(ctl->entry.pmu), "%s",
		 cfg->pmu_model[0] ? cfg->pmu_model : "auto");
	/* A VM built by hand (tests) has not registered the module yet. */
	ret = vmm_vm_add_module(vm, &vmm_ctl_module);
	if (ret && ret != -EEXIST) {
		vmm_ctl_sync_free(ctl);
		free(ctl);
		return ret;
	}
	vmm_vm_set_module_priv(vm, &vmm_ctl_module, ctl);
	vmm_pv_set_host_notify(vm, vmm_control_notify);
	return 0;
}

void vmm_control_set_image(struct vmm_vm *vm, const char *path)
{
	char *abs;

	if (!vmm_ctl(vm))
		return;
	/* Operators read the image later, maybe from another directory. */
	abs = realpath(path, NULL);
	snprintf(vmm_ctl(vm)->entry.image, sizeof(vmm_ctl(vm)->entry.image),
		 "%s", abs ? abs : path);
	free(abs);
}

void vmm_control_notify(struct vmm_vm *vm, const struct vpmu_notify *n)
{
	uint64_t one = 1;

	(void)n;
	if (vmm_ctl(vm) && vmm_ctl(vm)->wake_fd >= 0 &&
	    write(vmm_ctl(vm)->wake_fd, &one, sizeof(one)) < 0)
		return; /* counter saturated: a wake is pending anyway */
}

/* A client leaves: its host contexts go with it. */
static void close_client(struct vmm_control *ctl, struct vmm_ctl_client *c)
{
	vmm_ctl_client_release(ctl, c);
	vmm_ctl_rx_free(&c->rx);
	vmm_ctl_tx_free(c);
	close(c->fd);
	c->fd = -1;
}

/* A limit closes (c): say why on stderr. */
static void drop_client(struct vmm_control *ctl, struct vmm_ctl_client *c,
			const char *why)
{
	vmm_log(ctl->vm, VMM_LOG_WARN,
		"control socket: closing operator connection %u: %s",
		(unsigned int)(c - ctl->clients), why);
	atomic_fetch_add(&ctl->nr_dropped, 1);
	close_client(ctl, c);
}

/* Same uid as the VMM, or root (SO_PEERCRED). */
static int check_peer(const struct vmm_control *ctl, int fd, char *err,
		      size_t errlen)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		snprintf(err, errlen, "permission denied: no peer credentials");
		return -EACCES;
	}
	if (cr.uid == 0 || cr.uid == ctl->euid)
		return 0;
	snprintf(err, errlen,
		 "permission denied: peer uid %u is neither the VM's uid %u "
		 "nor root",
		 (unsigned int)cr.uid, (unsigned int)ctl->euid);
	return -EACCES;
}

/*
 * One error reply, then close: the refused client learns why instead of
 * seeing a bare EOF. Never waits: a fresh socket has room for it, and a
 * peer that filled it loses the reply.
 */
static void refuse(int fd, int ret, const char *why)
{
	struct json_object *r = vmm_ctl_reply_err(-1, -ret, why);

	vmm_ctl_send(fd, r, 0);
	json_object_put(r);
	close(fd);
}

/* Accept one connection: peer check first, then a free client slot. */
static void accept_client(struct vmm_control *ctl, uint64_t now)
{
	struct vmm_ctl_client *c;
	char err[160];
	unsigned int i;
	int fd, ret;

	fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	ret = check_peer(ctl, fd, err, sizeof(err));
	if (ret) {
		refuse(fd, ret, err);
		return;
	}
	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		c = &ctl->clients[i];
		if (c->fd < 0) {
			c->fd     = fd;
			c->served = false;
			/* Its first request must come in time. */
			c->frame_start_ns = now;
			c->tx_moved_ns    = now;
			return;
		}
	}
	refuse(fd, -EBUSY, "too many operator connections to this VM");
}

/*
 * Serve the complete frames of (c) while its output queue is below the
 * mark; the rest wait in (c->rx) for it to read its replies. Requests are
 * answered in order, one reply each, so a client may pipeline them. A
 * parse or validation error is answered like any other error; only a
 * broken frame length ends the connection (its reply is tried first).
 * Returns NULL, or why to close (c).
 */
static const char *serve_frames(struct vmm_control *ctl,
				struct vmm_ctl_client *c, uint64_t now)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req, *rep;
	const char *body;
	char err[256];
	int64_t id;
	size_t len;
	int ret = 0;

	while (vmm_ctl_conn_readable(c) &&
	       (ret = vmm_ctl_rx_next(&c->rx, &body, &len)) == 1) {
		ret = vmm_ctl_parse_request(body, len, &req, &cmd, &id, err,
					    sizeof(err));
		vmm_ctl_rx_drop(&c->rx, len);
		ctl->nr_frames++;
		c->served         = true;
		c->frame_start_ns = 0;
		if (ret) {
			rep = vmm_ctl_reply_err(id, -ret, err);
		} else {
			rep = vmm_ctl_handle(ctl, c, cmd, req, id);
			json_object_put(req);
		}
		ret = vmm_ctl_queue(c, rep, now);
		json_object_put(rep);
		/* A packed drain's samples follow its reply. */
		if (!ret)
			ret = vmm_ctl_queue_packed(c, now);
		c->pk.len = 0;
		if (ret)
			return "no memory for its reply";
	}
	if (ret == -EMSGSIZE) {
		snprintf(err, sizeof(err),
			 "bad frame length (must be 1..%u bytes): closing",
			 VMM_CTL_MSG_MAX);
		rep = vmm_ctl_reply_err(-1, EMSGSIZE, err);
		if (!vmm_ctl_queue(c, rep, now))
			vmm_ctl_flush(c, now);
		json_object_put(rep);
		return "bad frame length";
	}
	vmm_ctl_frame_clock(c, now);
	return NULL;
}

/*
 * (c) is ready: send queued replies, serve frames held back until now,
 * read if the queue allows, serve, and send what that answered. Returns
 * NULL, or why (c) is closed: "" for the peer's own end (hang-up, reset),
 * which is not logged.
 */
static const char *serve_client(struct vmm_control *ctl,
				struct vmm_ctl_client *c, short revents,
				uint64_t now)
{
	const char *why;
	int ret;

	if (vmm_ctl_flush(c, now))
		return "";
	why = serve_frames(ctl, c, now);
	if (why)
		return why;
	if ((revents & POLLIN) && vmm_ctl_conn_readable(c)) {
		ret = vmm_ctl_rx_fill(&c->rx, c->fd);
		if (ret == -EMSGSIZE)
			return "bad frame length";
		if (ret && ret != -EAGAIN)
			return "";
		why = serve_frames(ctl, c, now);
		if (why)
			return why;
	} else if (!(revents & POLLIN) &&
		   (revents & (POLLHUP | POLLERR | POLLNVAL))) {
		return "";
	}
	return vmm_ctl_flush(c, now) ? "" : NULL;
}

/* Poll timeout (ms) until the first connection deadline, -1 if none. */
static int next_timeout(struct vmm_control *ctl, uint64_t now)
{
	uint64_t d = UINT64_MAX, t;
	unsigned int i;

	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		if (ctl->clients[i].fd < 0)
			continue;
		t = vmm_ctl_conn_deadline(ctl, &ctl->clients[i]);
		if (t < d)
			d = t;
	}
	if (d == UINT64_MAX)
		return -1;
	if (d <= now)
		return 0;
	/* Round up: waking a little late is fine, early is a wasted loop. */
	return (d - now + 999999) / 1000000 > 60000
		       ? 60000
		       : (int)((d - now + 999999) / 1000000);
}

/* Close every connection a limit has expired. */
static void expire_clients(struct vmm_control *ctl, uint64_t now)
{
	const char *why;
	unsigned int i;

	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		if (ctl->clients[i].fd < 0)
			continue;
		why = vmm_ctl_conn_expired(ctl, &ctl->clients[i], now);
		if (why)
			drop_client(ctl, &ctl->clients[i], why);
	}
}

/*
 * The loop: poll the listening socket, the wake eventfd (notifications,
 * stop) and every client (POLLIN while its queue is below the mark,
 * POLLOUT while it has replies queued); after any wake-up copy the samples
 * of every host context first, so a full buffer is restarted before
 * requests are served. The timeout is the first connection deadline: an
 * idle VM's control thread sleeps until a client writes, a notification
 * arrives or the VM stops (both write the eventfd, whose counter keeps a
 * wake-up until it is read, so none is lost).
 */
static void *control_thread(void *arg)
{
	struct vmm_control *ctl = arg;
	struct pollfd pfd[2 + VMM_CTL_CLIENTS_MAX];
	int who[2 + VMM_CTL_CLIENTS_MAX];
	struct vmm_ctl_client *c;
	pid_t tids[VMM_VCPUS_MAX];
	const char *why;
	unsigned int i, n;
	uint64_t cnt, now;
	sigset_t all;

	/* Found by benchmarks and tests in /proc/PID/task. */
	atomic_store(&ctl->tid, (int)gettid());
	pthread_setname_np(pthread_self(), "vpmu-ctl");
	/* Kick signals are for vCPU threads only. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/*
	 * Set up: from here on only the loop's system calls. Operators'
	 * events count vCPU threads, whose ids vmm_vm_run() had before it
	 * started this thread.
	 */
	n = vmm_vm_vcpu_tids(ctl->vm, tids, VMM_VCPUS_MAX);
	if (ctl->vm->sandbox &&
	    vmm_sandbox_enter(VMM_SANDBOX_CONTROL, tids, n)) {
		vmm_log(ctl->vm, VMM_LOG_ERROR,
			"control thread: cannot enter the seccomp sandbox "
			"(--no-sandbox runs without it)");
		vmm_vm_stop(ctl->vm, VMM_STATUS_INTERNAL);
		return NULL;
	}
	while (!atomic_load(&ctl->stop)) {
		pfd[0] =
			(struct pollfd){.fd = ctl->listen_fd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = ctl->wake_fd, .events = POLLIN};
		for (i = 0, n = 2; i < VMM_CTL_CLIENTS_MAX; i++) {
			c = &ctl->clients[i];
			if (c->fd < 0)
				continue;
			pfd[n] = (struct pollfd){.fd = c->fd};
			if (vmm_ctl_conn_readable(c))
				pfd[n].events |= POLLIN;
			if (vmm_ctl_tx_pending(c))
				pfd[n].events |= POLLOUT;
			who[n++] = (int)i;
		}
		if (poll(pfd, n, next_timeout(ctl, vpmu_monotonic_ns())) < 0 &&
		    errno != EINTR)
			break;
		ctl->nr_wakeups++;
		now = vpmu_monotonic_ns();
		if (pfd[1].revents & POLLIN &&
		    read(ctl->wake_fd, &cnt, sizeof(cnt)) < 0)
			cnt = 0;
		/* Drain full buffers promptly, whoever woke us. */
		vmm_ctl_collect_all(ctl);
		for (i = 2; i < n; i++) {
			c = &ctl->clients[who[i]];
			if (!pfd[i].revents || c->fd < 0)
				continue;
			why = serve_client(ctl, c, pfd[i].revents, now);
			if (why && why[0])
				drop_client(ctl, c, why);
			else if (why)
				close_client(ctl, c);
		}
		expire_clients(ctl, now);
		if (pfd[0].revents & POLLIN)
			accept_client(ctl, now);
	}
	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		if (ctl->clients[i].fd >= 0)
			close_client(ctl, &ctl->clients[i]);
	}
	return NULL;
}

static int open_socket(struct vmm_control *ctl)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(ctl->entry.socket) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, ctl->entry.socket, strlen(ctl->entry.socket));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A live VM with this uuid keeps its socket; a stale one goes. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return -EEXIST;
	}
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(ctl->entry.socket);
	/* Mode 0600 from the start: no window where others could connect. */
	if (fchmod(fd, 0600) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(ctl->entry.socket, 0600) < 0 || listen(fd, CTL_BACKLOG) < 0) {
		int ret = -errno;

		close(fd);
		unlink(ctl->entry.socket);
		return ret;
	}
	ctl->listen_fd = fd;
	return 0;
}

static void fill_entry(struct vmm_control *ctl)
{
	struct vmm_reg_entry *e = &ctl->entry;
	struct vmm_vm *vm       = ctl->vm;
	struct vmm_pv *pv       = vmm_pv(vm); /* NULL: a VM without pv */

	uuid_unparse_lower(vm->uuid, e->uuid);
	snprintf(e->name, sizeof(e->name), "%s", vm->name);
	e->pid      = getpid();
	ctl->euid   = geteuid();
	e->nr_vcpus = vm->nr_vcpus;
	/* The model the guest sees ("auto" resolved), "none" without one. */
	snprintf(e->pmu, sizeof(e->pmu), "%s", vmm_pv_model_name(vm));
	e->tsc_khz = pv ? pv->tsc_khz : 0;
	e->started = (int64_t)time(NULL);
}

/*
 * Directory, socket, eventfd, then the registry entry last: an entry
 * always names a socket that exists.
 */
static int setup(struct vmm_control *ctl)
{
	mode_t old;
	int ret;

	ret = vmm_runtime_dir(ctl->dir, sizeof(ctl->dir));
	if (!ret)
		ret = vmm_runtime_dir_create(ctl->dir);
	fill_entry(ctl);
	if (!ret)
		ret = vmm_registry_path(ctl->entry.socket,
					sizeof(ctl->entry.socket), ctl->dir,
					ctl->entry.uuid, ".sock");
	if (ret)
		return ret;
	old = umask(0177);
	ret = open_socket(ctl);
	umask(old);
	if (ret)
		return ret;
	ctl->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ctl->wake_fd < 0)
		return -errno;
	ret = vmm_registry_write(ctl->dir, &ctl->entry);
	if (!ret)
		ctl->has_entry = true;
	return ret;
}

static void teardown(struct vmm_control *ctl)
{
	/* Only what is ours: never the files of a live namesake. */
	if (ctl->has_entry || ctl->listen_fd >= 0)
		vmm_registry_remove(ctl->dir, ctl->entry.uuid);
	ctl->has_entry = false;
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	if (ctl->wake_fd >= 0)
		close(ctl->wake_fd);
	ctl->listen_fd = ctl->wake_fd = -1;
}

int vmm_control_start(struct vmm_vm *vm)
{
	struct vmm_control *ctl = vmm_ctl(vm);
	int ret;

	if (!ctl)
		return -EINVAL;
	atomic_store(&ctl->stop, false);
	ret = setup(ctl);
	if (!ret)
		ret = -pthread_create(&ctl->thread, NULL, control_thread, ctl);
	if (ret) {
		teardown(ctl);
		vmm_log(vm, VMM_LOG_WARN,
			"no control socket in %s (%s): host operators cannot "
			"see this VM",
			ctl->dir[0] ? ctl->dir : "(no runtime dir)",
			ret == -EEXIST ? "another running VM has this uuid"
				       : vmm_runtime_strerror(ret));
		return ret;
	}
	ctl->has_thread = true;
	return 0;
}

void vmm_control_stop(struct vmm_vm *vm)
{
	struct vmm_control *ctl = vmm_ctl(vm);
	uint64_t one            = 1;

	if (!ctl || !ctl->has_thread)
		return;
	atomic_store(&ctl->stop, true);
	if (write(ctl->wake_fd, &one, sizeof(one)) < 0)
		one = 0; /* saturated: a wake-up is pending anyway */
	pthread_join(ctl->thread, NULL);
	ctl->has_thread = false;
	teardown(ctl);
}

void vmm_control_free(struct vmm_vm *vm)
{
	if (!vmm_ctl(vm))
		return;
	vmm_control_stop(vm);
	vmm_ctl_sync_free(vmm_ctl(vm));
	free(vmm_ctl(vm));
	vmm_vm_set_module_priv(vm, &vmm_ctl_module, NULL);
}
