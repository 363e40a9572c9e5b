// SPDX-License-Identifier: MIT
/*
 * vmm_log.c: the VMM's one way to tell the user something on stderr:
 * "vpmu: VM-NAME: message", one line written at once (threads do not
 * interleave), filtered by level. VPMU_LOG=error|warn|info|debug sets the
 * threshold (default info: everything but debug).
 */
#include "vmm_core_priv.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LOG_LINE_MAX 512

static const char *const level_names[] = {
	[VMM_LOG_ERROR] = "error",
	[VMM_LOG_WARN]  = "warn",
	[VMM_LOG_INFO]  = "info",
	[VMM_LOG_DEBUG] = "debug",
};

static enum vmm_log_level threshold(void)
{
	const char *env = getenv("VPMU_LOG");
	size_t i;

	for (i = 0; env && i < ARRAY_SIZE(level_names); i++) {
		if (!strcmp(env, level_names[i]))
			return (enum vmm_log_level)i;
	}
	return VMM_LOG_INFO;
}

void vmm_log(const struct vmm_vm *vm, enum vmm_log_level level, const char *fmt,
	     ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;
	int n;

	if (level > threshold())
		return;
	n = snprintf(line, sizeof(line), "vpmu: %s: ", vm ? vm->name : "-");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line); /* one write: stderr is unbuffered */
}
