/* SPDX-License-Identifier: MIT */
/*
 * error_rows.h: the table shape of the command error tests (test_errors.c,
 * test_errors_ctl.c). One row per error: a case function returns the
 * command's result and stores the flags of the element that failed.
 */
#ifndef VPMU_TEST_ERROR_ROWS_H
#define VPMU_TEST_ERROR_ROWS_H

#include <stdint.h>

typedef int (*case_fn)(int fd, uint32_t *flags);

struct row {
	int line;
	int id;
	int want;
	uint32_t want_flags; /* RETFL bits expected on the element */
};

/* A row for case function (f), enumerated as C_<f> by the test file. */
#define ROW(f, w, fl)                                                          \
	{                                                                      \
		.line = __LINE__, .id = C_##f, .want = w, .want_flags = fl     \
	}

/*
 * Run row (r): call (cases)[r->id] on a fresh system-wide context and
 * assert its result is r->want and the element flags r->want_flags.
 */
void error_row_check(const struct row *r, const case_fn *cases);

#endif /* VPMU_TEST_ERROR_ROWS_H */
