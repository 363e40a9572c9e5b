// SPDX-License-Identifier: MIT
/*
 * out.c: the init's output. nolibc's printf writes a line in several
 * write(2) calls, which kernel messages on the same console can split;
 * here each line is formatted into a buffer and written at once.
 */
#include "init.h"

struct buf {
	char *p;
	unsigned long size;
	unsigned long len;
};

static void put_c(struct buf *b, char c)
{
	if (b->len + 1 < b->size)
		b->p[b->len] = c;
	b->len++;
}

static void put_s(struct buf *b, const char *s)
{
	while (*s)
		put_c(b, *s++);
}

/* Unsigned number in base 10 or 16, at least `width` digits (0-padded). */
static void put_u(struct buf *b, unsigned long long v, unsigned int base,
		  unsigned int width)
{
	char tmp[24];
	unsigned int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n < width && n < sizeof(tmp))
		tmp[n++] = '0';
	while (n)
		put_c(b, tmp[--n]);
}

static unsigned long long arg_u(va_list *ap, unsigned int longs)
{
	if (longs >= 2)
		return va_arg(*ap, unsigned long long);
	if (longs == 1)
		return va_arg(*ap, unsigned long);
	return va_arg(*ap, unsigned int);
}

static long long arg_d(va_list *ap, unsigned int longs)
{
	if (longs >= 2)
		return va_arg(*ap, long long);
	if (longs == 1)
		return va_arg(*ap, long);
	return va_arg(*ap, int);
}

static void put_signed(struct buf *b, long long v, unsigned int width)
{
	if (v < 0) {
		put_c(b, '-');
		put_u(b, 0ULL - (unsigned long long)v, 10, width);
	} else {
		put_u(b, (unsigned long long)v, 10, width);
	}
}

/* One conversion; `f` points after '%'. Returns the first char after it. */
static const char *conv(struct buf *b, const char *f, va_list *ap)
{
	unsigned int width = 0, longs = 0;

	while (*f >= '0' && *f <= '9')
		width = width * 10 + (unsigned int)(*f++ - '0');
	while (*f == 'l') {
		longs++;
		f++;
	}
	switch (*f) {
	case 'd':
		put_signed(b, arg_d(ap, longs), width);
		break;
	case 'u':
		put_u(b, arg_u(ap, longs), 10, width);
		break;
	case 'x':
		put_u(b, arg_u(ap, longs), 16, width);
		break;
	case 's':
		put_s(b, va_arg(*ap, const char *));
		break;
	case 'c':
		put_c(b, (char)va_arg(*ap, int));
		break;
	case '%':
		put_c(b, '%');
		break;
	default:
		put_c(b, '?');
		break;
	}
	return *f ? f + 1 : f;
}

int fmt_v(char *p, unsigned long size, const char *fmt, va_list ap)
{
	struct buf b = {.p = p, .size = size, .len = 0};
	va_list aq;

	va_copy(aq, ap);
	while (*fmt) {
		if (*fmt == '%')
			fmt = conv(&b, fmt + 1, &aq);
		else
			put_c(&b, *fmt++);
	}
	va_end(aq);
	if (size)
		p[b.len < size ? b.len : size - 1] = '\0';
	return (int)b.len;
}

void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_v(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	sys_write(1, line, (unsigned long)n);
}

void detail(struct report *r, const char *fmt, ...)
{
	unsigned long room;
	va_list ap;
	int n;

	if (r->len && r->len + 1 < sizeof(r->text))
		r->text[r->len++] = ' ';
	room = sizeof(r->text) - r->len;
	va_start(ap, fmt);
	n = fmt_v(r->text + r->len, room, fmt, ap);
	va_end(ap);
	r->len += (unsigned long)n < room ? (unsigned long)n : room - 1;
}

static const char *errno_name(long err)
{
	switch (err) {
	case 1:
		return "EPERM";
	case 2:
		return "ENOENT";
	case 9:
		return "EBADF";
	case 13:
		return "EACCES";
	case 14:
		return "EFAULT";
	case 16:
		return "EBUSY";
	case 19:
		return "ENODEV";
	case 22:
		return "EINVAL";
	case 38:
		return "ENOSYS";
	case 95:
		return "EOPNOTSUPP";
	default:
		return "?";
	}
}

enum result fail_errno(struct report *r, const char *what, long ret)
{
	detail(r, "%s failed: errno %ld (%s)", what, -ret, errno_name(-ret));
	return RES_FAIL;
}
