// SPDX-License-Identifier: MIT
/*
 * init.c: PID 1 of the vpmu Linux test guest (README.md beside it).
 *
 * Mounts /dev and /proc, prints a banner, runs the checks that
 * `vpmutest=boot|sys|perf|mp|all|panic` selects (from the kernel command
 * line: the kernel hands unknown `name=value` words to init as environment
 * variables), prints one line per check and a summary, then ends the VM:
 * OUT of the status byte to vpmu's exit port, else power-off.
 */
#include "init.h"

#include "pvpmu/abi.h"

#define SELECT_VAR     "vpmutest="
#define PANIC_STATUS   99
#define REBOOT_MAGIC1  0xfee1deadU
#define REBOOT_MAGIC2  672274793U
#define REBOOT_CMD_OFF 0x4321fedcU

/* What `vpmutest=` selects. */
struct selection {
	const char *name;
	unsigned int groups;
};

static const struct selection selections[] = {
	{"boot", GROUP_BOOT},
	{"sys", GROUP_BOOT | GROUP_SYS},
	{"perf", GROUP_BOOT | GROUP_PERF},
	{"mp", GROUP_BOOT | GROUP_MP},
	{"all", GROUP_ALL},
	{"panic", 0},
	{"hold", GROUP_BOOT | GROUP_HOLD},
	{"poweroff", GROUP_BOOT | GROUP_POWEROFF},
	{"pvpmu", GROUP_BOOT | GROUP_PVPMU},
	{"pvpmuclose", GROUP_BOOT | GROUP_PVPMU_CLOSE},
	{"pvpmusmp", GROUP_BOOT | GROUP_PVPMU_SMP},
	{"pvpmuspec", GROUP_BOOT | GROUP_PVPMU_SPEC},
};

struct totals {
	unsigned int passed, failed, skipped;
};

static void mount_if_needed(const char *src, const char *dir, const char *type)
{
	long ret;

	sys_mkdir(dir, 0755);
	ret = sys_mount(src, dir, type, 0, 0);
	if (ret < 0 && ret != -16 /* EBUSY: already mounted */)
		say("vpmu-init: mount %s on %s: errno %ld\n", type, dir, -ret);
}

/* Without /dev/console in the initramfs the kernel gives init no fds. */
static void ensure_console(void)
{
	long fd;

	if (sys_write(1, "", 0) == 0)
		return;
	fd = sys_open("/dev/console", O_RDWR, 0);
	if (fd < 0)
		return;
	sys_dup2((int)fd, 0);
	sys_dup2((int)fd, 1);
	sys_dup2((int)fd, 2);
	if (fd > 2)
		sys_close((int)fd);
}

/* `vpmutest=VALUE` from the environment or argv; "all" if absent. */
static const char *find_selection(char **argv, char **envp)
{
	char **lists[2] = {envp, argv};
	unsigned int l;
	char **p;

	for (l = 0; l < 2; l++)
		for (p = lists[l]; p && *p; p++)
			if (!strncmp(*p, SELECT_VAR, sizeof(SELECT_VAR) - 1))
				return *p + sizeof(SELECT_VAR) - 1;
	return "all";
}

static const struct selection *lookup_selection(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(selections) / sizeof(selections[0]); i++)
		if (!strcmp(selections[i].name, name))
			return &selections[i];
	return 0;
}

static const char *result_name(enum result res)
{
	switch (res) {
	case RES_PASS:
		return "PASS";
	case RES_FAIL:
		return "FAIL";
	default:
		return "SKIP";
	}
}

static void run_table(const struct check *table, unsigned int count,
		      unsigned int groups, struct totals *t)
{
	struct report r;
	enum result res;
	unsigned int i;

	for (i = 0; i < count; i++) {
		if (!(table[i].groups & groups))
			continue;
		memset(&r, 0, sizeof(r));
		res = table[i].run(&r);
		say("vpmu-test: %s: %s %s\n", table[i].name, result_name(res),
		    r.text);
		t->passed += res == RES_PASS;
		t->failed += res == RES_FAIL;
		t->skipped += res == RES_SKIP;
	}
}

/*
 * tcdrain(1): TCSBRK with a non-zero argument. A tty write returns once the
 * bytes are queued, before the UART has sent them.
 */
static void drain_console(void)
{
	sys_ioctl(1, TCSBRK, (void *)1);
}

/* Power off as any Linux userspace does: reboot(LINUX_REBOOT_CMD_POWER_OFF). */
static void power_off(void)
{
	sys_reboot((int)REBOOT_MAGIC1, (int)REBOOT_MAGIC2, (int)REBOOT_CMD_OFF,
		   0);
	for (;;)
		sys_sched_yield();
}

/* End the VM with `status`: vpmu's exit port, else power off. */
static void end_vm(unsigned int status, unsigned int groups)
{
	long ret;

	drain_console();
	if (groups & GROUP_POWEROFF) /* the kernel's own way (vpmu-0002) */
		power_off();
	ret = sys_call_ioperm(PVPMU_PORT_EXIT, 1, 1);

	if (ret == 0)
		outb_port((unsigned char)status, PVPMU_PORT_EXIT);
	else
		say("vpmu-init: ioperm(exit port): errno %ld\n", -ret);
	say("vpmu-init: exit port did not end the VM; powering off\n");
	power_off();
}

int main(int argc, char **argv, char **envp)
{
	const char *name            = find_selection(argv, envp);
	const struct selection *sel = lookup_selection(name);
	struct totals t             = {0, 0, 0};

	(void)argc;
	mount_if_needed("devtmpfs", "/dev", "devtmpfs");
	ensure_console();
	mount_if_needed("proc", "/proc", "proc");
	say("vpmu-init: vpmu Linux test init, vpmutest=%s\n", name);
	if (!sel) {
		say("vpmu-init: unknown vpmutest=%s "
		    "(boot|sys|perf|mp|all|panic|hold|poweroff|pvpmu|"
		    "pvpmuclose|pvpmusmp|pvpmuspec)\n",
		    name);
		end_vm(2, 0);
	}
	if (!sel->groups) {
		say("vpmu-init: vpmutest=panic: init exits (kernel panics)\n");
		drain_console();
		return PANIC_STATUS;
	}
	run_table(sys_checks, sys_checks_count, sel->groups, &t);
	run_table(perf_checks, perf_checks_count, sel->groups, &t);
	run_table(mp_checks, mp_checks_count, sel->groups, &t);
	run_table(pvpmu_checks, pvpmu_checks_count, sel->groups, &t);
	say("vpmu-test: %u passed, %u failed, %u skipped\n", t.passed, t.failed,
	    t.skipped);
	end_vm(t.failed ? 1 : 0, sel->groups);
	return 0;
}
