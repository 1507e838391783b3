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

/* The real functions, resolved when the library is loaded (hg_resolve_strings):
 * resolving one lazily inside a call can deadlock, for instance in a
 * dl_iterate_phdr callback, where the loader's lock is held and dlsym
 * needs it. The lazy path stays for calls made before that (other
 * libraries' constructors). */
static void *(*real_memcpy)(void *, const void *, size_t);
static void *(*real_memmove)(void *, const void *, size_t);
static void *(*real_memset)(void *, int, size_t);
static size_t (*real_strlen)(const char *);
static size_t (*real_strnlen)(const char *, size_t);
static char *(*real_strcpy)(char *, const char *);
static int (*real_memcmp)(const void *, const void *, size_t);
static int (*real_strcmp)(const char *, const char *);
static char *(*real_strncpy)(char *, const char *, size_t);
static char *(*real_strcat)(char *, const char *);
static char *(*real_strncat)(char *, const char *, size_t);
static int (*real_strncmp)(const char *, const char *, size_t);

__attribute__((constructor)) static void hg_resolve_strings(void)
{
	if (!real_memcpy)
		real_memcpy = resolve("memcpy");
	if (!real_memmove)
		real_memmove = resolve("memmove");
	if (!real_memset)
		real_memset = resolve("memset");
	if (!real_strlen)
		real_strlen = resolve("strlen");
	if (!real_strcpy)
		real_strcpy = resolve("strcpy");
	if (!real_memcmp)
		real_memcmp = resolve("memcmp");
	if (!real_strcmp)
		real_strcmp = resolve("strcmp");
	if (!real_strncpy)
		real_strncpy = resolve("strncpy");
	if (!real_strcat)
		real_strcat = resolve("strcat");
	if (!real_strncat)
		real_strncat = resolve("strncat");
	if (!real_strncmp)
		real_strncmp = resolve("strncmp");
	if (!real_strnlen)
		real_strnlen = resolve("strnlen");
}

/* hg_note buffers one range access made by a wrapped function. Calls from
 * inside libraries never flush (see hg_event). */
static void hg_note(const void *addr, size_t len, int flags, void *ra)
{
	struct hg_thread *t = len ? hg_bufferable() : NULL;
	if (!t || hg_ignored(t, (uint32_t)flags))
		return; /* inside an ignore section (annotations.c) */
	t->ranges++;
	t->bytes += len;
	uint64_t pc = hg_call_pc(ra), a = (uint64_t)(uintptr_t)addr;
	/* inside a lock-protected region the event records the range by its
	 * first byte (hg_event): the fast path is left out there */
	uint64_t done = t->recording ? 0 : hg_range_settled(t, a, len, HG_INFO(pc, 1, flags));
	if (done < len)
		hg_event(t, a + done, HG_INFO(pc, 1, flags), len - done, pc != 0);
}

#define RA __builtin_return_address(0)

void *memcpy(void *dst, const void *src, size_t n)
{
	if (!real_memcpy) {
		if (hg_resolving) {
			for (size_t i = 0; i < n; i++)
				((char *)dst)[i] = ((const char *)src)[i];
			return dst;
		}
		real_memcpy = resolve("memcpy");
	}
	hg_note(src, n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA);
	return real_memcpy(dst, src, n);
}

void *memmove(void *dst, const void *src, size_t n)
{
	if (!real_memmove) {
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
		real_memmove = resolve("memmove");
	}
	hg_note(src, n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA);
	return real_memmove(dst, src, n);
}

void *memset(void *dst, int c, size_t n)
{
	if (!real_memset) {
		if (hg_resolving) {
			for (size_t i = 0; i < n; i++)
				((char *)dst)[i] = (char)c;
			return dst;
		}
		real_memset = resolve("memset");
	}
	hg_note(dst, n, HG_WRITE, RA);
	return real_memset(dst, c, n);
}

size_t strlen(const char *s)
{
	if (!real_strlen) {
		if (hg_resolving) {
			size_t n = 0;
			while (s[n])
				n++;
			return n;
		}
		real_strlen = resolve("strlen");
	}
	size_t n = real_strlen(s);
	hg_note(s, n + 1, HG_READ, RA);
	return n;
}

char *strcpy(char *dst, const char *src)
{
	if (!real_strcpy)
		real_strcpy = resolve("strcpy");
	static size_t (*len)(const char *);
	if (!len)
		len = resolve("strlen");
	size_t n = len(src) + 1;
	hg_note(src, n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA);
	return real_strcpy(dst, src);
}

int memcmp(const void *a, const void *b, size_t n)
{
	if (!real_memcmp) {
		if (hg_resolving) {
			for (size_t i = 0; i < n; i++)
				if (((const unsigned char *)a)[i] != ((const unsigned char *)b)[i])
					return ((const unsigned char *)a)[i] - ((const unsigned char *)b)[i];
			return 0;
		}
		real_memcmp = resolve("memcmp");
	}
	hg_note(a, n, HG_READ, RA);
	hg_note(b, n, HG_READ, RA);
	return real_memcmp(a, b, n);
}

int strcmp(const char *a, const char *b)
{
	if (!real_strcmp) {
		if (hg_resolving) {
			while (*a && *a == *b)
				a++, b++;
			return (unsigned char)*a - (unsigned char)*b;
		}
		real_strcmp = resolve("strcmp");
	}
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	hg_note(a, i + 1, HG_READ, RA);
	hg_note(b, i + 1, HG_READ, RA);
	return real_strcmp(a, b);
}

/* The bounded and concatenating forms. Lengths are measured with the real
 * strnlen/strlen, which record nothing. */
static size_t len_of(const char *s)
{
	if (!real_strlen)
		real_strlen = resolve("strlen");
	return real_strlen(s);
}

static size_t nlen_of(const char *s, size_t n)
{
	if (!real_strnlen)
		real_strnlen = resolve("strnlen");
	return real_strnlen(s, n);
}

char *strncpy(char *dst, const char *src, size_t n)
{
	if (!real_strncpy)
		real_strncpy = resolve("strncpy");
	size_t m = nlen_of(src, n);
	hg_note(src, m < n ? m + 1 : n, HG_READ, RA);
	hg_note(dst, n, HG_WRITE, RA); /* strncpy pads dst with zeros up to n */
	return real_strncpy(dst, src, n);
}

char *strcat(char *dst, const char *src)
{
	if (!real_strcat)
		real_strcat = resolve("strcat");
	size_t d = len_of(dst), s = len_of(src);
	hg_note(dst, d + 1, HG_READ, RA);
	hg_note(src, s + 1, HG_READ, RA);
	hg_note(dst + d, s + 1, HG_WRITE, RA);
	return real_strcat(dst, src);
}

char *strncat(char *dst, const char *src, size_t n)
{
	if (!real_strncat)
		real_strncat = resolve("strncat");
	size_t d = len_of(dst), s = nlen_of(src, n);
	hg_note(dst, d + 1, HG_READ, RA);
	hg_note(src, s, HG_READ, RA);
	hg_note(dst + d, s + 1, HG_WRITE, RA);
	return real_strncat(dst, src, n);
}

int strncmp(const char *a, const char *b, size_t n)
{
	if (!real_strncmp)
		real_strncmp = resolve("strncmp");
	size_t i = 0;
	while (i < n && a[i] && a[i] == b[i])
		i++;
	size_t len = i < n ? i + 1 : n;
	hg_note(a, len, HG_READ, RA);
	hg_note(b, len, HG_READ, RA);
	return real_strncmp(a, b, n);
}
