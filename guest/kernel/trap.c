// SPDX-License-Identifier: MIT
/*
 * trap.c: the IDT, exception dispatch, the exception table and the
 * fault-safe MSR accessors.
 *
 * One IDT is shared by all vCPUs. Every vector has a stub (entry.S); an
 * event without a registered handler is first looked up in the exception
 * table (ring-0 faults of instructions that expect to fault) and otherwise
 * dumped to the console, ending the VM with KERNEL_EXIT_TRAP + vector.
 */
#include "kernel.h"

#include <stdbool.h>

#define IDT_NR_GATES 256

/* 64-bit IDT gate descriptor (SDM vol. 3, 6.14.1). */
struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr; /* P, DPL, type */
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
};
_Static_assert(sizeof(struct idt_gate) == 16, "IDT gate is 16 bytes");

/* entry.S pushes exactly this; 16-byte multiple keeps C calls aligned. */
_Static_assert(sizeof(struct trap_frame) == 176, "trap frame layout");
_Static_assert(offsetof(struct trap_frame, rsi) == 8 * TRAP_REG_RSI,
	       "TRAP_REG_RSI");
_Static_assert(offsetof(struct trap_frame, rax) == 8 * TRAP_REG_RAX,
	       "TRAP_REG_RAX");

#define TRAP_STUB_LEN  16   /* entry.S */
#define GATE_INTERRUPT 0x8e /* present, DPL 0, 64-bit interrupt gate */

/* Built at assembly time in entry.S. */
extern struct idt_gate idt_table[IDT_NR_GATES];
extern const char trap_stubs[];
extern const struct extable_entry __extable_start[], __extable_end[];

static trap_handler_fn_t trap_handlers[IDT_NR_GATES];

static const char *const exception_names[32] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM",
	"#DF", "CSO", "#TS", "#NP", "#SS", "#GP", "#PF", "15",
	"#MF", "#AC", "#MC", "#XM", "#VE", "#CP", "22",  "23",
	"24",  "25",  "26",  "27",  "#HV", "#VC", "#SX", "31",
};

void trap_load(void)
{
	struct desc_ptr p = {
		.limit = sizeof(struct idt_gate) * IDT_NR_GATES - 1,
		.base  = (uintptr_t)idt_table,
	};

	lidt(&p);
}

void trap_set_gate(unsigned int vector, uint64_t addr, unsigned int dpl)
{
	struct idt_gate *g = &idt_table[vector & (IDT_NR_GATES - 1)];

	if (!addr)
		addr = (uintptr_t)trap_stubs + TRAP_STUB_LEN * vector;
	/* The image lies below 4 GiB: offset 63:32 stays 0. */
	g->offset_lo  = (uint16_t)addr;
	g->offset_mid = (uint16_t)(addr >> 16);
	g->type_attr  = GATE_INTERRUPT | (uint8_t)((dpl & 3) << 5);
}

int trap_register(unsigned int vector, trap_handler_fn_t fn)
{
	if (vector >= IDT_NR_GATES)
		return -1;
	__atomic_store_n(&trap_handlers[vector], fn, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Resume a fault listed in the exception table; true if done. Ring-3 code
 * may list its instructions too (user_outb_safe()): the table is part of
 * the image, like the code.
 */
static bool fixup(struct trap_frame *tf)
{
	const struct extable_entry *e;

	if (tf->vector >= 32)
		return false;
	for (e = __extable_start; e < __extable_end; e++) {
		if (e->fault_rip != tf->rip)
			continue;
		((uint64_t *)tf)[e->reg] = EXTABLE_FAULT | tf->vector;
		tf->rip                  = e->resume_rip;
		return true;
	}
	return false;
}

static noreturn void die(const struct trap_frame *tf)
{
	char buf[1024];
	int n;

	n = ksnprintf(buf, sizeof(buf),
		      "*** vcpu %u: unhandled %s %lu (%s) error 0x%lx cpl %lu\n"
		      "    rip %016lx cs %04lx rflags %016lx\n"
		      "    rsp %016lx ss %04lx cr2 %016lx\n"
		      "    rax %016lx rbx %016lx rcx %016lx rdx %016lx\n"
		      "    rsi %016lx rdi %016lx rbp %016lx r8  %016lx\n"
		      "    r9  %016lx r10 %016lx r11 %016lx r12 %016lx\n"
		      "    r13 %016lx r14 %016lx r15 %016lx\n",
		      this_cpu()->id,
		      tf->vector < 32 ? "exception" : "interrupt", tf->vector,
		      tf->vector < 32 ? exception_names[tf->vector] : "-",
		      tf->error_code, tf->cs & 3, tf->rip, tf->cs, tf->rflags,
		      tf->rsp, tf->ss, read_cr2(), tf->rax, tf->rbx, tf->rcx,
		      tf->rdx, tf->rsi, tf->rdi, tf->rbp, tf->r8, tf->r9,
		      tf->r10, tf->r11, tf->r12, tf->r13, tf->r14, tf->r15);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	console_write(buf, (size_t)n);
	guest_exit(KERNEL_EXIT_TRAP + (int)(tf->vector & 0x7f));
}

void trap_dispatch(struct trap_frame *tf)
{
	trap_handler_fn_t fn =
		__atomic_load_n(&trap_handlers[tf->vector], __ATOMIC_ACQUIRE);

	if (fn) {
		fn(tf);
		return;
	}
	if (fixup(tf))
		return;
	die(tf);
}

int guest_rdmsr_safe(uint32_t msr, uint64_t *val)
{
	uint64_t vec;
	uint32_t lo, hi;

	/* On #GP, RDMSR leaves EDX:EAX undefined (SDM vol. 2, RDMSR). */
	__asm__ __volatile__("xor %%esi, %%esi\n"
			     "1:\trdmsr\n"
			     "2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
			     : "=&S"(vec), "=a"(lo), "=d"(hi)
			     : "c"(msr), [reg] "i"(TRAP_REG_RSI)
			     : "memory");
	if (vec)
		return (int)(vec & 0xff);
	*val = ((uint64_t)hi << 32) | lo;
	return 0;
}

int guest_wrmsr_safe(uint32_t msr, uint64_t val)
{
	uint64_t vec;

	__asm__ __volatile__(
		"xor %%esi, %%esi\n"
		"1:\twrmsr\n"
		"2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
		: "=&S"(vec)
		: "c"(msr), "a"((uint32_t)val),
		  "d"((uint32_t)(val >> 32)), [reg] "i"(TRAP_REG_RSI)
		: "memory");
	return (int)(vec & 0xff);
}
