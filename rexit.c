#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int g;
static void *w(void *x) { g++; return 0; }
int main(int argc, char **argv) { pthread_t t; pthread_create(&t, 0, w, 0); g++; pthread_join(t, 0);
  printf("g=%d\n", g); fflush(stdout); if (argc > 1) _exit(0); return 0; }
