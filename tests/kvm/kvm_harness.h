/* SPDX-License-Identifier: MIT */
/*
 * kvm_harness.h: helpers for integration tests that boot guests.
 *
 * kvm_require() skips the test with a clear reason where /dev/kvm cannot
 * be used (fails it under VPMU_REQUIRE_KVM=1). vpmu_cmd() runs the real
 * `vpmu` program and captures its exit status, stdout and stderr.
 */
#ifndef KVM_HARNESS_H
#define KVM_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define VPMU_BIN  VPMU_BUILD_DIR "/vmm/vpmu"
#define GUEST(n)  VPMU_BUILD_DIR "/guests/" n ".elf"
#define CONFIG(n) VPMU_BUILD_DIR "/configs/" n ".xml"
#define OUT_MAX   (64 * 1024)

struct vpmu_result {
	int status;        /* exit status, or 128 + signal */
	char out[OUT_MAX]; /* stdout (the guest console by default) */
	char err[OUT_MAX]; /* stderr */
};

/*
 * Skip the current test unless /dev/kvm can be opened read-write; with
 * VPMU_REQUIRE_KVM=1 in the environment (scripts/test.sh sets it for the
 * guest labels) fail it instead: a guest test that cannot run is an error.
 */
void kvm_require(void);

/*
 * Run VPMU_BIN with the NULL-terminated (argv) (argv[0] is the first
 * argument after the program name) and fill (*res). Kills it after
 * (timeout_s) seconds. Returns 0, or -errno if it could not be run.
 */
int vpmu_cmd(struct vpmu_result *res, unsigned int timeout_s,
	     const char *const *argv);

/*
 * Wait up to (timeout_s) seconds for (text) on (console), the file an
 * in-process VM writes its serial output to (flushed at every newline).
 * A guest that printed a line has run: tests that act on a running guest
 * wait for its line, never a fixed time (the VM's start-up varies with
 * the host's load). Returns whether (text) appeared.
 */
bool console_wait_for(FILE *console, const char *text, unsigned int timeout_s);

/* Count the occurrences of (needle) in (hay). */
unsigned int count_str(const char *hay, const char *needle);

/*
 * Assertion helpers for test files that keep their last result in a
 * file-scope `static struct vpmu_result res;` and include Criterion's
 * new/assert.h:
 *   RUN(args...)         run `vpmu args...` (60 s limit), fail on timeout;
 *   RUN_LONG(args...)    the same with a 120 s limit;
 *   HAS(buf, text)       (text) occurs in (buf), else show both streams;
 *   STATUS(want)         the exit status is (want), else show both streams.
 */
#define RUN_FOR(secs, ...)                                                     \
	cr_assert(eq(int,                                                      \
		     vpmu_cmd(&res, secs,                                      \
			      (const char *const[]){__VA_ARGS__, NULL}),       \
		     0),                                                       \
		  "vpmu timed out after %u s; stdout:\n%s\n--- stderr:\n%s",   \
		  (unsigned int)(secs), res.out, res.err)
#define RUN(...)      RUN_FOR(60, __VA_ARGS__)
#define RUN_LONG(...) RUN_FOR(120, __VA_ARGS__)

#define HAS(buf, text)                                                         \
	cr_assert(not(eq(ptr, strstr(buf, text), NULL)),                       \
		  "expected '%s' in:\n%s\n--- stderr:\n%s", text, buf,         \
		  res.err)

#define STATUS(want)                                                           \
	cr_assert(eq(int, res.status, want), "out:\n%s\nstderr:\n%s", res.out, \
		  res.err)

#endif /* KVM_HARNESS_H */
