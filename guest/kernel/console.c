// SPDX-License-Identifier: MIT
/*
 * console.c: polled output on the 16550 UART at PVPMU_PORT_COM1, and polled
 * input (console_read: what the VMM received on its standard input).
 *
 * Every port access is a VM exit (~7 us on the PVM hosts) and every ring-0
 * instruction is emulated, so output is written in FIFO-sized bursts: one
 * LSR read, and once THRE says the transmitter (and with FIFOs on, the
 * whole 16-byte FIFO) is empty, one `rep outsb` of up to 16 bytes. That is
 * 17 exits per 16 bytes instead of 32, and no per-byte guest loop. The
 * VMM's UART always reports THRE, so the poll loop runs once.
 */
#include "kernel.h"

#define UART_RBR       0
#define UART_THR       0
#define UART_IER       1
#define UART_FCR       2
#define UART_LSR       5
#define LSR_DR         0x01
#define LSR_THRE       0x20
#define FCR_FIFO_RESET 0x07 /* enable FIFOs, clear RX and TX */
#define UART_FIFO_SIZE 16
#define LSR_POLL_MAX   1000 /* then write anyway rather than hang */

static struct spinlock console_lock;

void console_init(void)
{
	outb(PVPMU_PORT_COM1 + UART_IER, 0);
	outb(PVPMU_PORT_COM1 + UART_FCR, FCR_FIFO_RESET);
}

static void uart_wait_thre(void)
{
	unsigned int i;

	for (i = 0; i < LSR_POLL_MAX; i++) {
		if (inb(PVPMU_PORT_COM1 + UART_LSR) & LSR_THRE)
			return;
		cpu_relax();
	}
}

static void uart_write(const char *s, size_t n)
{
	while (n) {
		size_t chunk = n < UART_FIFO_SIZE ? n : UART_FIFO_SIZE;

		uart_wait_thre();
		outsb(PVPMU_PORT_COM1 + UART_THR, s, chunk);
		s += chunk;
		n -= chunk;
	}
}

void console_write(const char *s, size_t n)
{
	/*
	 * A trap taken while this vCPU holds the lock (a fault inside
	 * kprintf) must still be able to print its dump.
	 */
	if (__atomic_load_n(&console_lock.owner, __ATOMIC_RELAXED) ==
	    this_cpu()->id + 1) {
		uart_write(s, n);
		return;
	}
	spin_lock(&console_lock);
	uart_write(s, n);
	spin_unlock(&console_lock);
}

int kprintf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = kvsnprintf_cut(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	console_write(buf, n);
	return (int)n;
}

size_t console_read(char *s, size_t n)
{
	size_t got = 0;

	while (got < n && (inb(PVPMU_PORT_COM1 + UART_LSR) & LSR_DR))
		s[got++] = (char)inb(PVPMU_PORT_COM1 + UART_RBR);
	return got;
}
