/* SPDX-License-Identifier: MIT */
/*
 * fake_vm_bench.h: what the control-plane benchmarks (bench_ctl_cost,
 * bench_drain_cost) share: starting fake_vms (the VMM's control server,
 * threads as vCPUs, no KVM) and reading a task's CPU time.
 */
#ifndef FAKE_VM_BENCH_H
#define FAKE_VM_BENCH_H

#include <sys/resource.h>
#include <sys/types.h>

#define FAKE VPMU_BUILD_DIR "/tests/serve/fake_vms"
#define VPMU VPMU_BUILD_DIR "/vmm/vpmu"

void sleep_ms(long ms);

/* The task of (pid) named (comm); -1 if none. */
int find_task(pid_t pid, const char *comm);

/* Run time (ns) of task (tid) of (pid), from its schedstat. */
unsigned long long run_ns(pid_t pid, int tid);

/*
 * Start fake_vms with one VM "vm" of (vcpus) vCPUs, its GO file and log
 * in (dir) ($VPMU_RUNTIME_DIR must be set); its pid once it is ready, -1.
 */
pid_t start_fake(const char *dir, unsigned int vcpus);

/* User + system CPU time of (ru) in ms. */
double cpu_ms(const struct rusage *ru);

#endif /* FAKE_VM_BENCH_H */
