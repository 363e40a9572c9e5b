// SPDX-License-Identifier: MIT
/*
 * fuzz_record_file.c: the record-file reader of `vpmu report`
 * (ops/client/record_file.c) on any bytes. Every sample handed to the
 * callback must index the header's VM table and that VM's vCPUs and carry
 * at most REC_VALS_MAX values; refusals carry a message. A file the reader
 * accepts then goes through the whole `vpmu report` (flat, or folded when
 * the size is odd), which indexes its per-VM tables with the samples.
 */
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#include "record_file.h"
#include "ops_cmd.h"

static int check_sample(void *opaque, const struct rec_sample *s)
{
	const struct rec_header *h = opaque;

	if (s->vm >= h->nr_vms || s->cpu >= h->vms[s->vm].nr_vcpus ||
	    s->nr_vals > REC_VALS_MAX)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char folded[] = "--folded";
	char *argv[]  = {folded, NULL, NULL};
	struct rec_header h;
	const char *path;
	char err[512];
	int ret;

	memset(&h, 0, sizeof(h));
	err[0] = '\0';
	path   = fuzz_file(data, size);
	ret    = rec_read(path, &h, check_sample, &h, err, sizeof(err));
	if (ret && !err[0])
		abort();
	rec_header_free(&h);
	if (ret)
		return 0;
	argv[1] = (char *)path;
	if (size & 1)
		ops_cmd_report(2, argv);
	else
		ops_cmd_report(1, argv + 1);
	return 0;
}
