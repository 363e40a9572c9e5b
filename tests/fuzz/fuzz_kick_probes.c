// SPDX-License-Identifier: MIT
/*
 * fuzz_kick_probes.c: the reader of the host's kick probe history
 * (vmm/core/kick_history.c), the runtime directory's kick-probes file,
 * on any bytes. The text is a heap copy of exactly the input and its
 * terminator. A history is read whole or refused (-EINVAL): never more
 * probes than asked for, each within what a probe can measure and not
 * from the future; their ratio is one of theirs' range.
 */
#include "fuzz_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm_core.h"
#include "vmm_core_priv.h"

#define NOW 1800000000LL /* Unix s: a fixed "now" keeps inputs replayable */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmm_kick_probe_rec recs[VMM_KICK_HISTORY_MAX];
	uint64_t ratio, lo = UINT64_MAX, hi = 0, r;
	unsigned int max = size ? data[0] % (VMM_KICK_HISTORY_MAX + 1) : 0;
	char *text       = malloc(size + 1);
	int i, n;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	n          = vmm_kick_history_parse(text, "b", NOW, recs, max);
	free(text);
	if (n == -EINVAL)
		return 0;
	if (n < 0 || (unsigned int)n > max)
		abort();
	for (i = 0; i < n; i++) {
		if (!recs[i].exit_ns || !recs[i].kernel_ns ||
		    recs[i].time > NOW + 60 || recs[i].time + 86400 < NOW)
			abort();
		r  = recs[i].kernel_ns * 1000000 / recs[i].exit_ns;
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
	}
	ratio = vmm_kick_history_ratio(recs, (unsigned int)n);
	if (n && (ratio < lo || ratio > hi))
		abort();
	return 0;
}
