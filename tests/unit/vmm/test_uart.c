// SPDX-License-Identifier: MIT
/*
 * test_uart.c: the 16550's interrupts and console input without KVM
 * (Linux guests' ttyS0): THRE after a write and on enabling ETBEI, cleared
 * by reading IIR; received bytes from the input descriptor raise "data
 * available", set LSR.DR and come out of RBR in order; the line follows
 * what is pending (16550A data sheet: IIR priorities, ETBEI behaviour).
 * The input thread takes no process-directed signal (the VMM's signal waiter
 * thread must get SIGTERM, or the VMM dies without its clean stop).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm_core_priv.h"

#define COM1    PVPMU_PORT_COM1
#define REG_IER 1
#define REG_IIR 2
#define REG_LSR 5
#define LSR_DR  0x01

static struct vmm_uart uart;
static unsigned int edges, level;
static FILE *sink;

static void irq(void *opaque, bool on)
{
	(void)opaque;
	edges += on && !level;
	level = on;
}

static void setup(void)
{
	sink = fopen("/dev/null", "w");
	cr_assert(not(eq(ptr, sink, NULL)));
	vmm_uart_init(&uart, sink);
	uart.irq = irq;
	edges = level = 0;
}

static void teardown(void)
{
	vmm_uart_destroy(&uart);
	fclose(sink);
}

static uint8_t rd(unsigned int reg)
{
	uint8_t v = 0;

	vmm_uart_pio(NULL, COM1 + reg, false, &v, 1, &uart);
	return v;
}

static void wr(unsigned int reg, uint8_t v)
{
	vmm_uart_pio(NULL, COM1 + reg, true, &v, 1, &uart);
}

TestSuite(uart16550, .init = setup, .fini = teardown);

Test(uart16550, thre_interrupt_after_enable_and_each_write)
{
	cr_assert(eq(u8, rd(REG_IIR) & 0x0f, 0x01)); /* nothing pending */
	wr(REG_IER, 0x02);                           /* ETBEI, THR empty */
	cr_assert(eq(uint, level, 1));
	cr_assert(eq(u8, rd(REG_IIR) & 0x0f, 0x02)); /* THRE, and clears it */
	cr_assert(eq(uint, level, 0));
	wr(0, 'x'); /* sent at once: THR empty again */
	cr_assert(eq(uint, level, 1));
	cr_assert(eq(uint, edges, 2));
	wr(REG_IER, 0x00);
	cr_assert(eq(uint, level, 0));
}

Test(uart16550, console_input_raises_data_available_in_order)
{
	int p[2];
	unsigned int i;

	cr_assert(eq(int, pipe(p), 0));
	wr(REG_IER, 0x01); /* ERBFI */
	cr_assert(eq(int, vmm_uart_start_input(&uart, p[0]), 0));
	cr_assert(eq(long, write(p[1], "ls\n", 3), 3));
	for (i = 0; i < 500 && !(rd(REG_LSR) & LSR_DR); i++)
		usleep(1000);
	cr_assert(eq(u8, rd(REG_LSR) & LSR_DR, LSR_DR));
	cr_assert(eq(uint, level, 1));
	cr_assert(eq(u8, rd(REG_IIR) & 0x0f, 0x04));
	cr_assert(eq(u8, rd(0), 'l'));
	cr_assert(eq(u8, rd(0), 's'));
	cr_assert(eq(u8, rd(0), '\n'));
	cr_assert(eq(u8, rd(REG_LSR) & LSR_DR, 0));
	cr_assert(eq(uint, level, 0));
	close(p[1]); /* end of input: the thread ends, the UART stays */
	close(p[0]);
}

/*
 * In a child, as in the VMM: input starts, then SIGTERM is blocked for a
 * signal waiter (sigtimedwait here). 0 if the waiter got it; a child the
 * input thread let die ends by SIGTERM.
 */
static int sigterm_reaches_the_waiter(void)
{
	struct timespec ts = {.tv_sec = 10};
	sigset_t set;
	int p[2];

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	signal(SIGTERM, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* as at the VMM's start */
	if (pipe(p) || vmm_uart_start_input(&uart, p[0]))
		return 2;
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGTERM);
	return sigtimedwait(&set, NULL, &ts) == SIGTERM ? 0 : 3;
}

Test(uart16550, input_thread_takes_no_signals)
{
	pid_t pid = fork();
	int st;

	cr_assert(ge(int, pid, 0));
	if (pid == 0)
		_exit(sigterm_reaches_the_waiter());
	cr_assert(eq(int, waitpid(pid, &st, 0), pid));
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	cr_expect(eq(int, st, 0),
		  "child status %d (143: the input thread "
		  "took SIGTERM)",
		  st);
}
