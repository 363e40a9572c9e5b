// SPDX-License-Identifier: MIT
/*
 * fuzz_ctl_packed.c: the decoder of smpl_drain's packed sample
 * frame (proto/ctl_packed.c), which `vpmu record`, `top` and `serve`
 * run on what a VMM sends, on any bytes. The frame is a heap copy of
 * exactly the input (ASan sees a read past it). Every record handed out
 * must be within the limits; a refusal carries a message; the records
 * never outnumber the header's count; a record of the version-1 size
 * encodes back to its own bytes (the reserved word aside).
 */
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t vals[VMM_CTL_SAMPLE_VALS], chain[VMM_CTL_CHAIN_MAX];
	unsigned char again[VMM_CTL_PK_REC +
			    8 * (VMM_CTL_SAMPLE_VALS + VMM_CTL_CHAIN_MAX)];
	unsigned char *frame = malloc(size ? size : 1);
	struct vmm_ctl_pk_reader rd;
	struct vmm_ctl_pk_rec r;
	uint32_t count = 0, n = 0;
	size_t off, len;
	char err[200];
	int ret;

	if (!frame)
		abort();
	memcpy(frame, data, size);
	err[0] = '\0';
	ret    = vmm_ctl_pk_open(&rd, frame, size, err, sizeof(err));
	if (!ret)
		count = rd.left;
	while (!ret) {
		off = rd.off;
		ret = vmm_ctl_pk_next(&rd, &r, vals, chain, err, sizeof(err));
		if (ret <= 0)
			break;
		if (r.nr_vals > VMM_CTL_SAMPLE_VALS ||
		    r.nr_chain > VMM_CTL_CHAIN_MAX || ++n > count ||
		    rd.off > size)
			abort();
		len = vmm_ctl_pk_put(again, &r);
		if (rd.rec_size == VMM_CTL_PK_REC &&
		    (len != rd.off - off || memcmp(again, frame + off, 44) ||
		     memcmp(again + VMM_CTL_PK_REC,
			    frame + off + VMM_CTL_PK_REC,
			    len - VMM_CTL_PK_REC)))
			abort();
		ret = 0;
	}
	if (ret && !err[0])
		abort();
	if (!ret && (n != count || rd.off != size))
		abort();
	free(frame);
	return 0;
}
