/* demangle.c: C++ names in reports; it owns hg_demangle. libstdc++'s
 * __cxa_demangle is used when the program has loaded libstdc++ (every C++
 * program has); otherwise names stay as they are. */
#define _GNU_SOURCE
#include "hgrt.h"

#include <dlfcn.h>
#include <stddef.h>

typedef char *(*hg_demangle_fn)(const char *, char *, size_t *, int *);

/* hg_demangle returns the demangled form of name in a malloc'd string, or
 * NULL. */
char *hg_demangle(const char *name)
{
	static hg_demangle_fn fn;
	static int looked;
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&fn, (hg_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle"), __ATOMIC_RELAXED);
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	hg_demangle_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
	if (!f)
		return NULL;
	int status = -1;
	char *out = f(name, NULL, NULL, &status);
	return status == 0 ? out : NULL;
}
