// SPDX-License-Identifier: MIT
/*
 * counters.c: published counters that never go down (see serve_priv.h).
 * A counting session's values are exact while its events fit one set;
 * with more events the sets are multiplexed and each value is an estimate
 * (raw x enabled / running) that a later read may lower. Sessions also
 * end (a profile borrows the vCPUs' host contexts for sampling) and
 * start again from zero: the bank keeps what the ended ones counted.
 */
#include "serve_priv.h"

uint64_t serve_scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (!running || running >= enabled)
		return raw;
	return (uint64_t)((double)raw * (double)enabled / (double)running);
}

uint64_t serve_counter_update(struct serve_counter *c, uint64_t value)
{
	c->cur = value;
	if (c->bank + c->cur > c->pub)
		c->pub = c->bank + c->cur;
	return c->pub;
}

void serve_counter_bank(struct serve_counter *c)
{
	c->bank += c->cur;
	c->cur = 0;
	/* An estimate that overshot stays published: go on from there. */
	if (c->bank < c->pub)
		c->bank = c->pub;
}
