/* SPDX-License-Identifier: MIT */
/*
 * cmd_priv.h: what the command layer (cmd/, target vpmu_core) shares
 * inside itself and with the architectural models above it: the handle
 * lookup and the run of a perfmon2 vector command. Mechanisms
 * (vpmu_mech.h) never include it.
 */
#ifndef VPMU_CMD_PRIV_H
#define VPMU_CMD_PRIV_H

#include "vpmu_priv.h"

/*
 * Find context (fd) of (who)'s owner in (d)'s handle table. Lock held.
 * Returns 0 and sets (*out), or -EBADF.
 */
int vpmu_ctx_lookup(struct vpmu_domain *d, const struct vpmu_caller *who,
		    int fd, struct vpmu_ctx **out);
/* spec 3.1: n > 0 (-EINVAL); 4.4.2: the bytes within cf_arg_size_max. */
int vpmu_check_vec(struct vpmu_domain *d, const void *arr, int n, size_t elem);

/*
 * A vector command (spec 3.1): (n) elements of (elem) bytes at (arr).
 * (prep), optional, is the command-wide check run once the vector is
 * valid; (one) handles one element, flagging it on error.
 */
struct vpmu_vec_cmd {
	void *arr;
	int n;
	size_t elem;
	int (*prep)(struct vpmu_ctx *ctx);
	int (*one)(struct vpmu_ctx *ctx, void *elem);
	void (*done)(struct vpmu_ctx *ctx); /* optional, after the elements */
};

/*
 * Under the domain lock: look (fd) up, check the vector, run (cmd->prep),
 * then (cmd->one) on each element in order, stopping at the first error;
 * earlier elements stay applied; then (cmd->done), error or not, once the
 * context was found. Returns 0 or the first -errno.
 */
int vpmu_ctx_vec_run(struct vpmu_domain *d, const struct vpmu_caller *who,
		     int fd, const struct vpmu_vec_cmd *cmd);

#endif /* VPMU_CMD_PRIV_H */
