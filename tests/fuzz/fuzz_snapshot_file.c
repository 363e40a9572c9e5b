// SPDX-License-Identifier: MIT
/*
 * fuzz_snapshot_file.c: the snapshot file reader (vmm/snap) and
 * the libvpmu state parser (vpmu_domain_restore) on any bytes. A file the
 * reader accepts must name only sections inside the input, and its memory
 * section must unpack into a buffer of the announced size (up to 64 MiB);
 * a refusal must carry a message. The same bytes are then given to
 * vpmu_domain_restore() on a domain counting through a replay backend: it
 * either restores or refuses with a message, never reads past the input.
 */
#include "fuzz_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/replay.h"
#include "vmm_snap.h"
#include "vpmu_core.h"

static void check_file(const uint8_t *data, size_t size)
{
	struct vmm_snap s;
	const struct vmm_snap_section *m;
	char err[256] = "";
	unsigned int i;

	if (vmm_snap_parse(data, size, NULL, &s, err, sizeof(err))) {
		if (!err[0])
			abort();
		return;
	}
	for (i = 0; i < s.nr; i++) {
		const uint8_t *p = s.sect[i].data;

		if (p < data || s.sect[i].length > size ||
		    (size_t)(p - data) > size - s.sect[i].length)
			abort();
	}
	m = vmm_snap_find(&s, VMM_SNAP_MEMORY, 0);
	if (!m)
		abort(); /* parse requires one */
	if (s.hdr.mem_size <= (64ULL << 20)) {
		void *mem = calloc(1, s.hdr.mem_size);

		if (mem && vmm_snap_memory_load(m, mem, s.hdr.mem_size))
			abort();
		free(mem);
	}
	vmm_snap_close(&s);
}

static void check_blob(const uint8_t *data, size_t size)
{
	struct vpmu_domain_config cfg = {0};
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_domain *d;
	struct vpmu_cpu *cpu;
	char err[256] = "";
	unsigned int i;
	int ret;

	if (vpmu_replay_create(&rp))
		return;
	for (i = 0; i < 8; i++)
		vpmu_replay_add_event(rp, (uint16_t)(0x10 + i), "ev");
	vpmu_replay_instance(rp, &be);
	vpmu_limits_default(&cfg.limits);
	cfg.backends    = &be;
	cfg.nr_backends = 1;
	if (vpmu_domain_create(&cfg, &d) == 0) {
		vpmu_cpu_create(d, 0, &cpu);
		vpmu_cpu_create(d, 1, &cpu);
		ret = vpmu_domain_restore(d, data, size, err, sizeof(err));
		if (ret == -EINVAL && !err[0])
			abort();
		if (ret == 0)
			vpmu_cpu_account(cpu, 1000, NULL);
		vpmu_domain_destroy(d);
	}
	vpmu_replay_destroy(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_file(data, size);
	check_blob(data, size);
	return 0;
}
