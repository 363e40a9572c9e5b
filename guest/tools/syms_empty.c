// SPDX-License-Identifier: MIT
/*
 * syms_empty.c: the empty symbol table of a tool's first link (see
 * gensyms.cmake); the second link gets the generated one.
 */
#include "tool.h"

const struct pvpmu_sym tool_syms[1];
const unsigned int tool_nr_syms;
