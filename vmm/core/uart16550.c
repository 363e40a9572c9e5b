// SPDX-License-Identifier: MIT
/*
 * uart16550.c: an 8250/16550A-compatible UART at COM1 for polled output.
 *
 * Transmit is immediate: THR writes go straight to the console file, so
 * LSR always reports THRE|TEMT. There is no receive path and no interrupt
 * is ever raised, but every register a Linux early console or the 8250
 * probe touches (divisor latch, LCR, MCR with loopback, IIR/FCR, SCR, MSR)
 * reads back what a 16550A would answer.
 */
#include "vmm_core_priv.h"

#include <string.h>

#define UART_RBR_THR 0
#define UART_IER     1
#define UART_IIR_FCR 2
#define UART_LCR     3
#define UART_MCR     4
#define UART_LSR     5
#define UART_MSR     6
#define UART_SCR     7

#define LCR_DLAB    0x80
#define LSR_THRE    0x20
#define LSR_TEMT    0x40
#define MCR_LOOP    0x10
#define IIR_NO_INT  0x01
#define IIR_FIFO_ON 0xc0
#define FCR_ENABLE  0x01
#define MSR_CTS     0x10
#define MSR_DSR     0x20
#define MSR_DCD     0x80

void vmm_uart_init(struct vmm_uart *uart, FILE *out)
{
	memset(uart, 0, sizeof(*uart));
	pthread_mutex_init(&uart->lock, NULL);
	uart->out = out;
	uart->dll = 0x0c; /* 9600 baud */
}

void vmm_uart_destroy(struct vmm_uart *uart)
{
	if (uart->out)
		fflush(uart->out);
	pthread_mutex_destroy(&uart->lock);
}

/* Modem status: in loopback, MCR's DTR/RTS/OUT1/OUT2 feed DSR/CTS/RI/DCD. */
static uint8_t modem_status(const struct vmm_uart *uart)
{
	uint8_t m = uart->mcr;

	if (!(uart->mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	return ((m & 0x01) << 5) | ((m & 0x02) << 3) | ((m & 0x04) << 4) |
	       ((m & 0x08) << 4);
}

static void uart_write(struct vmm_uart *uart, unsigned int reg, uint8_t val)
{
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case UART_RBR_THR:
		if (dlab)
			uart->dll = val;
		else if (!(uart->mcr & MCR_LOOP) && uart->out) {
			fputc(val, uart->out);
			if (val == '\n')
				fflush(uart->out);
		}
		break;
	case UART_IER:
		if (dlab)
			uart->dlm = val;
		else
			uart->ier = val & 0x0f;
		break;
	case UART_IIR_FCR:
		uart->fcr = val;
		break;
	case UART_LCR:
		uart->lcr = val;
		break;
	case UART_MCR:
		uart->mcr = val & 0x1f;
		break;
	case UART_SCR:
		uart->scr = val;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
}

static uint8_t uart_read(struct vmm_uart *uart, unsigned int reg)
{
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case UART_RBR_THR:
		return dlab ? uart->dll : 0;
	case UART_IER:
		return dlab ? uart->dlm : uart->ier;
	case UART_IIR_FCR:
		return IIR_NO_INT |
		       ((uart->fcr & FCR_ENABLE) ? IIR_FIFO_ON : 0);
	case UART_LCR:
		return uart->lcr;
	case UART_MCR:
		return uart->mcr;
	case UART_LSR:
		return LSR_THRE | LSR_TEMT;
	case UART_MSR:
		return modem_status(uart);
	default:
		return uart->scr;
	}
}

int vmm_uart_pio(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		 void *data, unsigned int size, void *opaque)
{
	struct vmm_uart *uart = opaque;
	unsigned int reg      = port - PVPMU_PORT_COM1;
	uint8_t *bytes        = data;

	(void)vcpu;
	/* The registers are 8 bits wide: a wider read sees ones above. */
	if (!is_write && size > 1)
		memset(data, 0xff, size);
	pthread_mutex_lock(&uart->lock);
	if (is_write)
		uart_write(uart, reg, bytes[0]);
	else
		bytes[0] = uart_read(uart, reg);
	pthread_mutex_unlock(&uart->lock);
	return 0;
}
