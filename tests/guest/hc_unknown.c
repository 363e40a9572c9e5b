// SPDX-License-Identifier: MIT
/*
 * hc_unknown.c: the hypercall doorbell's error paths (pvpmu/abi.h, section
 * 5). An unused and the reserved number give -PVPMU_ENOSYS; PVPMU_HC_ECHO
 * answers ~in for a valid block, -PVPMU_EFAULT for a block outside guest
 * RAM (wholly, or straddling its end), and -PVPMU_EINVAL for a size below
 * the block's first version or a nonzero pad. The size rule (section 5.1):
 * a larger block from a newer guest is answered when its extra bytes are
 * zero (and the guest's tail is left alone), refused with -PVPMU_E2BIG
 * when they are not or when it is larger than a page. Exit 0 if every
 * answer is as expected, 1 otherwise.
 */
#include "kernel.h"
#include "pvpmu_hc.h"

#include <stdbool.h>

#define HC_UNUSED  63
#define ECHO_VALUE 0x0123456789abcdefULL

static struct pvpmu_hc_echo echo;

static bool expect(const char *what, long got, long want)
{
	kprintf("hc %-28s -> %ld%s (expected %ld)\n", what, got,
		got == want ? "" : " WRONG", want);
	return got == want;
}

static void echo_reset(uint32_t size, uint32_t pad0)
{
	echo = (struct pvpmu_hc_echo){
		.size = size, .pad0 = pad0, .in = ECHO_VALUE, .out = 0};
}

static bool test_echo(void)
{
	bool ok = true;
	long ret;

	echo_reset(sizeof(echo), 0);
	ret = pvpmu_hypercall(PVPMU_HC_ECHO, virt_to_gpa(&echo));
	ok &= expect("ECHO valid", ret, 0);
	kprintf("hc ECHO in 0x%016llx out 0x%016llx%s\n",
		(unsigned long long)echo.in, (unsigned long long)echo.out,
		echo.out == ~echo.in ? "" : " WRONG (want ~in)");
	ok &= echo.out == ~echo.in;

	echo_reset(8, 0);
	ret = pvpmu_hypercall(PVPMU_HC_ECHO, virt_to_gpa(&echo));
	ok &= expect("ECHO size 8", ret, -PVPMU_EINVAL);
	ok &= echo.out == 0;

	echo_reset(0, 0);
	ret = pvpmu_hypercall(PVPMU_HC_ECHO, virt_to_gpa(&echo));
	ok &= expect("ECHO size 0", ret, -PVPMU_EINVAL);

	echo_reset(sizeof(echo), 1);
	ret = pvpmu_hypercall(PVPMU_HC_ECHO, virt_to_gpa(&echo));
	ok &= expect("ECHO pad0 1", ret, -PVPMU_EINVAL);
	return ok;
}

/* ECHO as a newer guest would send it: 8 bytes the host does not know. */
struct echo_newer {
	struct pvpmu_hc_echo echo;
	uint64_t newer;
};
static struct echo_newer big;

static long echo_big(uint32_t size, uint64_t newer)
{
	big = (struct echo_newer){
		.echo  = {.size = size, .in = ECHO_VALUE},
		.newer = newer,
	};
	return pvpmu_hypercall(PVPMU_HC_ECHO, virt_to_gpa(&big));
}

static bool test_echo_sizes(void)
{
	bool ok = true;

	ok &= expect("ECHO 8 bytes larger, zero tail", echo_big(sizeof(big), 0),
		     0);
	ok &= big.echo.out == ~big.echo.in && big.newer == 0;
	ok &= expect("ECHO 8 bytes larger, nonzero tail",
		     echo_big(sizeof(big), 1), -PVPMU_E2BIG);
	ok &= big.echo.out == 0 && big.newer == 1;
	ok &= expect("ECHO size over a page",
		     echo_big(PVPMU_HC_BLOCK_MAX + 1, 0), -PVPMU_E2BIG);
	kprintf("hc ECHO sizes: answers and tails %s\n",
		ok ? "as expected" : "WRONG");
	return ok;
}

/* Request blocks at GPAs not (wholly) backed by RAM. */
static bool test_efault(const struct pvpmu_boot_info *bi)
{
	bool ok = true;
	long ret;

	ret = pvpmu_hypercall(PVPMU_HC_ECHO, 0xfffff000U);
	if (bi->mem_size <= 0xfffff000ULL)
		ok &= expect("ECHO gpa 0xfffff000", ret, -PVPMU_EFAULT);
	if (bi->mem_size < 0x100000000ULL) {
		ret = pvpmu_hypercall(PVPMU_HC_ECHO,
				      (uint32_t)bi->mem_size - 8);
		ok &= expect("ECHO gpa straddling RAM end", ret, -PVPMU_EFAULT);
	}
	return ok;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	bool ok = true;

	if (vcpu != 0)
		return;
	ok &= expect("63 (unused)", pvpmu_hypercall(HC_UNUSED, 0),
		     -PVPMU_ENOSYS);
	ok &= expect("0 (reserved)", pvpmu_hypercall(PVPMU_HC_RESERVED, 0),
		     -PVPMU_ENOSYS);
	ok &= expect("NOP", pvpmu_hypercall(PVPMU_HC_NOP, 0), 0);
	ok &= test_echo();
	ok &= test_echo_sizes();
	ok &= test_efault(bi);
	kprintf("hc_unknown: %s\n", ok ? "ok" : "FAILED");
	guest_exit(ok ? 0 : 1);
}
