// SPDX-License-Identifier: MIT
/*
 * vmm_main.c: `vpmu-vmm`, the program a VM runs in. `vpmu run`
 * parses the command line and any libvirt XML, then execs this program
 * with the validated configuration in a memfd (vmm_handover.h). It links
 * only what a running VM uses (KVM machine, libvpmu, control server,
 * seccomp, json-c, uuid): no libvirt, libxml2, libdw, microhttpd or GnuTLS,
 * so an idle VM's resident set is its guest memory and a few libraries.
 * Its messages and exit statuses are `vpmu run`'s.
 */
#include "ctl_server.h"
#include "vmm_core.h"
#include "vmm_disk.h"
#include "vmm_pv.h"
#include "vm_registry.h"
#include "vmm_handover.h"
#include "vmm_snap.h"
#include "vmm_snapshot.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vpmu_common.h>

static FILE *open_console(const char *path)
{
	FILE *f;

	if (!path[0])
		return stdout;
	f = fopen(path, "we");
	if (!f)
		vpmu_die("--console %s: %s", path, strerror(errno));
	return f;
}

/* Two live VMs never share a name: operators select VMs by name. */
static void check_name(const struct vmm_config *cfg)
{
	struct vmm_reg_entry e;
	char dir[PATH_MAX];

	if (!cfg->name[0] || vmm_runtime_dir(dir, sizeof(dir)) ||
	    vmm_registry_find_name(dir, cfg->name, &e) != 1)
		return;
	vpmu_die("a VM named '%s' is already running (pid %d, uuid %s): choose "
		 "another --name",
		 cfg->name, (int)e.pid, e.uuid);
}

/*
 * SIGINT and SIGTERM stop the VM cleanly (vCPUs leave KVM_RUN, the control
 * socket and registry entry are removed) with status 128 + signal: every
 * thread keeps them blocked except one waiter, which takes them only
 * inside its ppoll. Not a signalfd: the kernel wakes a signalfd's pollers
 * on every signal sent to any thread of the process, and the vCPUs' kick
 * timers send one per sample, so the waiter would run (and preempt a
 * vCPU) at the sampling rate. SIGPIPE is ignored: when the console is a
 * pipe or socket whose reader went away (`vpmu run ... | head`), the same
 * thread sees it (POLLERR) and stops the VM with status 128 + SIGPIPE and
 * one message, instead of the VMM dying in the middle of a write.
 */
struct waiter {
	struct vmm_vm *vm;
	int console_fd; /* -1: not a pipe or socket */
	sigset_t wait_mask;
};

static volatile sig_atomic_t stop_signal;

static void note_stop_signal(int sig)
{
	stop_signal = sig;
}

static void *signal_waiter(void *arg)
{
	struct waiter *w = arg;
	struct pollfd p  = {.fd = w->console_fd, .events = 0};

	pthread_setname_np(pthread_self(), "vpmu-signals");
	for (;;) {
		p.revents = 0;
		ppoll(&p, 1, NULL, &w->wait_mask); /* EINTR: a stop signal */
		if (stop_signal) {
			vmm_vm_stop(w->vm, 128 + (int)stop_signal);
			return NULL;
		}
		if (p.revents & (POLLERR | POLLHUP)) {
			fprintf(stderr,
				"vpmu: %s: console output closed (broken "
				"pipe): stopping the VM\n",
				vmm_vm_name(w->vm));
			vmm_vm_stop(w->vm, 128 + SIGPIPE);
			return NULL;
		}
	}
}

/* (f)'s descriptor if it is a pipe or a socket, else -1. */
static int pipe_fd(FILE *f)
{
	struct stat st;
	int fd = fileno(f);

	if (fd < 0 || fstat(fd, &st))
		return -1;
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ? fd : -1;
}

