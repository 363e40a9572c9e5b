/* SPDX-License-Identifier: MIT */
/*
 * fuzz_input.h: helpers shared by the fuzz targets of tests/fuzz.
 *
 * Every target defines LLVMFuzzerTestOneInput(). Built with VPMU_FUZZ,
 * libFuzzer provides main(); otherwise replay_main.c runs the target over
 * the files named on its command line (the seed corpus, under ctest).
 */
#ifndef VPMU_FUZZ_INPUT_H
#define VPMU_FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * The readers under test take a path: fuzz_file() puts (data, size) into
 * an in-memory file (memfd) and returns a path naming it, valid until the
 * next call. Aborts if the file cannot be made (a harness failure).
 */
const char *fuzz_file(const void *data, size_t size);

/*
 * True when replay_main.c runs the inputs (a ctest replay of a corpus),
 * false under libFuzzer: a target that sends only some inputs down a
 * costly path sends every replayed one.
 */
extern bool fuzz_replaying;

/* A cursor over the input, for targets that read a program from it. */
struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

/* The next (n <= 8) bytes as a little-endian number; 0 past the end. */
uint64_t fuzz_take(struct fuzz_in *in, unsigned int n);

#endif /* VPMU_FUZZ_INPUT_H */
