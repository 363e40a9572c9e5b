// SPDX-License-Identifier: MIT
/*
 * printf.c: kvsnprintf, the formatter behind kprintf.
 *
 * Conversions %d %i %u %x %X %p %s %c %%; length modifiers hh h l ll z;
 * flags '0' and '-'; a field width ("*" too); a precision for %s only.
 * No floating point (guest code is built with -mgeneral-regs-only).
 */
#include "kernel.h"

#include <stdbool.h>

struct out {
	char *buf;
	size_t size;
	size_t len; /* bytes the full output needs, like snprintf */
};

struct spec {
	int width;
	int prec; /* -1: none */
	bool zero;
	bool left;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/*
 * Append (n) bytes of (s). Runs are copied with one memcpy (rep movsb):
 * ring-0 code is emulated instruction by instruction on the PVM hosts.
 */
static void put_run(struct out *o, const char *s, size_t n)
{
	size_t room;

	if (o->len + 1 < o->size) {
		room = o->size - 1 - o->len;
		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

static void put_str(struct out *o, const char *s, const struct spec *sp)
{
	size_t n;

	if (!s)
		s = "(null)";
	n = sp->prec >= 0 ? strnlen(s, (size_t)sp->prec) : strlen(s);
	if (!sp->left)
		pad(o, ' ', sp->width - (int)n);
	put_run(o, s, n);
	if (sp->left)
		pad(o, ' ', sp->width - (int)n);
}

static void put_num(struct out *o, uint64_t v, bool neg, unsigned int base,
		    bool upper, const struct spec *sp)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	char *p = tmp + sizeof(tmp);
	int n, fill;

	do {
		*--p = digits[v % base];
		v /= base;
	} while (v);
	n    = (int)(tmp + sizeof(tmp) - p);
	fill = sp->width - n - (neg ? 1 : 0);
	if (!sp->left && !sp->zero)
		pad(o, ' ', fill);
	if (neg)
		put(o, '-');
	if (!sp->left && sp->zero)
		pad(o, '0', fill);
	put_run(o, p, (size_t)n);
	if (sp->left)
		pad(o, ' ', fill);
}

/* Parse flags, width and precision at (*fmt); advance past them. */
static void parse_spec(const char **fmt, va_list *ap, struct spec *sp)
{
	const char *f = *fmt;

	*sp = (struct spec){.prec = -1};
	for (;; f++) {
		if (*f == '0')
			sp->zero = true;
		else if (*f == '-')
			sp->left = true;
		else
			break;
	}
	if (*f == '*') {
		sp->width = va_arg(*ap, int);
		f++;
	}
	while (*f >= '0' && *f <= '9')
		sp->width = sp->width * 10 + (*f++ - '0');
	if (*f == '.') {
		f++;
		sp->prec = 0;
		if (*f == '*') {
			sp->prec = va_arg(*ap, int);
			f++;
		}
		while (*f >= '0' && *f <= '9')
			sp->prec = sp->prec * 10 + (*f++ - '0');
	}
	*fmt = f;
}

/* Length modifier at (*fmt): the argument size in bytes (4 or 8). */
static int parse_length(const char **fmt)
{
	const char *f = *fmt;
	int size      = 4;

	while (*f == 'h')
		f++;
	if (*f == 'l') {
		size = 8;
		if (*++f == 'l')
			f++;
	} else if (*f == 'z') {
		size = 8;
		f++;
	}
	*fmt = f;
	return size;
}

static void convert(struct out *o, char c, int size, const struct spec *sp,
		    va_list *ap)
{
	uint64_t u;
	int64_t s;

	switch (c) {
	case 'd':
	case 'i':
		s = size == 8 ? va_arg(*ap, int64_t) : va_arg(*ap, int);
		u = s < 0 ? -(uint64_t)s : (uint64_t)s;
		put_num(o, u, s < 0, 10, false, sp);
		break;
	case 'u':
	case 'x':
	case 'X':
		u = size == 8 ? va_arg(*ap, uint64_t)
			      : va_arg(*ap, unsigned int);
		put_num(o, u, false, c == 'u' ? 10 : 16, c == 'X', sp);
		break;
	case 'p':
		put(o, '0');
		put(o, 'x');
		put_num(o, (uintptr_t)va_arg(*ap, void *), false, 16, false,
			sp);
		break;
	case 's':
		put_str(o, va_arg(*ap, const char *), sp);
		break;
	case 'c':
		put(o, (char)va_arg(*ap, int));
		break;
	case '%':
		put(o, '%');
		break;
	default: /* unknown: show it rather than guess */
		put(o, '%');
		put(o, c);
		break;
	}
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = {.buf = buf, .size = size};
	struct spec sp;
	const char *lit;
	va_list args;
	int len;

	va_copy(args, ap);
	while (*fmt) {
		if (*fmt != '%') {
			for (lit = fmt; *fmt && *fmt != '%'; fmt++)
				;
			put_run(&o, lit, (size_t)(fmt - lit));
			continue;
		}
		fmt++;
		parse_spec(&fmt, &args, &sp);
		len = parse_length(&fmt);
		if (!*fmt)
			break;
		convert(&o, *fmt++, len, &sp, &args);
	}
	va_end(args);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

size_t kvsnprintf_cut(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = kvsnprintf(buf, size, fmt, ap);

	if (n > (int)size - 1)
		n = (int)size - 1;
	return (size_t)n;
}

/*
 * Ring 3 formats with this same code (user.h): it is pure computation, so
 * its entry points are aliases rather than copies.
 */
int uvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((alias("kvsnprintf")));
int usnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((alias("ksnprintf")));