static int run_until_signal(struct vmm_vm *vm, FILE *console)
{
	struct waiter w     = {.vm = vm, .console_fd = pipe_fd(console)};
	struct sigaction sa = {.sa_handler = note_stop_signal}, old_int,
			 old_term;
	sigset_t set, old;
	pthread_t waiter;
	bool has_waiter;
	int status;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	w.wait_mask = old;
	sigdelset(&w.wait_mask, SIGINT);
	sigdelset(&w.wait_mask, SIGTERM);
	has_waiter = pthread_create(&waiter, NULL, signal_waiter, &w) == 0;
	status     = vmm_vm_run(vm);
	if (has_waiter) {
		pthread_cancel(waiter);
		pthread_join(waiter, NULL);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return status;
}

/* The configuration `vpmu run` left in (fd_text), read once and closed. */
static void read_config(const char *fd_text, struct vmm_config *cfg,
			char restore[PATH_MAX])
{
	static struct vmm_handover h;
	char err[VMM_CONFIG_ERR_LEN], *end;
	long fd = strtol(fd_text, &end, 10);
	ssize_t n;

	if (*end || fd < 0 || fd > INT32_MAX)
		vpmu_die("%s: bad descriptor '%s'", VMM_HANDOVER_ARG, fd_text);
	n = pread((int)fd, &h, sizeof(h), 0);
	close((int)fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, VMM_HANDOVER_MAGIC, 8) ||
	    h.size != sizeof(h))
		vpmu_die("%s: not a configuration from this build's 'vpmu run'",
			 VMM_HANDOVER_PROG);
	/* Strings end inside their arrays; values are in range. */
	h.cfg.name[sizeof(h.cfg.name) - 1]             = '\0';
	h.cfg.image[sizeof(h.cfg.image) - 1]           = '\0';
	h.cfg.initrd[sizeof(h.cfg.initrd) - 1]         = '\0';
	h.cfg.cmdline[sizeof(h.cfg.cmdline) - 1]       = '\0';
	h.cfg.console[sizeof(h.cfg.console) - 1]       = '\0';
	h.cfg.pmu_model[sizeof(h.cfg.pmu_model) - 1]   = '\0';
	h.cfg.format_dir[sizeof(h.cfg.format_dir) - 1] = '\0';
	h.cfg.source[sizeof(h.cfg.source) - 1]         = '\0';
	h.restore[sizeof(h.restore) - 1]               = '\0';
	/* A restored VM has no image: its snapshot stands for it here. */
	*cfg = h.cfg;
	if (h.restore[0])
		snprintf(cfg->image, sizeof(cfg->image), "%s", h.restore);
	if (vmm_config_validate(cfg, err, sizeof(err)))
		vpmu_die("%s", err);
	*cfg = h.cfg;
	memcpy(restore, h.restore, sizeof(h.restore));
}

/* `vpmu run --restore`: the snapshot's state into the new VM. */
static void restore_snapshot(struct vmm_vm *vm, const char *path,
			     const char *pmu_model)
{
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_snapshot_dims dims;
	struct timespec t0, t1;
	struct vmm_snap snap;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (vmm_snapshot_open(path, pmu_model, &snap, &dims, err, sizeof(err)))
		vpmu_die("%s", err);
	if (vmm_snapshot_restore(vm, &snap, err, sizeof(err)))
		vpmu_die("%s: %s", path, err);
	vmm_snap_close(&snap);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	vmm_log(vm, VMM_LOG_INFO, "restored %s in %.1f ms", path,
		(t1.tv_sec - t0.tv_sec) * 1e3 +
			(t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* --stats: what is booted, on what kind of host, and what that implies. */
static void print_boot(const struct vmm_vm *vm, const char *image)
{
	enum vmm_image_kind kind = vmm_vm_image_kind(vm);
	const char *added        = vmm_vm_linux_params_added(vm);
	char prefix[VMM_NAME_MAX + 16];

	snprintf(prefix, sizeof(prefix), "vpmu: %s: ", vmm_vm_name(vm));
	fprintf(stderr, "%sbooting %s as a %s\n", prefix, image,
		vmm_image_kind_name(kind));
	vmm_host_describe(vmm_vm_host(vm), prefix, stderr);
	if (kind != VMM_IMAGE_ELF)
		fprintf(stderr, "%sLinux command line: %s%s\n", prefix,
			added[0] ? "added " : "",
			added[0] ? added : "nothing added for this host");
}

/*
 * The VMM is assembled here: the core runs the machine, and the modules on
 * top of it hook into its VM life and vCPU loop in this order (the disks,
 * then pv's accounting before the control server's completions).
 */
static const struct vmm_module *const modules[] = {
	&vmm_disk_module, &vmm_pv_module, &vmm_ctl_module, NULL};

int main(int argc, char **argv)
{
	char err[VMM_CONFIG_ERR_LEN];
	static struct vmm_config cfg;
	static char restore[PATH_MAX];
	struct vmm_vm *vm;
	FILE *console;
	int status;

	if (argc != 3 || strcmp(argv[1], VMM_HANDOVER_ARG))
		vpmu_die("%s is started by 'vpmu run' (see vpmu run --help)",
			 VMM_HANDOVER_PROG);
	read_config(argv[2], &cfg, restore);
	check_name(&cfg);
	console = open_console(cfg.console);
	if (vmm_vm_create(&cfg, console, modules, &vm, err, sizeof(err)))
		vpmu_die("%s", err);
	if (restore[0])
		restore_snapshot(vm, restore, cfg.pmu_model);
	else if (vmm_vm_load(vm, cfg.image, err, sizeof(err)))
		vpmu_die("%s", err);
	if (cfg.stats && !restore[0])
		print_boot(vm, cfg.image);
	status = run_until_signal(vm, console);
	if (status < 0)
		vpmu_die("%s: cannot start vCPUs: %s", vmm_vm_name(vm),
			 strerror(-status));
	if (cfg.stats)
		vmm_stats_print(vm, stderr);
	vmm_vm_destroy(vm);
	if (console != stdout)
		fclose(console);
	return status;
}
