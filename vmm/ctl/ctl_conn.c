// SPDX-License-Identifier: MIT
/*
 * ctl_conn.c: one connection's buffers and clocks. The control
 * thread never blocks on a client: replies go to the connection's output
 * queue and leave with non-blocking sends when poll says POLLOUT; a
 * connection whose queue is above VMM_CTL_TX_HIGH is not read (its
 * requests wait in its socket, as with a pipe) until it reads its replies.
 * Two clocks end a connection that holds a slot for nothing: a frame (or
 * a new connection's first one) must arrive whole within frame_timeout_ns,
 * and a connection held back by its queue must take some of its replies
 * within stall_timeout_ns.
 */
#include "ctl_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "vpmu_common.h"

size_t vmm_ctl_tx_pending(const struct vmm_ctl_client *c)
{
	return c->tx.len - c->tx.off;
}

/* Room for (need) more bytes: unsent bytes to the front, then grow. */
static int tx_reserve(struct vmm_ctl_tx *tx, size_t need)
{
	unsigned char *nb;
	size_t cap;

	if (tx->off) {
		memmove(tx->buf, tx->buf + tx->off, tx->len - tx->off);
		tx->len -= tx->off;
		tx->off = 0;
	}
	if (tx->cap - tx->len >= need)
		return 0;
	cap = tx->cap ? tx->cap : 4096;
	while (cap - tx->len < need)
		cap *= 2;
	nb = realloc(tx->buf, cap);
	if (!nb)
		return -ENOMEM;
	tx->buf = nb;
	tx->cap = cap;
	return 0;
}

int vmm_ctl_queue(struct vmm_ctl_client *c, struct json_object *msg,
		  uint64_t now)
{
	struct vmm_ctl_tx *tx = &c->tx;
	const char *text;
	size_t len;
	int ret;

	text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN,
						 &len);
	if (!text)
		return -ENOMEM;
	if (len == 0 || len > VMM_CTL_MSG_MAX)
		return -EMSGSIZE;
	ret = tx_reserve(tx, VMM_CTL_HDR + len);
	if (ret)
		return ret;
	if (!vmm_ctl_tx_pending(c))
		c->tx_moved_ns = now; /* the stall clock starts now */
	tx->buf[tx->len++] = (unsigned char)(len >> 24);
	tx->buf[tx->len++] = (unsigned char)(len >> 16);
	tx->buf[tx->len++] = (unsigned char)(len >> 8);
	tx->buf[tx->len++] = (unsigned char)len;
	memcpy(tx->buf + tx->len, text, len);
	tx->len += len;
	return 0;
}

int vmm_ctl_queue_packed(struct vmm_ctl_client *c, uint64_t now)
{
	struct vmm_ctl_tx *tx = &c->tx, *pk = &c->pk;
	size_t len = pk->len;
	int ret;

	if (!len)
		return 0;
	pk->len = 0;
	ret     = tx_reserve(tx, VMM_CTL_HDR + len);
	if (ret)
		return ret;
	if (!vmm_ctl_tx_pending(c))
		c->tx_moved_ns = now;
	tx->buf[tx->len++] = (unsigned char)(len >> 24);
	tx->buf[tx->len++] = (unsigned char)(len >> 16);
	tx->buf[tx->len++] = (unsigned char)(len >> 8);
	tx->buf[tx->len++] = (unsigned char)len;
	memcpy(tx->buf + tx->len, pk->buf, len);
	tx->len += len;
	if (pk->cap > (1U << 20)) { /* a big drain went: do not keep it */
		free(pk->buf);
		pk->buf = NULL;
		pk->cap = 0;
	}
	return 0;
}

int vmm_ctl_flush(struct vmm_ctl_client *c, uint64_t now)
{
	struct vmm_ctl_tx *tx = &c->tx;
	ssize_t n;

	while (tx->off < tx->len) {
		/* MSG_NOSIGNAL: a peer gone gives EPIPE, not SIGPIPE. */
		n = send(c->fd, tx->buf + tx->off, tx->len - tx->off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		tx->off += (size_t)n;
		c->tx_moved_ns = now;
	}
	tx->off = tx->len = 0;
	if (tx->cap > 65536) { /* a big reply went: do not keep its room */
		free(tx->buf);
		tx->buf = NULL;
		tx->cap = 0;
	}
	return 0;
}

void vmm_ctl_tx_free(struct vmm_ctl_client *c)
{
	free(c->tx.buf);
	memset(&c->tx, 0, sizeof(c->tx));
	free(c->pk.buf);
	memset(&c->pk, 0, sizeof(c->pk));
}

bool vmm_ctl_conn_readable(const struct vmm_ctl_client *c)
{
	return vmm_ctl_tx_pending(c) < VMM_CTL_TX_HIGH;
}

void vmm_ctl_frame_clock(struct vmm_ctl_client *c, uint64_t now)
{
	const char *body;
	size_t len;

	/* Complete frames held back by the queue are not late: not counted. */
	if (vmm_ctl_rx_next(&c->rx, &body, &len) == 0 && c->rx.len) {
		if (!c->frame_start_ns)
			c->frame_start_ns = now;
	} else if (c->served) {
		c->frame_start_ns = 0;
	}
}

uint64_t vmm_ctl_conn_deadline(const struct vmm_control *ctl,
			       const struct vmm_ctl_client *c)
{
	uint64_t d = UINT64_MAX;

	if (c->frame_start_ns)
		d = c->frame_start_ns + ctl->frame_timeout_ns;
	if (!vmm_ctl_conn_readable(c) &&
	    c->tx_moved_ns + ctl->stall_timeout_ns < d)
		d = c->tx_moved_ns + ctl->stall_timeout_ns;
	return d;
}

const char *vmm_ctl_conn_expired(const struct vmm_control *ctl,
				 const struct vmm_ctl_client *c, uint64_t now)
{
	if (c->frame_start_ns &&
	    now >= c->frame_start_ns + ctl->frame_timeout_ns)
		return c->rx.len ? "an incomplete request frame timed out"
				 : "no request after connecting";
	if (!vmm_ctl_conn_readable(c) &&
	    now >= c->tx_moved_ns + ctl->stall_timeout_ns)
		return "it stopped reading its replies";
	return NULL;
}
