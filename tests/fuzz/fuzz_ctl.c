// SPDX-License-Identifier: MIT
/*
 * fuzz_ctl.c: the control socket, as one client's byte stream: the framing
 * (proto/: vmm_ctl_rx_fill/next/drop, 4-byte big-endian lengths), the
 * request parser and schema check (vmm_ctl_parse_request) and the command
 * table with its handlers (vmm/ctl: vmm_ctl_handle), on a VM without KVM
 * (fake_vm.h: real PMU domain and control state, no vCPU thread).
 *
 * The input is the byte stream a client writes; it arrives through a
 * socketpair in pieces that start at 1 + size % 97 bytes and double (a
 * frame is cut at a different place in every input, at a few system
 * calls per input: fixed small pieces made a 4 KiB input cost ~170 of
 * them, most of its time), and the frames are served
 * as the control thread serves them: in order, one reply each (sent back
 * through the pair and drained, a packed drain's binary frame after its
 * reply), a broken length ends the connection.
 * At the end the client goes away and its contexts and sessions are
 * released, as when a connection closes; the pair itself is made once
 * per process and left empty after every input.
 */
#include "fuzz_input.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_priv.h"
#include "ctl_server.h"
#include "fake_vm.h"

/* A short read emptied the pair: no second read to learn it. */
static void drain(int fd)
{
	char buf[65536];

	while (read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
		;
}

/* Serve the complete frames of (c); false when the connection ends. */
static bool serve(struct vmm_control *ctl, struct vmm_ctl_client *c, int peer)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req, *rep;
	const char *body;
	char err[256];
	int64_t id;
	size_t len;
	int ret;

	while ((ret = vmm_ctl_rx_next(&c->rx, &body, &len)) == 1) {
		err[0] = '\0';
		ret    = vmm_ctl_parse_request(body, len, &req, &cmd, &id, err,
					       sizeof(err));
		vmm_ctl_rx_drop(&c->rx, len);
		if (ret) {
			if (!err[0])
				abort(); /* a refusal names its reason */
			rep = vmm_ctl_reply_err(id, -ret, err);
		} else {
			rep = vmm_ctl_handle(ctl, c, cmd, req, id);
			json_object_put(req);
		}
		ret = vmm_ctl_send(c->fd, rep, 100);
		json_object_put(rep);
		drain(peer);
		/* A packed drain's frame follows its reply. */
		if (!ret)
			ret = vmm_ctl_queue_packed(c, 0);
		while (!ret && vmm_ctl_tx_pending(c)) {
			ret = vmm_ctl_flush(c, 0);
			drain(peer);
		}
		if (ret)
			return false;
	}
	return ret != -EMSGSIZE;
}

/*
 * One socketpair for the process (making and closing one was a tenth of
 * an input's time): [0] is the server's end, [1] the client's. Both are
 * drained after each input, so the next one starts on an empty pair.
 */
static int sv[2] = {-1, -1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t step = 1 + size % 97, off = 0, n;
	struct vmm_vm *vm        = fake_vm_fresh(false);
	struct vmm_control *ctl  = vmm_ctl(vm);
	struct vmm_ctl_client *c = &ctl->clients[0];
	bool open                = true;

	if (sv[0] < 0 &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		abort();
	c->fd = sv[0];
	while (open && off < size) {
		n = size - off < step ? size - off : step;
		if (write(sv[1], data + off, n) != (ssize_t)n)
			abort();
		off += n;
		step *= 2;
		open = vmm_ctl_rx_fill(&c->rx, c->fd) == 0 &&
		       serve(ctl, c, sv[1]);
	}
	vmm_ctl_client_release(ctl, c);
	/*
	 * The receive buffer is kept, emptied: it is 128 KiB or more, which
	 * ASan maps and unmaps for every allocation. Growing it depends only
	 * on the bytes held (len), so a kept one behaves as a new one.
	 */
	c->rx.len = 0;
	vmm_ctl_tx_free(c);
	c->fd = -1;
	/* What the server did not read, what the client did not. */
	drain(sv[0]);
	drain(sv[1]);
	return 0;
}
