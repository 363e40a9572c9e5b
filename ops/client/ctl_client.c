// SPDX-License-Identifier: MIT
/*
 * ctl_client.c: connecting to a VM's control socket, request/reply, and the
 * discovery of running VMs in the runtime directory (see ctl_client.h).
 */
#include "ctl_client.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_proto.h"

int ops_client_connect(struct ops_client *c, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int ret;

	c->fd         = -1;
	c->next_id    = 1;
	c->timeout_ms = 0;
	c->err[0]     = '\0';
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(c->err, sizeof(c->err), "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path));
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		snprintf(c->err, sizeof(c->err), "%s: %s", path,
			 strerror(-ret));
		close(c->fd);
		c->fd = -1;
		return ret;
	}
	return 0;
}

void ops_client_close(struct ops_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

struct json_object *ops_client_req(const char *cmd)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "cmd", json_object_new_string(cmd));
	return r;
}

static int reply_error(struct ops_client *c, struct json_object *r)
{
	struct json_object *v;
	int e = EPROTO;

	if (json_object_object_get_ex(r, "errno", &v) &&
	    json_object_get_int(v) > 0)
		e = json_object_get_int(v);
	snprintf(c->err, sizeof(c->err), "%s",
		 json_object_object_get_ex(r, "error", &v)
			 ? json_object_get_string(v)
			 : "error reply without a message");
	return -e;
}

int ops_client_send(struct ops_client *c, struct json_object *req,
		    int timeout_ms, int64_t *id)
{
	int ret;

	*id = c->next_id++;
	json_object_object_add(req, "v", json_object_new_int(VMM_CTL_PROTO));
	json_object_object_add(req, "id", json_object_new_int64(*id));
	ret = c->fd < 0 ? -ENOTCONN : vmm_ctl_send(c->fd, req, timeout_ms);
	json_object_put(req);
	if (ret)
		snprintf(c->err, sizeof(c->err), "%s",
			 ret == -ECONNRESET || ret == -EPIPE
				 ? "connection closed by the VMM"
				 : strerror(-ret));
	return ret;
}

int ops_client_reply(struct ops_client *c, int64_t id, int timeout_ms,
		     struct json_object **rep)
{
	struct json_object *r = NULL, *v;
	int64_t got;
	int ret;

	if (rep)
		*rep = NULL;
	for (;;) {
		ret = vmm_ctl_recv(c->fd, &r, timeout_ms);
		if (ret) {
			snprintf(c->err, sizeof(c->err), "%s",
				 ret == -ECONNRESET || ret == -EPIPE
					 ? "connection closed by the VMM"
					 : strerror(-ret));
			return ret;
		}
		/*
		 * Replies come in order. One to an earlier request is late: its
		 * caller gave up on it (a missed deadline), so it is dropped.
		 * A later id means a confused stream; a null id is a
		 * connection-level error (refused peer, bad frame).
		 */
		if (!json_object_object_get_ex(r, "id", &v) || !v)
			break;
		got = json_object_get_int64(v);
		if (got == id)
			break;
		json_object_put(r);
		if (got > id || got <= 0) {
			snprintf(c->err, sizeof(c->err),
				 "reply to request %lld carries another id",
				 (long long)id);
			return -EPROTO;
		}
	}
	if (!json_object_object_get_ex(r, "ok", &v) ||
	    !json_object_get_boolean(v)) {
		ret = reply_error(c, r);
		json_object_put(r);
		return ret;
	}
	if (rep)
		*rep = r;
	else
		json_object_put(r);
	return 0;
}

int ops_client_call(struct ops_client *c, struct json_object *req,
		    struct json_object **rep)
{
	int tmo = c->timeout_ms > 0 ? c->timeout_ms : OPS_CLIENT_TIMEOUT_MS;
	int64_t id;
	int ret;

	if (rep)
		*rep = NULL;
	ret = ops_client_send(c, req, tmo, &id);
	return ret ? ret : ops_client_reply(c, id, tmo, rep);
}

