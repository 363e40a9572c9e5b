// SPDX-License-Identifier: MIT
/*
 * fuzz_config_xml.c: the libvirt domain XML reader (vmm/config) on any
 * bytes: vmm_config_load_xml() must answer 0 with a valid configuration or
 * -errno with a message, never crash, leak or read out of bounds.
 *
 * The RelaxNG check runs against tests/fuzz/any.rng (any well-formed
 * document), not libvirt's schema: parsing that takes 45 ms per file and
 * is libxml2's code; what is fuzzed is vpmu's reading of the elements.
 */
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#include "vm_config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv(VMM_CONFIG_SCHEMA_ENV, VPMU_FUZZ_DIR "/any.rng", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmm_config cfg;
	char err[VMM_CONFIG_ERR_LEN];
	int ret;

	err[0] = '\0';
	ret    = vmm_config_load_xml(&cfg, fuzz_file(data, size), err,
				     sizeof(err));
	if (ret == 0) {
		/* A loaded file is complete: the same checks `vpmu run` makes.
		 */
		vmm_config_validate(&cfg, err, sizeof(err));
	} else if (!err[0]) {
		abort(); /* every refusal names its reason */
	}
	return 0;
}
