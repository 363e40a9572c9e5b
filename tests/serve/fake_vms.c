// SPDX-License-Identifier: MIT
/*
 * fake_vms.c: real vpmu control servers without KVM, for the tests of
 * `vpmu serve` on hosts without /dev/kvm. Each VM is the VMM's own VM
 * state (libvpmu domain, vCPU objects, control server on a socket in
 * $VPMU_RUNTIME_DIR with its registry entry) whose vCPUs are plain threads
 * (as in tests/unit/vmm/test_ctl_vcpu_sync.c): every millisecond a vCPU
 * "exits" after 1 ms of guest run time with its RIP in fake_guest_hot
 * (9 times in 10, at random) or fake_guest_cold, and is accounted by the VMM's
 * own vmm_pv_after_run(), its samples called from fake_guest_mid called
 * from fake_guest_outer (the chain host sampling asks for). The image of
 * every VM is this program, so symbols and lines resolve. Once the file GO
 * exists, vCPU i of VM v makes exactly HYPERCALLS doorbell hypercalls (PIO
 * exits), then no more, and takes a PMI with every 4th one (HYPERCALLS / 4 in
 * all, counted where vm_pmu.c counts an injected PMI).
 *
 *   fake_vms GO HYPERCALLS NAME:VCPUS [NAME:VCPUS...]
 *
 * Runs until SIGTERM/SIGINT; stderr says "fake_vms: ready" once every VM
 * is registered and "fake_vms: hypercalls done" when all are made.
 * $VPMU_FAKE_TICK_MS (1 to 1000, default 1) spaces the exits out: each
 * still accounts 1 ms of guest run time, so a fleet of a hundred VMs does
 * not take the host's CPUs from the operator commands measured against it.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_server.h"
#include "elf_symbols.h"
#include "vm_config.h"
#include "vmm_core_priv.h"

#define MAX_VMS   128 /* a fleet on one host (bench_scale) */
#define PMI_EVERY 4   /* hypercalls per injected PMI */

static atomic_bool stopping;
static atomic_uint nr_left; /* vCPUs still making hypercalls */
static const char *go_file;
static uint64_t hypercalls;
static long tick_ns = 1000000; /* between exits */
static uint64_t hot_ip, cold_ip;
static uint64_t chain_ret[2]; /* return addresses in mid, outer */

/* The guest's "functions": only their addresses matter. */
__attribute__((noinline, used)) void fake_guest_hot(void);
__attribute__((noinline, used)) void fake_guest_cold(void);
__attribute__((noinline, used)) void fake_guest_mid(void);
__attribute__((noinline, used)) void fake_guest_outer(void);
void fake_guest_hot(void)
{
	__asm__ volatile("nop; nop; nop; nop");
}
void fake_guest_cold(void)
{
	__asm__ volatile("nop; nop; nop; nop");
}
/* The callers every sample's chain names: outer -> mid -> hot/cold. */
void fake_guest_mid(void)
{
	__asm__ volatile("nop; nop; nop; nop");
}
void fake_guest_outer(void)
{
	__asm__ volatile("nop; nop; nop; nop");
}

static void on_kick(int sig)
{
	(void)sig; /* interrupts the nanosleep, as a kick leaves KVM_RUN */
}

/*
 * 1 ms of guest run time, accounted by the VMM. A sample due now gets the
 * chain outer -> mid (a host context asked for chains: record -g, live
 * profiles), stored under the sample's time before vmm_pv_after_run()
 * writes the sample, as the VMM's own capture is, so that no drain sees
 * the sample without it (that capture finds no guest page tables here and
 * stores nothing).
 */
static void run_one_ms(struct vmm_vcpu *v)
{
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);
	uint64_t now          = vpmu_cpu_run_ns(p->cpu) + 1000000;
	bool due              = atomic_load(&p->chain_users) &&
		   now >= vpmu_cpu_next_deadline(p->cpu);

	if (due)
		vmm_pv_chain_store(v, now, chain_ret, 2);
	vmm_pv_after_run(v, 1000000, vpmu_monotonic_ns(), false);
}

static void *vcpu_thread(void *arg)
{
	struct vmm_vcpu *v   = arg;
	struct timespec tick = {tick_ns / 1000000000L, tick_ns % 1000000000L};
	uint64_t rnd = 0x9e3779b97f4a7c15ULL + v->index, made = 0;
	bool counted = false;

	__atomic_store_n(&v->tid, gettid(), __ATOMIC_RELEASE);
	while (!atomic_load(&stopping)) {
		nanosleep(&tick, NULL);
		/* 9 in 10 hot, at random: no aliasing with a sampling period.
		 */
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		v->run->s.regs.regs.rip = rnd % 10 ? hot_ip : cold_ip;
		v->stats.nr_exits++;
		v->stats.exits[KVM_EXIT_IO]++;
		v->stats.pio++;
		if (made < hypercalls && access(go_file, F_OK) == 0) {
			v->stats.hypercalls++;
			made++;
			/* A PMI every PMI_EVERY calls, counted as vm_pmu.c
			 * does. */
			if (made % PMI_EVERY == 0)
				atomic_fetch_add(&vmm_pv_vcpu(v)->pmis, 1);
		}
		if (made == hypercalls && !counted) {
			counted = true;
			if (atomic_fetch_sub(&nr_left, 1) == 1)
				fprintf(stderr, "fake_vms: hypercalls done\n");
		}
		run_one_ms(v);
	}
	return NULL;
}

