/* annotations_lib.c: the dynamic-annotation functions in a shared library
 * of their own, empty, as a project's dynamic_annotations.c builds them:
 * annotations.c compiled with -DTSAN_RUNTIME calls them through the PLT
 * (cmd/hgrewrite/annotations_test.go). */
void AnnotateHappensBefore(const char *f, int l, const volatile void *a) { (void)f, (void)l, (void)a; }
void AnnotateHappensAfter(const char *f, int l, const volatile void *a) { (void)f, (void)l, (void)a; }
void AnnotateBenignRaceSized(const char *f, int l, const volatile void *a, long size, const char *desc)
{
	(void)f, (void)l, (void)a, (void)size, (void)desc;
}
void AnnotateIgnoreReadsBegin(const char *f, int l) { (void)f, (void)l; }
void AnnotateIgnoreReadsEnd(const char *f, int l) { (void)f, (void)l; }
