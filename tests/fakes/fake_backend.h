/* SPDX-License-Identifier: MIT */
/*
 * fake_backend.h: a scripted vpmu backend for failure paths: it counts
 * event FAKE_EV_CODE, adds fake_backend_next_count on every read, and
 * fails open()/read() with the errno the test sets.
 */
#ifndef FAKE_BACKEND_H
#define FAKE_BACKEND_H

#include <stdint.h>

#include "vpmu_backend.h"

#define FAKE_EV_CODE 0x0077

extern const struct vpmu_backend_ops fake_backend;
extern uint64_t fake_backend_next_count;  /* delta every read() returns */
extern int fake_backend_open_ret;         /* 0 or -errno for open() */
extern int fake_backend_read_ret;         /* 0 or -errno for read() */
extern unsigned int fake_backend_nr_open; /* events open now */
/* If set, refusal() answers it for an event counting one ring only. */
extern const char *fake_backend_ring_refusal;

#endif /* FAKE_BACKEND_H */
