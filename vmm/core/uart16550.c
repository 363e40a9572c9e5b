// SPDX-License-Identifier: MIT
/*
 * uart16550.c: an 8250/16550A-compatible UART at COM1.
 *
 * Transmit is immediate: THR writes go straight to the console file, so
 * LSR always reports THRE|TEMT. Every register a Linux early console or the
 * 8250 probe touches (divisor latch, LCR, MCR with loopback, IIR/FCR, SCR,
 * MSR) reads back what a 16550A would answer.
 *
 * Interrupts (when the VM gives the UART a line, Linux guests: IRQ 4):
 * "received data available" while the receive buffer holds bytes and IER
 * bit 0 is set; "THR empty" once THR has been written (or IER bit 1 set
 * with THR empty) until IIR reports it or THR is written again, as on the
 * 16550A. IIR reports the highest-priority one. Console input comes from a
 * thread reading the VMM's standard input (vmm_uart_start_input); on a
 * terminal it is switched to non-canonical, no-echo mode while the VM
 * runs (Ctrl-C still stops the VMM).
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define UART_RBR_THR 0
#define UART_IER     1
#define UART_IIR_FCR 2
#define UART_LCR     3
#define UART_MCR     4
#define UART_LSR     5
#define UART_MSR     6
#define UART_SCR     7

#define LCR_DLAB    0x80
#define IER_RDI     0x01
#define IER_THRI    0x02
#define IIR_THRI    0x02
#define IIR_RDI     0x04
#define LSR_DR      0x01
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

static struct termios saved_tty;
static bool tty_saved;

static void stop_input(struct vmm_uart *uart)
{
	if (!uart->has_input_thread)
		return;
	(void)!write(uart->stop_fd[1], "", 1);
	pthread_join(uart->input_thread, NULL);
	close(uart->stop_fd[0]);
	close(uart->stop_fd[1]);
	uart->has_input_thread = false;
	if (tty_saved)
		tcsetattr(uart->input_fd, TCSANOW, &saved_tty);
	tty_saved = false;
}

void vmm_uart_destroy(struct vmm_uart *uart)
{
	stop_input(uart);
	if (uart->out)
		fflush(uart->out);
	pthread_mutex_destroy(&uart->lock);
}

/* The interrupt the UART asserts now (IIR encoding), under (lock). */
static uint8_t pending_iir(const struct vmm_uart *uart)
{
	if ((uart->ier & IER_RDI) && uart->rx_count)
		return IIR_RDI;
	if ((uart->ier & IER_THRI) && uart->thre_pending)
		return IIR_THRI;
	return IIR_NO_INT;
}

/* Drive the line to what is pending, under (lock). */
static void update_irq(struct vmm_uart *uart)
{
	bool level = pending_iir(uart) != IIR_NO_INT;

	if (!uart->irq || level == uart->irq_level)
		return;
	uart->irq_level = level;
	uart->irq(uart->irq_opaque, level);
}

static uint8_t rx_pop(struct vmm_uart *uart)
{
	uint8_t c;

	if (!uart->rx_count)
		return 0;
	c             = uart->rx[uart->rx_head];
	uart->rx_head = (uart->rx_head + 1) % VMM_UART_RX_SIZE;
	uart->rx_count--;
	return c;
}

static void rx_push(struct vmm_uart *uart, const uint8_t *buf, size_t n)
{
	size_t i;

	pthread_mutex_lock(&uart->lock);
	for (i = 0; i < n; i++) {
		if (uart->rx_count == VMM_UART_RX_SIZE) {
			uart->rx_dropped += n - i;
			break;
		}
		uart->rx[(uart->rx_head + uart->rx_count++) %
			 VMM_UART_RX_SIZE] = buf[i];
	}
	update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
}

static void *input_thread(void *arg)
{
	struct vmm_uart *uart = arg;
	struct pollfd p[2]    = {{.fd = uart->input_fd, .events = POLLIN},
				 {.fd = uart->stop_fd[0], .events = POLLIN}};
	uint8_t buf[64];
	ssize_t n;

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		n = read(uart->input_fd, buf, sizeof(buf));
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break; /* end of input: the guest keeps running */
		if (n > 0)
			rx_push(uart, buf, n);
	}
	return NULL;
}

static void terminal_raw(int fd)
{
	struct termios t;

	if (!isatty(fd) || !isatty(STDOUT_FILENO) || tcgetattr(fd, &t))
		return;
	saved_tty = t;
	tty_saved = true;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_iflag &= ~ICRNL;
	t.c_cc[VMIN]  = 1;
	t.c_cc[VTIME] = 0;
	tcsetattr(fd, TCSANOW, &t);
}

int vmm_uart_start_input(struct vmm_uart *uart, int fd)
{
	sigset_t all, old;
	int ret;

	if (uart->has_input_thread)
		return -EBUSY;
	if (pipe2(uart->stop_fd, O_CLOEXEC) < 0)
		return -errno;
	uart->input_fd = fd;
	/*
	 * The thread takes no signals: it starts before the VMM blocks
	 * SIGINT/SIGTERM for its signal waiter, and a process-directed signal
	 * delivered here would end the VMM without its clean stop.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&uart->input_thread, NULL, input_thread, uart);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		close(uart->stop_fd[0]);
		close(uart->stop_fd[1]);
		return -EAGAIN;
	}
	uart->has_input_thread = true;
	terminal_raw(fd);
	return 0;
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
		if (dlab) {
			uart->dll = val;
			break;
		}
		if (!(uart->mcr & MCR_LOOP) && uart->out) {
			fputc(val, uart->out);
			if (val == '\n')
				fflush(uart->out);
		}
		uart->thre_pending = true; /* sent at once: THR empty again */
		break;
	case UART_IER:
		if (dlab) {
			uart->dlm = val;
			break;
		}
		if ((val & IER_THRI) && !(uart->ier & IER_THRI))
			uart->thre_pending = true;
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
	uint8_t iir;

	switch (reg) {
	case UART_RBR_THR:
		return dlab ? uart->dll : rx_pop(uart);
	case UART_IER:
		return dlab ? uart->dlm : uart->ier;
	case UART_IIR_FCR:
		iir = pending_iir(uart);
		if (iir == IIR_THRI) /* reading IIR clears THRE (16550A) */
			uart->thre_pending = false;
		return iir | ((uart->fcr & FCR_ENABLE) ? IIR_FIFO_ON : 0);
	case UART_LCR:
		return uart->lcr;
	case UART_MCR:
		return uart->mcr;
	case UART_LSR:
		return LSR_THRE | LSR_TEMT | (uart->rx_count ? LSR_DR : 0);
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
	update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
	return 0;
}
