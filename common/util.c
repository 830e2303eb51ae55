// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation helpers that never return NULL, the array-growth helper, and the message
 * functions every diagnostic goes through.  Out of memory is the one failure no
 * function returns (Documentation/design.rst, "Errors"): the allocation helpers call
 * the program's handler, which must not return; the library itself never exits.
 */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

const char *msg_tool = "kmeta";
_Atomic unsigned int nr_warnings;
bool msg_json;
bool msg_quiet_warnings;

/* Until the program sets its own: a library has no process to end but by a signal */
static void default_oom(size_t size)
{
	fprintf(stderr, "%s: error: out of memory (%zu bytes)\n", msg_tool, size);
	abort();
}

static void (*oom_handler)(size_t size) = default_oom;

void kmeta_set_oom_handler(void (*fn)(size_t size))
{
	oom_handler = fn ? fn : default_oom;
}

static void oom(size_t size)
{
	oom_handler(size);
	abort();	/* a handler that returned: nothing sane is left to do */
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom(strlen(s) + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom(0);
	va_end(ap);
	return p;
}

void grow_array(void **arr, size_t *cap, size_t need, size_t elem_size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return;
	while (n < need)
		n *= 2;
	*arr = xrealloc(*arr, n * elem_size);
	*cap = n;
}

static void vmsg(const char *level, const char *file, const char *fmt, va_list ap)
{
	char *text;

	if (vasprintf(&text, fmt, ap) < 0)
		oom(0);
	if (msg_json && level[0] == 'e') {
		/* bpftool's convention: in JSON mode an error is a JSON object on stdout */
		char *full = file ? xasprintf("%s: %s", file, text) : NULL;

		fflush(stdout);
		fputs("{\"error\":", stdout);
		json_write_string(stdout, full ? full : text);
		fputs("}\n", stdout);
		free(full);
	} else if (file) {
		fprintf(stderr, "%s: %s: %s: %s\n", file, level, msg_tool, text);
	} else {
		fprintf(stderr, "%s: %s: %s\n", msg_tool, level, text);
	}
	free(text);
}

void pr_err(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", file, fmt, ap);
	va_end(ap);
}

void pr_warn(const char *file, const char *fmt, ...)
{
	va_list ap;

	nr_warnings++;
	if (msg_quiet_warnings)
		return;
	va_start(ap, fmt);
	vmsg("warning", file, fmt, ap);
	va_end(ap);
}

void pr_info(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("info", file, fmt, ap);
	va_end(ap);
}

bool glob_match(const char *pattern, const char *s)
{
	return fnmatch(pattern, s, 0) == 0;
}

void sort_array(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *))
{
	if (nmemb > 1)
		qsort(base, nmemb, size, cmp);
}

void *search_array(const void *key, const void *base, size_t nmemb, size_t size,
		   int (*cmp)(const void *, const void *))
{
	return nmemb ? bsearch(key, base, nmemb, size, cmp) : NULL;
}

static uint64_t key_at(const unsigned char *rec, size_t key_off)
{
	uint64_t k;

	memcpy(&k, rec + key_off, sizeof(k));
	return k;
}

void sort_by_u64_key(void *base, size_t nr, size_t size, size_t key_off)
{
	unsigned char *src = base, *dst = xmalloc(nr * size + 1);
	size_t *count = xmalloc(65536 * sizeof(*count));

	for (unsigned int shift = 0; nr > 1 && shift < 64; shift += 16) {
		size_t sum = 0;

		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < nr; i++)
			count[(key_at(src + i * size, key_off) >> shift) & 0xffff]++;
		if (count[(key_at(src, key_off) >> shift) & 0xffff] == nr)
			continue;	/* one digit for all: nothing moves */
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < nr; i++) {
			size_t d = (key_at(src + i * size, key_off) >> shift) & 0xffff;

			memcpy(dst + count[d]++ * size, src + i * size, size);
		}
		unsigned char *t = src;	/* the pass's output is the next one's input */
		src = dst;
		dst = t;
	}
	if (src != base) {
		memcpy(base, src, nr * size);
		dst = src;
	}
	free(dst);
	free(count);
}

static const char *cmd_name(const void *table, size_t size, size_t i)
{
	return *(const char *const *)((const char *)table + i * size);
}

long find_cmd_by_prefix(const char *arg, const void *table, size_t nr, size_t size)
{
	long found = -1;

	for (size_t i = 0; i < nr; i++) {
		const char *name = cmd_name(table, size, i);

		if (!strcmp(name, arg))
			return i;
		if (!arg[0] || strncmp(name, arg, strlen(arg)))
			continue;
		if (found >= 0) {
			pr_err(NULL, "command '%s' is ambiguous", arg);
			return -1;
		}
		found = i;
	}
	if (found < 0)
		pr_err(NULL, "unknown command '%s'; try '%s --help'", arg, msg_tool);
	return found;
}

void *get_once(void **slot, void *(*make)(void *arg), void *arg)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (p)
		return p;
	pthread_mutex_lock(&lock);
	p = *slot;
	if (!p) {
		p = make(arg);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return p;
}
