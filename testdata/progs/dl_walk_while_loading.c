/* expect-exit: 0 */
/* One thread walks the loaded objects with dl_iterate_phdr and compares
 * their names with strcmp inside the callback (the loader's lock is held
 * there), while another loads and unloads a library. An interposed strcmp
 * that looked its real function up with dlsym on its first call would
 * wait for the loader's lock held by the walker, while the walker waits
 * for nothing: the first call must not resolve anything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int walks_with_main;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *seen_main = data;
    if (info->dlpi_name && strcmp(info->dlpi_name, "") == 0)
        *seen_main = 1; /* the main program has an empty name */
    return 0;
}

static void *walker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        int seen_main = 0;
        dl_iterate_phdr(visit, &seen_main);
        walks_with_main += seen_main;
    }
    return NULL;
}

static void *loader(void *arg)
{
    int *loads = arg;
    for (int i = 0; i < 100; i++) {
        void *h = dlopen("libm.so.6", RTLD_NOW);
        if (h) {
            (*loads)++;
            dlclose(h);
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t w, l;
    int loads = 0;
    pthread_create(&w, NULL, walker, NULL);
    pthread_create(&l, NULL, loader, &loads);
    pthread_join(w, NULL);
    pthread_join(l, NULL);
    printf("walks that saw the main program: %d, loads: %d\n", walks_with_main, loads);
    return 0;
}
