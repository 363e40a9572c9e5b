/* SPDX-License-Identifier: MIT */
/*
 * kvm_harness.h: helpers for integration tests that boot guests.
 *
 * kvm_require() skips the test with a clear reason where /dev/kvm cannot
 * be used. vpmu_cmd() runs the real `vpmu` program and captures its exit
 * status, stdout and stderr.
 */
#ifndef KVM_HARNESS_H
#define KVM_HARNESS_H

#include <stddef.h>

#define VPMU_BIN  VPMU_BUILD_DIR "/vmm/vpmu"
#define GUEST(n)  VPMU_BUILD_DIR "/guests/" n ".elf"
#define CONFIG(n) VPMU_BUILD_DIR "/configs/" n ".xml"
#define OUT_MAX   (64 * 1024)

struct vpmu_result {
	int status;        /* exit status, or 128 + signal */
	char out[OUT_MAX]; /* stdout (the guest console by default) */
	char err[OUT_MAX]; /* stderr */
};

/* Skip the current test unless /dev/kvm can be opened read-write. */
void kvm_require(void);

/*
 * Run VPMU_BIN with the NULL-terminated (argv) (argv[0] is the first
 * argument after the program name) and fill (*res). Kills it after
 * (timeout_s) seconds. Returns 0, or -errno if it could not be run.
 */
int vpmu_cmd(struct vpmu_result *res, unsigned int timeout_s,
	     const char *const *argv);

/* Count the occurrences of (needle) in (hay). */
unsigned int count_str(const char *hay, const char *needle);

#endif /* KVM_HARNESS_H */
