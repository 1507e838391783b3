/* handoff_main.c: the program that uses handoff_lib.so (rewritten; the
 * library is not). With an argument it starts the hand-off late, so that
 * the worker waits on the condition variable first. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void hl_start(size_t size);
long hl_run(const char *src);

int main(int argc, char **argv)
{
	static char src[1 << 16];
	(void)argv;
	memset(src, 3, sizeof src);
	hl_start(sizeof src);
	if (argc > 1)
		usleep(20000);
	printf("%ld\n", hl_run(src));
	return 0;
}
