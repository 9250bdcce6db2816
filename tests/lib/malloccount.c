/* SPDX-License-Identifier: ISC */
/*
 * malloccount.c - an LD_PRELOAD shim for the tests: counts the calls that
 * allocate (malloc, calloc, realloc, the aligned forms) in the whole
 * process, every library included, and passes each on to glibc.  SIGUSR2
 * writes the count, in decimal, to the file $MALLOCCOUNT_FILE (replacing
 * it), so that a test can read it between two series of requests.
 * Built as obj/test/malloccount.so; never linked into a program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static atomic_ulong count;
static const char *path;

void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *ptr, size_t size);
int posix_memalign(void **out, size_t align, size_t size);
void *aligned_alloc(size_t align, size_t size);
void *memalign(size_t align, size_t size);

void *
malloc(size_t size)
{
	atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
	return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
	atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
	return __libc_calloc(n, size);
}

void *
realloc(void *ptr, size_t size)
{
	atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
	return __libc_realloc(ptr, size);
}

void *
memalign(size_t align, size_t size)
{
	atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
	return __libc_memalign(align, size);
}

void *
aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

int
posix_memalign(void **out, size_t align, size_t size)
{
	void *p = memalign(align, size);

	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

/* async-signal-safe: open, write, close */
static void
report(int sig)
{
	char buf[32];
	unsigned long n = atomic_load(&count);
	size_t i = sizeof(buf);
	int saved = errno, fd;

	(void)sig;
	buf[--i] = '\n';
	do {
		buf[--i] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!write(fd, buf + i, sizeof(buf) - i);
		close(fd);
	}
	errno = saved;
}

__attribute__((constructor)) static void
start(void)
{
	struct sigaction sa;

	path = getenv("MALLOCCOUNT_FILE");
	if (path == NULL)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = report;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
}
