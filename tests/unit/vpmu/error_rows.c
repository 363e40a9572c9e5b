// SPDX-License-Identifier: MIT
/* error_rows.c: the row check shared by the command error tests. */
#include "error_rows.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "harness.h"

void error_row_check(const struct row *r, const case_fn *cases)
{
	int fd         = h_ctx(PFM_FL_SYSTEM_WIDE);
	uint32_t flags = 0;

	cr_assert(eq(int, cases[r->id](fd, &flags), r->want), "row at line %d",
		  r->line);
	cr_assert(eq(u32, flags, r->want_flags), "flags, row at line %d",
		  r->line);
}
