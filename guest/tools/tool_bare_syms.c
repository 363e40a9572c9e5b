// SPDX-License-Identifier: MIT
/*
 * tool_bare_syms.c: symbols on bare (tool.h): the image's own table,
 * tool_syms, generated from nm at build time. An object of its own so
 * that only images that symbolize (pfrecord's) need the table; the other
 * programs of the library link without one.
 */
#include "tool_bare.h"

int tool_syms_load(const struct tool_target *t, const char **file)
{
	(void)t;
	*file = "the image";
	return (int)tool_nr_syms;
}

const struct pvpmu_sym *tool_syms_lookup(uint64_t ip)
{
	return pvpmu_sym_lookup(tool_syms, tool_nr_syms, ip);
}

void tool_syms_unload(void)
{
}
