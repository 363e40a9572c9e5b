// SPDX-License-Identifier: MIT
/*
 * spin.c: the two programs of the host-profile test (pvpmu-alpha and
 * pvpmu-beta, scripts/build-linux.sh): one source, built twice with
 * SPIN_NAME naming the hot function, so that each binary has a hot loop
 * of its own name. `pvpmu-alpha SECONDS` spins in alpha_spin() (called
 * through spin_outer(), frame pointers kept, for call chains) for that
 * long, then exits; it says "NAME: spinning" when it starts. alpha is
 * built static non-PIE, beta PIE on musl's shared libc, so a host profile
 * must resolve both kinds of executable.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef SPIN_NAME
#error "build with -DSPIN_NAME=alpha (or beta)"
#endif
#define GLUE(a, b)  a##b
#define XGLUE(a, b) GLUE(a, b)
#define SPIN_FN     XGLUE(SPIN_NAME, _spin)

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t SPIN_FN(uint64_t x)
{
	unsigned int n = 1000000;

	while (n--)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t spin_outer(uint64_t x)
{
	return SPIN_FN(x) + 1;
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? strtol(argv[1], 0, 10) : 10;
	struct timespec t0, t;
	uint64_t x = 1;

	/* Where the guest's exec is slow, a test waits for this line. */
	printf("%s: spinning\n", argv[0]);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = spin_outer(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < secs);
	sink = x;
	return 0;
}
