// SPDX-License-Identifier: MIT
/*
 * ctl_utf8.c: UTF-8 of the control protocol (see ctl_proto.h). Requests
 * come from any local process with the VM's uid and json-c passes string
 * bytes through unchecked, so the protocol checks requests and cleans what
 * it sends: a reply is always valid UTF-8 JSON, whatever it echoes.
 */
#include "ctl_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* U+FFFD REPLACEMENT CHARACTER, for bytes that are not UTF-8. */
static const char replacement[] = "\xef\xbf\xbd";

/*
 * Bytes of the character (s, n) starts with: its length when it is whole
 * and valid (RFC 3629 table 3: no overlong form, no surrogate, at most
 * U+10FFFF); 0 when it is invalid; -1 when (n) ends in the middle of a
 * character that could still be valid.
 */
static int char_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* The second byte's range excludes overlongs and surrogates. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return len;
}

/*
 * Bytes of ASCII (s, n) starts with, 8 at a time: requests and replies
 * are almost all ASCII, and every reply is checked before it is sent.
 */
static size_t ascii_run(const unsigned char *s, size_t n)
{
	size_t i = 0;
	uint64_t w;

	while (n - i >= sizeof(w)) {
		memcpy(&w, s + i, sizeof(w));
		if (w & 0x8080808080808080ULL)
			break;
		i += sizeof(w);
	}
	while (i < n && s[i] < 0x80)
		i++;
	return i;
}

size_t vmm_ctl_utf8_check(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i               = 0;
	int n;

	for (;;) {
		i += ascii_run(u + i, len - i);
		if (i == len || (n = char_len(u + i, len - i)) <= 0)
			return i;
		i += (size_t)n;
	}
}

int vmm_ctl_utf8_prefix(const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strnlen(s, max), i = 0;
	int n;

	while (i < len) {
		n = char_len(u + i, len - i);
		if (n < 0 && len == max)
			break; /* a character the limit cuts: left out whole */
		i += n > 0 ? (size_t)n : 1; /* an invalid byte goes alone */
	}
	return (int)i;
}

char *vmm_ctl_utf8_clean(const char *s, size_t len, size_t *out_len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;
	char *out;
	int n;

	/* Each invalid byte becomes three: the most this can grow. */
	out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	while (i < len) {
		n = char_len(u + i, len - i);
		if (n < 0)
			break; /* cut short at the end: dropped */
		if (n == 0) {
			memcpy(out + o, replacement, 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, (size_t)n);
		o += (size_t)n;
		i += (size_t)n;
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}