static int start_vm(struct vmm_vm *vm, const char *spec, const char *image)
{
	struct vmm_config cfg;
	unsigned int i;
	const char *colon = strchr(spec, ':');
	int ret;

	vmm_config_defaults(&cfg);
	cfg.nr_vcpus = colon ? (unsigned int)atoi(colon + 1) : 1;
	if (!colon || !cfg.nr_vcpus || cfg.nr_vcpus > 8)
		return -EINVAL;
	snprintf(vm->name, sizeof(vm->name), "%.*s", (int)(colon - spec), spec);
	uuid_generate(vm->uuid);
	vm->nr_vcpus      = cfg.nr_vcpus;
	vm->has_sync_regs = true;
	vm->kvm_fd = vm->vm_fd = -1;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	vm->vcpus = calloc(vm->nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return -ENOMEM;
	for (i = 0; i < vm->nr_vcpus; i++) {
		vm->vcpus[i].vm    = vm;
		vm->vcpus[i].index = i;
		vm->vcpus[i].fd    = -1;
		vm->vcpus[i].run   = calloc(1, sizeof(struct kvm_run));
		if (!vm->vcpus[i].run)
			return -ENOMEM;
	}
	ret = vmm_pv_create(vm, &cfg);
	if (!ret)
		ret = vmm_control_init(vm, &cfg);
	if (ret)
		return ret;
	vmm_control_set_image(vm, image);
	ret = vmm_control_start(vm);
	for (i = 0; !ret && i < vm->nr_vcpus; i++) {
		ret = -pthread_create(&vm->vcpus[i].thread, NULL, vcpu_thread,
				      &vm->vcpus[i]);
		vm->vcpus[i].has_thread = !ret;
	}
	return ret;
}

static void stop_vm(struct vmm_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].has_thread)
			pthread_join(vm->vcpus[i].thread, NULL);
		vm->vcpus[i].has_thread = false;
	}
	vmm_control_free(vm);
	vmm_pv_destroy(vm);
}

static uint64_t symbol(const struct symtab *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nr; i++) {
		if (!strcmp(st->syms[i].name, name))
			return st->syms[i].addr + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct vmm_vm vms[MAX_VMS];
	struct sigaction sa = {.sa_handler = on_kick};
	char image[PATH_MAX];
	struct symtab st;
	sigset_t set;
	int i, nr, sig;
	ssize_t n;

	if (argc < 4 || argc - 3 > MAX_VMS) {
		fprintf(stderr,
			"usage: fake_vms GO HYPERCALLS NAME:VCPUS...\n");
		return 2;
	}
	go_file = argv[1];
	if (getenv("VPMU_FAKE_TICK_MS"))
		tick_ns = atol(getenv("VPMU_FAKE_TICK_MS")) * 1000000L;
	if (tick_ns < 1000000L || tick_ns > 1000000000L) {
		fprintf(stderr, "fake_vms: VPMU_FAKE_TICK_MS: 1 to 1000\n");
		return 2;
	}
	hypercalls = strtoull(argv[2], NULL, 10);
	n          = readlink("/proc/self/exe", image, sizeof(image) - 1);
	if (n <= 0 || symtab_load(&st, (image[n] = '\0', image))) {
		fprintf(stderr, "fake_vms: no symbols in %s\n", image);
		return 1;
	}
	hot_ip  = symbol(&st, "fake_guest_hot");
	cold_ip = symbol(&st, "fake_guest_cold");
	/* Inside mid and outer, as a return address after a call would be. */
	chain_ret[0] = symbol(&st, "fake_guest_mid") + 2;
	chain_ret[1] = symbol(&st, "fake_guest_outer") + 2;
	symtab_free(&st);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	nr = argc - 3;
	for (i = 0; i < nr; i++) {
		if (start_vm(&vms[i], argv[3 + i], image)) {
			fprintf(stderr, "fake_vms: cannot start VM '%s'\n",
				argv[3 + i]);
			return 1;
		}
		atomic_fetch_add(&nr_left, vms[i].nr_vcpus);
	}
	fprintf(stderr, "fake_vms: ready\n");
	sigwait(&set, &sig);
	atomic_store(&stopping, true);
	for (i = 0; i < nr; i++)
		stop_vm(&vms[i]);
	return 0;
}
