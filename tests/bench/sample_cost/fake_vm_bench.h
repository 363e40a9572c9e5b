/* SPDX-License-Identifier: MIT */
/*
 * fake_vm_bench.h: what the control-plane benchmarks (bench_ctl_cost,
 * bench_drain_cost, bench_scale) share: starting fake_vms (the VMM's control
 * server, threads as vCPUs, no KVM) and reading a task's CPU time.
 */
#ifndef FAKE_VM_BENCH_H
#define FAKE_VM_BENCH_H

#include <sys/resource.h>
#include <sys/types.h>

#define FAKE         VPMU_BUILD_DIR "/tests/serve/fake_vms"
#define VPMU         VPMU_BUILD_DIR "/vmm/vpmu"
#define FAKE_MAX_VMS 128 /* fake_vms's MAX_VMS */

void sleep_ms(long ms);

/*
 * Make (dir) /tmp/vpmu-(tag)-XXXXXX with a runtime directory run/ in it
 * (mode 0700, as the VMM asks), exported as $VPMU_RUNTIME_DIR. 0, or -1.
 */
int bench_dir(char dir[64], const char *tag);

/* The task of (pid) named (comm); -1 if none. */
int find_task(pid_t pid, const char *comm);

/* Run time (ns) of task (tid) of (pid), from its schedstat. */
unsigned long long run_ns(pid_t pid, int tid);

/*
 * Start fake_vms with one VM "vm" of (vcpus) vCPUs, its GO file and log
 * in (dir) ($VPMU_RUNTIME_DIR must be set); its pid once it is ready, -1.
 */
pid_t start_fake(const char *dir, unsigned int vcpus);

/*
 * The same with (nr) VMs, "NAME:VCPUS" each in (specs) (at most
 * FAKE_MAX_VMS); $VPMU_FAKE_TICK_MS is passed on.
 */
pid_t start_fake_vms(const char *dir, unsigned int nr, char *const specs[]);

/* User + system CPU time of (ru) in ms. */
double cpu_ms(const struct rusage *ru);

#endif /* FAKE_VM_BENCH_H */