bool ops_client_match(const struct vmm_reg_entry *e, const char *sel)
{
	size_t n = strlen(sel);
	char pid[16];

	if (!strcmp(e->name, sel) || !strcmp(e->uuid, sel))
		return true;
	snprintf(pid, sizeof(pid), "%d", (int)e->pid);
	/* A number is the VMM's pid, or else a uuid prefix. */
	if (n && strspn(sel, "0123456789") == n && !strcmp(pid, sel))
		return true;
	return n >= 4 && !strncmp(e->uuid, sel, n);
}

/* A live VMM listens on the socket; a dead one's pid is gone. */
static bool is_stale(const struct vmm_reg_entry *e)
{
	struct ops_client c;
	int ret;

	if (kill(e->pid, 0) < 0 && errno == ESRCH)
		return true;
	ret = ops_client_connect(&c, e->socket);
	ops_client_close(&c);
	return ret == -ECONNREFUSED || ret == -ENOENT;
}

static int by_name(const void *a, const void *b)
{
	const struct vmm_reg_entry *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : strcmp(x->uuid, y->uuid);
}

static int add_entry(struct vmm_reg_entry **out, unsigned int *nr,
		     const struct vmm_reg_entry *e)
{
	struct vmm_reg_entry *n = realloc(*out, (*nr + 1) * sizeof(**out));

	if (!n)
		return -ENOMEM;
	n[(*nr)++] = *e;
	*out       = n;
	return 0;
}

/* Append the live entries of (dir) to (*out, *nr). */
static int discover_dir(const char *dir, struct vmm_reg_entry **out,
			unsigned int *nr, FILE *notes)
{
	char path[PATH_MAX];
	struct vmm_reg_entry e;
	struct dirent *d;
	DIR *dp;
	size_t n;
	int err, ret = 0;

	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (d = readdir(dp))) {
		n = strlen(d->d_name);
		if (n != 36 + 5 || strcmp(d->d_name + 36, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		err = vmm_registry_read(path, &e);
		if (err == -EACCES || err == -EPERM) {
			ret = err; /* not an empty list: an error */
			continue;
		}
		if (err || strncmp(e.uuid, d->d_name, 36))
			continue; /* being written, or not ours */
		if (is_stale(&e)) {
			vmm_registry_remove(dir, e.uuid);
			if (notes)
				fprintf(notes,
					"note: removed the stale entry of VM "
					"'%s' (%s): pid %d is gone\n",
					e.name, e.uuid, (int)e.pid);
			continue;
		}
		ret = add_entry(out, nr, &e);
	}
	closedir(dp);
	return ret;
}

int ops_client_discover(const char *dir, struct vmm_reg_entry **out,
			unsigned int *nr, FILE *notes)
{
	int ret;

	*out = NULL;
	*nr  = 0;
	ret  = discover_dir(dir, out, nr, notes);
	if (*nr)
		qsort(*out, *nr, sizeof(**out), by_name);
	return ret;
}

int ops_client_discover_all(char *dir, size_t len, struct vmm_reg_entry **out,
			    unsigned int *nr, FILE *notes, bool every_user)
{
	char user[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	int ret;

	*out = NULL;
	*nr  = 0;
	ret  = vmm_runtime_dir(dir, len);
	if (!ret)
		ret = discover_dir(dir, out, nr, notes);
	/*
	 * Root sees every user's VMs too ($XDG_RUNTIME_DIR/vpmu is usually
	 * /run/user/UID/vpmu), unless pointed at one directory.
	 */
	if (!ret && every_user && geteuid() == 0 && !getenv(VMM_RUNTIME_ENV) &&
	    (dp = opendir("/run/user"))) {
		while (!ret && (d = readdir(dp))) {
			if (d->d_name[0] == '.')
				continue;
			snprintf(user, sizeof(user), "/run/user/%s/vpmu",
				 d->d_name);
			ret = discover_dir(user, out, nr, notes);
			ret = ret == -EACCES ? 0 : ret;
		}
		closedir(dp);
	}
	if (*nr)
		qsort(*out, *nr, sizeof(**out), by_name);
	return ret;
}
