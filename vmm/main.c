// SPDX-License-Identifier: MIT
/*
 * main.c: the `vpmu` command. The only file that exits.
 *
 *   vpmu run IMAGE|CONFIG.xml [--vcpus N] [--mem SIZE] [--name NAME]
 *            [--console FILE] [--stats] [--pmu MODEL]
 *            [--kernel IMAGE] [--initrd FILE] [--append CMDLINE]
 *   vpmu events [--json]
 *   vpmu list | stat | record | report | top ...   (host operators)
 */
#include "vmm_core.h"
#include "vpmu_commands.h"
#include "vpmu_serve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: vpmu run IMAGE|CONFIG.xml [--vcpus N] [--mem SIZE] "
	"[--name NAME]\n"
	"                [--console FILE] [--stats] [--pmu MODEL]\n"
	"       vpmu run --kernel vmlinux|bzImage [--initrd FILE] "
	"[--append CMDLINE] [...]\n"
	"       vpmu events [--json]\n"
	"       vpmu list | stat | record | report | top | serve [--help]\n"
	"       vpmu help\n"
	"\n"
	"  run   boot a guest image (vpmu's freestanding ELF, a Linux\n"
	"        vmlinux or bzImage), or a libvirt domain XML config, under\n"
	"        KVM with a perfmon2 virtual PMU on every vCPU.\n"
	"        Exit status: 0 when all vCPUs halted, the guest's exit-port\n"
	"        value, 250 triple fault, 251 KVM error, 253 guest reset\n"
	"        (Linux reboot or panic), 1 on bad input.\n"
	"  events  list every event of the virtual PMU and whether this\n"
	"        host can count it.\n"
	"  list    the running VMs; stat: count events; record: sample to a\n"
	"        file; report: profile of a record file; top: live profile.\n"
	"        Host operators see every VM and vCPU (see --help of each).\n";

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt,
								...)
{
	va_list ap;

	fputs("vpmu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static FILE *open_console(const char *path)
{
	FILE *f;

	if (!path[0])
		return stdout;
	f = fopen(path, "we");
	if (!f)
		die("--console %s: %s", path, strerror(errno));
	return f;
}

/*
 * SIGINT and SIGTERM stop the VM cleanly (vCPUs leave KVM_RUN, the control
 * socket and registry entry are removed) with status 128 + signal: a
 * thread waits for them, and every other thread keeps them blocked.
 */
static void *signal_waiter(void *arg)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigwait(&set, &sig) == 0)
		vmm_vm_stop(arg, 128 + sig);
	return NULL;
}

static int run_until_signal(struct vmm_vm *vm)
{
	sigset_t set, old;
	pthread_t waiter;
	bool has_waiter;
	int status;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	has_waiter = pthread_create(&waiter, NULL, signal_waiter, vm) == 0;
	status     = vmm_vm_run(vm);
	if (has_waiter) {
		pthread_cancel(waiter);
		pthread_join(waiter, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return status;
}

static int cmd_run(int argc, char **argv)
{
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg;
	struct vmm_vm *vm;
	FILE *console;
	int status;

	vmm_config_defaults(&cfg);
	if (vmm_config_parse_run_args(&cfg, argc, argv, err, sizeof(err)) ||
	    vmm_config_validate(&cfg, err, sizeof(err)))
		die("%s", err);
	console = open_console(cfg.console);
	if (vmm_vm_create(&cfg, console, &vm, err, sizeof(err)))
		die("%s", err);
	if (vmm_vm_load(vm, cfg.image, err, sizeof(err)))
		die("%s", err);
	if (cfg.stats)
		fprintf(stderr, "vpmu: %s: booting %s as a %s\n",
			vmm_vm_name(vm), cfg.image,
			vmm_image_kind_name(vmm_vm_image_kind(vm)));
	status = run_until_signal(vm);
	if (status < 0)
		die("%s: cannot start vCPUs: %s", vmm_vm_name(vm),
		    strerror(-status));
	if (cfg.stats)
		vmm_stats_print(vm, stderr);
	vmm_vm_destroy(vm);
	if (console != stdout)
		fclose(console);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") ||
	    !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "events"))
		return vmm_cmd_events(argc - 2, argv + 2);
	/* Host operator commands (issue 7). */
	if (!strcmp(argv[1], "list"))
		return vmm_cmd_list(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat"))
		return vmm_cmd_stat(argc - 2, argv + 2);
	if (!strcmp(argv[1], "record"))
		return vmm_cmd_record(argc - 2, argv + 2);
	if (!strcmp(argv[1], "report"))
		return vmm_cmd_report(argc - 2, argv + 2);
	if (!strcmp(argv[1], "top"))
		return vmm_cmd_top(argc - 2, argv + 2);
	if (!strcmp(argv[1], "serve")) /* issue 18 */
		return vmm_cmd_serve(argc - 2, argv + 2);
	die("unknown command '%s' (try 'vpmu help')", argv[1]);
}
