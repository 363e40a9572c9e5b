// SPDX-License-Identifier: MIT
/*
 * tool_bare.c: the tools' platform (tool.h) on the minimal guest kernel:
 * ring 3 of one vCPU, the console, the TSC, the kernel's notification
 * vector, a shared page of its own and the image's own symbol table. It
 * has no processes and no files: a PROGRAM or an output file is refused.
 */
#include "pvpmu_hc.h"
#include "tool_bare.h"

int tool_ring0_detect = -PVPMU_EAGAIN;
struct pvpmu_features tool_ring0_features;
const char tool_notify_how[] = "vector";

static unsigned int bare_vcpu;
static struct pvpmu_shared_page bare_page __attribute__((aligned(4096)));
static int bare_page_on;

/* The console is the one stream: reports and diagnostics interleave. */
int tool_vprintf(enum tool_stream to, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = uvsnprintf(buf, sizeof(buf), fmt, ap);

	(void)to;
	user_write(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	return n;
}

int tool_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return uvsnprintf(buf, size, fmt, ap);
}

uint64_t tool_cpu_khz(void)
{
	return user_boot_info()->tsc_khz;
}

/* Without a TSC frequency in the boot info, ticks are taken for ns. */
uint64_t tool_now_ns(void)
{
	uint64_t khz = tool_cpu_khz();

	return khz ? pvpmu_muldiv(rdtsc(), 1000000, khz) : rdtsc();
}

void tool_sleep_ns(uint64_t ns)
{
	tool_spin_ns(ns);
}

void tool_target_self(struct tool_target *t)
{
	*t = (struct tool_target){.ctx_flags        = PFM_FL_SYSTEM_WIDE,
				  .load_pid         = bare_vcpu,
				  .go               = -1,
				  .vcpu             = bare_vcpu,
				  .has_builtin_work = 1};
}

int tool_target_spawn(const char *tool, struct tool_target *t, int close_fd)
{
	(void)t;
	(void)close_fd;
	tool_eprintf("%s: the bare guest runs no PROGRAM: it measures its own "
		     "workload\n",
		     tool);
	return 1;
}

int tool_target_go(const char *tool, struct tool_target *t)
{
	(void)tool;
	(void)t;
	return 0;
}

int tool_target_wait(const char *tool, struct tool_target *t, int block)
{
	(void)tool;
	(void)t;
	(void)block;
	return 1;
}

void tool_target_kill(struct tool_target *t)
{
	(void)t;
}

int tool_target_exit_status(const struct tool_target *t)
{
	return t->status;
}

int tool_shared_open(const struct pvpmu_shared_page **page)
{
	int ret = pvpmu_shared_attach(&bare_page);

	bare_page_on = !ret;
	*page        = &bare_page;
	return ret;
}

/* The VMM publishes the page at an exit, before handling it. */
int tool_shared_publish(void)
{
	return pvpmu_hc_nop(pvpmu_driver());
}

void tool_shared_close(void)
{
	if (bare_page_on)
		pvpmu_shared_attach(0);
	bare_page_on = 0;
}

int tool_pmd_live(int fd, unsigned int pmd, uint64_t *value)
{
	pfarg_pmd_t d = {.reg_num = (pvpmu_u16)pmd};
	struct pvpmu_shared_times t;

	if (!bare_page_on ||
	    pvpmu_shared_read(&bare_page, fd, &d, 1, pvpmu_rdtsc(), &t) ||
	    !t.active)
		return 0;
	*value = d.reg_value;
	return 1;
}

int tool_notify_open(void)
{
	return pvpmu_set_vector(TOOL_NOTIFY_VECTOR);
}

uint64_t tool_notify_count(void)
{
	return user_notify_count(bare_vcpu);
}

void tool_notify_close(void)
{
	pvpmu_set_vector(0);
}

int tool_raw_open(const char *path)
{
	(void)path;
	return -PVPMU_ENOSYS;
}

void tool_raw_sample(const struct pfm_default_smpl_entry *e)
{
	(void)e;
}

int tool_raw_close(void)
{
	return 0;
}

static void print_features(const char *tool, const char *where,
			   const struct pvpmu_features *f)
{
	tool_printf("%s: cpuid (%s): vpmu ABI %u, features 0x%x (hypercall "
		    "%s, pfm %s, shared page %s), doorbells 0x%x+%u\n",
		    tool, where, f->abi, f->features,
		    f->features & PVPMU_FEAT_HYPERCALL ? "yes" : "no",
		    f->features & PVPMU_FEAT_PFM ? "yes" : "no",
		    f->features & PVPMU_FEAT_SHARED ? "yes" : "no",
		    f->port_base, f->hc_max);
}

/*
 * vpmu's CPUID leaves, as ring 0 saw them at boot (tool_ring0.c) and as
 * ring 3 sees them: on the PVM development hosts the host answers ring-3
 * CPUID itself (KVM's signature), so ring 3 falls back to the boot info.
 */
int tool_show_platform(const char *tool)
{
	const struct pvpmu_boot_info *bi = user_boot_info();
	struct pvpmu_features f;
	int ret;

	tool_printf("%s: vcpu %u\n", tool, bare_vcpu);
	if (tool_ring0_detect == 0)
		print_features(tool, "ring 0", &tool_ring0_features);
	else
		tool_printf("%s: cpuid (ring 0): %s\n", tool,
			    pvpmu_strerror(tool_ring0_detect));
	ret = pvpmu_detect(&f);
	if (!ret) {
		print_features(tool, "ring 3", &f);
		return 0;
	}
	if (ret == -PVPMU_ENODEV && bi->magic == PVPMU_BOOT_MAGIC) {
		tool_printf("%s: cpuid (ring 3): no vpmu leaves visible; boot "
			    "info: vpmu ABI %u, %u vcpus, tsc %llu kHz\n",
			    tool, bi->abi, bi->nr_vcpus,
			    (unsigned long long)bi->tsc_khz);
		return 0;
	}
	return tool_err(tool, "cpuid", ret);
}

int64_t tool_driver_hypercalls(int fd)
{
	(void)fd;
	return -1;
}

uint64_t tool_mixed(unsigned int rounds, uint64_t spin, unsigned int calls)
{
	uint64_t x = 0;
	unsigned int r, c;

	for (r = 0; r < rounds; r++) {
		x ^= tool_spin(spin + r);
		for (c = 0; c < calls; c++)
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
	}
	return x;
}

int tool_bare_run(unsigned int vcpu, int (*main)(int, char **), int argc,
		  char **argv)
{
	bare_vcpu = vcpu;
	return main(argc, argv);
}

void tool_bare_vm_name(char *buf, size_t size)
{
	const struct pvpmu_boot_info *bi = user_boot_info();
	size_t i;

	for (i = 0; i + 1 < size && i < sizeof(bi->name) && bi->name[i]; i++)
		buf[i] = (char)bi->name[i];
	buf[i] = '\0';
}
