/* strings.c: interposed memory and string functions (mem*, str*), reported
 * as range accesses; it owns those wrappers and hg_note, which buffers
 * their ranges. glibc's own code is not rewritten, so without these a memcpy
 * racing with a plain write would go unseen. The ranges are buffered like
 * the trampolines' accesses (no flush: these are hot). The real functions
 * come from dlsym; while dlsym itself runs (it may copy memory), simple
 * byte loops stand in.
 */
#define _GNU_SOURCE
#include "hgrt.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>


static __thread int hg_resolving __attribute__((tls_model("initial-exec")));

static void *resolve(const char *name)
{
	hg_resolving = 1;
	void *f = dlsym(RTLD_NEXT, name);
	hg_resolving = 0;
	return f;
}

/* hg_note buffers one range access made by a wrapped function. Calls from
 * inside libraries never flush (see hg_event). */
static void hg_note(const void *addr, size_t len, int flags, void *ra)
{
	struct hg_thread *t = len ? hg_bufferable() : NULL;
	if (!t)
		return;
	t->ranges++;
	t->bytes += len;
	uint64_t pc = hg_link_pc(ra);
	hg_event(t, (uint64_t)(uintptr_t)addr, HG_INFO(pc, 1, flags), len, pc != 0);
}

#define RA __builtin_return_address(0)

void *memcpy(void *dst, const void *src, size_t n)
{
	static void *(*real)(void *, const void *, size_t);
	if (!real) {
		if (hg_resolving) {
			for (size_t i = 0; i < n; i++)
				((char *)dst)[i] = ((const char *)src)[i];
			return dst;
		}
		real = resolve("memcpy");
	}
	hg_note(src, n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA);
	return real(dst, src, n);
}

void *memmove(void *dst, const void *src, size_t n)
{
	static void *(*real)(void *, const void *, size_t);
	if (!real) {
		if (hg_resolving) {
			char tmp[256];
			if (n <= sizeof tmp) {
				for (size_t i = 0; i < n; i++)
					tmp[i] = ((const char *)src)[i];
				for (size_t i = 0; i < n; i++)
					((char *)dst)[i] = tmp[i];
				return dst;
			}
		}
		real = resolve("memmove");
	}
	hg_note(src, n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA);
	return real(dst, src, n);
}

void *memset(void *dst, int c, size_t n)
{
	static void *(*real)(void *, int, size_t);
	if (!real) {
		if (hg_resolving) {
			for (size_t i = 0; i < n; i++)
				((char *)dst)[i] = (char)c;
			return dst;
		}
		real = resolve("memset");
	}
	hg_note(dst, n, HG_WRITE, RA);
	return real(dst, c, n);
}

size_t strlen(const char *s)
{
	static size_t (*real)(const char *);
	if (!real) {
		if (hg_resolving) {
			size_t n = 0;
			while (s[n])
				n++;
			return n;
		}
		real = resolve("strlen");
	}
	size_t n = real(s);
	hg_note(s, n + 1, HG_READ, RA);
	return n;
}

char *strcpy(char *dst, const char *src)
{
	static char *(*real)(char *, const char *);
	if (!real)
		real = resolve("strcpy");
	static size_t (*len)(const char *);
	if (!len)
		len = resolve("strlen");
	size_t n = len(src) + 1;
	hg_note(src, n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA);
	return real(dst, src);
}

int memcmp(const void *a, const void *b, size_t n)
{
	static int (*real)(const void *, const void *, size_t);
	if (!real) {
		if (hg_resolving) {
			for (size_t i = 0; i < n; i++)
				if (((const unsigned char *)a)[i] != ((const unsigned char *)b)[i])
					return ((const unsigned char *)a)[i] - ((const unsigned char *)b)[i];
			return 0;
		}
		real = resolve("memcmp");
	}
	hg_note(a, n, HG_READ, RA);
	hg_note(b, n, HG_READ, RA);
	return real(a, b, n);
}

int strcmp(const char *a, const char *b)
{
	static int (*real)(const char *, const char *);
	if (!real) {
		if (hg_resolving) {
			while (*a && *a == *b)
				a++, b++;
			return (unsigned char)*a - (unsigned char)*b;
		}
		real = resolve("strcmp");
	}
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	hg_note(a, i + 1, HG_READ, RA);
	hg_note(b, i + 1, HG_READ, RA);
	return real(a, b);
}

/* The bounded and concatenating forms. Lengths are measured with the real
 * strnlen/strlen, which record nothing. */
static size_t real_strnlen(const char *s, size_t n)
{
	static size_t (*f)(const char *, size_t);
	if (!f)
		f = resolve("strnlen");
	return f(s, n);
}

static size_t real_strlen(const char *s)
{
	static size_t (*f)(const char *);
	if (!f)
		f = resolve("strlen");
	return f(s);
}

char *strncpy(char *dst, const char *src, size_t n)
{
	static char *(*real)(char *, const char *, size_t);
	if (!real)
		real = resolve("strncpy");
	size_t m = real_strnlen(src, n);
	hg_note(src, m < n ? m + 1 : n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA); /* strncpy pads dst with zeros up to n */
	return real(dst, src, n);
}

char *strcat(char *dst, const char *src)
{
	static char *(*real)(char *, const char *);
	if (!real)
		real = resolve("strcat");
	size_t d = real_strlen(dst), s = real_strlen(src);
	hg_note(dst, d + 1, HG_READ, RA);
	hg_note(src, s + 1, HG_READ, RA);
	hg_note(dst + d, s + 1, HG_WRITE, RA);
	return real(dst, src);
}

char *strncat(char *dst, const char *src, size_t n)
{
	static char *(*real)(char *, const char *, size_t);
	if (!real)
		real = resolve("strncat");
	size_t d = real_strlen(dst), s = real_strnlen(src, n);
	hg_note(dst, d + 1, HG_READ, RA);
	hg_note(src, s, HG_READ, RA);
	hg_note(dst + d, s + 1, HG_WRITE, RA);
	return real(dst, src, n);
}

int strncmp(const char *a, const char *b, size_t n)
{
	static int (*real)(const char *, const char *, size_t);
	if (!real)
		real = resolve("strncmp");
	size_t i = 0;
	while (i < n && a[i] && a[i] == b[i])
		i++;
	size_t len = i < n ? i + 1 : n;
	hg_note(a, len, HG_READ, RA);
	hg_note(b, len, HG_READ, RA);
	return real(a, b, n);
}
