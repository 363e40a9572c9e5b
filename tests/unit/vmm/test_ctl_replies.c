// SPDX-License-Identifier: MIT
/*
 * test_ctl_replies.c: messages the control server's handlers build from
 * request text stay valid UTF-8: `resolve` of a long
 * name echoes at most 64 bytes of it and never half a character; the
 * reply on the wire is strict UTF-8 JSON. No VM is needed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_priv.h"

static struct vmm_control ctl;

static void no_vm(void)
{
	memset(&ctl, 0, sizeof(ctl));
	ctl.clients[0].fd = 3;
}

/* The reply to (text) as a client reads it: its error text in (msg). */
static int resolve(const char *text, char *msg, size_t len)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req, *rep, *got, *v;
	char err[256];
	int64_t id;
	int sv[2], e = 0;

	cr_assert(eq(int,
		     vmm_ctl_parse_request(text, strlen(text), &req, &cmd, &id,
					   err, sizeof(err)),
		     0),
		  "%s", err);
	rep = vmm_ctl_handle(&ctl, &ctl.clients[0], cmd, req, id);
	json_object_put(req);
	cr_assert(eq(int, socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0));
	cr_assert(eq(int, vmm_ctl_send(sv[0], rep, 1000), 0));
	cr_assert(eq(int, vmm_ctl_recv(sv[1], &got, 1000), 0));
	close(sv[0]);
	close(sv[1]);
	json_object_put(rep);
	if (json_object_object_get_ex(got, "errno", &v))
		e = json_object_get_int(v);
	msg[0] = '\0';
	if (json_object_object_get_ex(got, "error", &v))
		snprintf(msg, len, "%s", json_object_get_string(v));
	json_object_put(got);
	return e;
}

Test(vmm_ctl_replies, unknown_event_echo_keeps_whole_characters, .init = no_vm)
{
	char name[100], text[256], want[128], msg[512];
	size_t at;

	/* 62 'e', then "€" (3 bytes) straddling the 64-byte limit. */
	memset(name, 'e', 62);
	strcpy(name + 62, "\xe2\x82\xac-more");
	snprintf(text, sizeof(text),
		 "{\"v\":1,\"id\":1,\"cmd\":\"resolve\",\"name\":\"%s\"}",
		 name);
	cr_assert(eq(int, resolve(text, msg, sizeof(msg)), ENOENT));
	snprintf(want, sizeof(want), "unknown event '%.62s' for host", name);
	cr_expect(not(eq(ptr, strstr(msg, want), NULL)), "'%s' lacks '%s'", msg,
		  want);
	cr_expect(eq(sz, vmm_ctl_utf8_check(msg, strlen(msg)), strlen(msg)),
		  "'%s' is not UTF-8", msg);

	/* A whole character within the limit is kept. */
	name[61] = '\0';
	strcat(name, "\xe2\x82\xac");
	snprintf(text, sizeof(text),
		 "{\"v\":1,\"id\":1,\"cmd\":\"resolve\",\"name\":\"%s\"}",
		 name);
	cr_assert(eq(int, resolve(text, msg, sizeof(msg)), ENOENT));
	at = strlen("unknown event '");
	cr_expect(eq(int, strncmp(msg + at, name, 64), 0), "%s", msg);
}
