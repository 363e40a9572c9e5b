// SPDX-License-Identifier: MIT
/*
 * tool.c: what the tools share on every platform (tool.h): workloads,
 * formatting without an FPU, options without libc.
 */
#include "tool.h"

volatile uint64_t tool_sink;

int tool_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = tool_vprintf(tool_out, fmt, ap);
	va_end(ap);
	return n;
}

int tool_eprintf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = tool_vprintf(tool_err_out, fmt, ap);
	va_end(ap);
	return n;
}

int tool_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = tool_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* One xorshift64 step per round: a dependent chain the CPU cannot skip. */
static inline __attribute__((always_inline)) uint64_t chain(uint64_t x,
							    uint64_t n)
{
	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) uint64_t tool_spin(uint64_t n)
{
	return chain(0x9e3779b97f4a7c15ULL, n);
}

void tool_spin_ns(uint64_t ns)
{
	uint64_t t0 = tool_now_ns();

	while (tool_now_ns() - t0 < ns)
		tool_sink = tool_spin(10000);
}

__attribute__((noinline)) uint64_t work_hot(uint64_t n)
{
	return chain(0x1234567ULL, 6 * n);
}

__attribute__((noinline)) uint64_t work_warm(uint64_t n)
{
	return chain(0x7654321ULL, 3 * n);
}

__attribute__((noinline)) uint64_t work_cold(uint64_t n)
{
	return chain(0xabcdefULL, n);
}

char *tool_u64(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	unsigned int n = 0, i = 0, digits;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	digits = n;
	while (n && i + 2 < size) {
		buf[i++] = tmp[--n];
		if (n && n % 3 == 0 && digits > 3)
			buf[i++] = ',';
	}
	buf[i] = '\0';
	return buf;
}

char *tool_fix2(char *buf, size_t size, uint64_t a, uint64_t b)
{
	uint64_t r;

	if (!b) {
		tool_snprintf(buf, size, "-");
		return buf;
	}
	r = pvpmu_muldiv(a, 100, b);
	if (pvpmu_muldiv(a, 1000, b) % 10 >= 5)
		r++;
	tool_snprintf(buf, size, "%llu.%02llu", (unsigned long long)(r / 100),
		      (unsigned long long)(r % 100));
	return buf;
}

char *tool_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		tool_snprintf(buf, size, "%llu.%03llu s",
			      (unsigned long long)(ns / 1000000000ULL),
			      (unsigned long long)(ns / 1000000 % 1000));
	else if (ns >= 1000000)
		tool_snprintf(buf, size, "%llu.%03llu ms",
			      (unsigned long long)(ns / 1000000),
			      (unsigned long long)(ns / 1000 % 1000));
	else
		tool_snprintf(buf, size, "%llu.%03llu us",
			      (unsigned long long)(ns / 1000),
			      (unsigned long long)(ns % 1000));
	return buf;
}

int tool_err(const char *tool, const char *what, int ret)
{
	tool_eprintf("%s: %s: %s (%d)\n", tool, what, pvpmu_strerror(ret), ret);
	return ret;
}

int tool_is_family(const struct pvpmu_event_desc *d)
{
	return d && PVPMU_EV_IS_FAMILY(d->code);
}

int tool_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* The entry of (c) in (spec): 0 if none, 1 flag, 2 takes an argument. */
static int opt_kind(const char *spec, char c)
{
	for (; *spec; spec++) {
		if (*spec == c && c != ':')
			return spec[1] == ':' ? 2 : 1;
	}
	return 0;
}

int tool_getopt(struct tool_opt *o, const char *tool, int argc,
		char *const *argv, const char *spec)
{
	const char *s = o->next;
	char c;
	int kind;

	if (!s || !*s) {
		if (o->ind >= argc || argv[o->ind][0] != '-' ||
		    !argv[o->ind][1])
			return -1;
		if (tool_streq(argv[o->ind], "--")) {
			o->ind++;
			return -1;
		}
		s = argv[o->ind++] + 1;
	}
	c       = *s++;
	o->next = s;
	kind    = opt_kind(spec, c);
	if (!kind) {
		tool_eprintf("%s: unknown option -%c\n", tool, c);
		return '?';
	}
	if (kind == 2) {
		o->next = 0;
		if (*s) {
			o->arg = s;
		} else if (o->ind < argc) {
			o->arg = argv[o->ind++];
		} else {
			tool_eprintf("%s: -%c needs an argument\n", tool, c);
			return '?';
		}
	}
	return c;
}

int tool_target_args(const char *tool, struct tool_target *t, int argc,
		     char **argv, int ind)
{
	tool_target_self(t);
	if (ind < argc) {
		t->argv = argv + ind;
		return 0;
	}
	if (t->has_builtin_work)
		return 0;
	tool_eprintf("%s: no PROGRAM given (%s -h)\n", tool, tool);
	return 1;
}

int tool_parse_u64(const char *s, uint64_t *v)
{
	unsigned int base = 10, d;
	uint64_t x        = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return -1;
		if (x > (UINT64_MAX - d) / base)
			return -1;
		x = x * base + d;
	}
	*v = x;
	return x ? 0 : -1;
}

int tool_usage(const char *usage, int asked)
{
	if (asked) {
		tool_printf("%s", usage);
		return 0;
	}
	tool_eprintf("%s", usage);
	return 1;
}
