// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for libkmeta: open the input as a kernel image from memory and, if it
 * opens, do what kmeta summary, dump and check do with it: locate every table, read
 * every slot, format every field (into a heap buffer of the commands' size, so that
 * AddressSanitizer sees any overrun), look up the relocation at every slot, decode the
 * instruction at every site and check every entry; and read the build-id.  Unlike the commands, it goes on to the next table after one fails.
 *
 * Besides the sanitizers, the target asserts the message convention the command line
 * relies on: a failure (open, locate) reports exactly one error, and a table that
 * located reads every one of its slots (the commands would exit 1 without a word if
 * not).  Errors are counted, not printed: run links with -Wl,--wrap=pr_err.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sanitizer/common_interface_defs.h>

#include "check.h"
#include "kmeta.h"
#include "table.h"

static unsigned int nr_errors;
static char last_error[512];

void __wrap_pr_err(const char *file, const char *fmt, ...);

/* Format the message anyway: a bad argument to it is a bug like any other */
void __wrap_pr_err(const char *file, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(last_error, sizeof(last_error), "%s: error: ", file ? file : "kmeta");
	va_start(ap, fmt);
	vsnprintf(last_error + n, sizeof(last_error) - n, fmt, ap);
	va_end(ap);
	nr_errors++;
}

/* Said through the sanitizer's report: run closes the target's stderr (libbpf's noise) */
static void invariant_failed(const char *what)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "fuzz_image: %s (errors reported: %u; last: %s)", what,
		 nr_errors, nr_errors ? last_error : "none");
	__sanitizer_report_error_summary(msg);
	abort();
}

static void report(struct check_ctx *c, uint64_t addr, const char *msg)
{
	char where[KMETA_ADDR_STR_SIZE];

	/* what kmeta check prints: the site, named */
	kmeta_addr_str(c->t->img, addr, where, sizeof(where));
	(void)msg;
}

static void format_entry(struct kmeta_table *t, const struct kmeta_entry *e, char *buf)
{
	struct kmeta_insn insn;

	if (t->desc->format_entry)
		t->desc->format_entry(t, e, buf, KMETA_ADDR_STR_SIZE);
	kmeta_addr_str(t->img, e->site, buf, KMETA_ADDR_STR_SIZE);
	kmeta_table_site_area(t, e->site);
	/* the relocation lookups (--emit-relocs vmlinux), built on first use */
	kmeta_reloc_at(t->img, e->addr, &(struct kmeta_reloc){ 0 });
	/* kbolt's decoder, at the site */
	kmeta_insn_decode(t->img, e->site, &insn);
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && t->layout->fields[i].name; i++)
		kmeta_table_format_field(t, e, i, buf, KMETA_ADDR_STR_SIZE);
}

static void walk_table(struct kmeta_image *img, const struct table_desc *d, char *buf)
{
	unsigned int before = nr_errors;
	struct kmeta_table *t = kmeta_table_get(img, d);
	struct check_ctx c = { .report = report };
	struct kmeta_entry e;

	if (!t) {
		if (nr_errors != before + 1)
			invariant_failed("kmeta_table_get failed without exactly one error");
		return;
	}
	if (nr_errors != before)
		invariant_failed("kmeta_table_get succeeded but reported an error");
	for (size_t i = 0; t->present && i < t->nr_slots; i++) {
		if (kmeta_table_read_entry(t, i, &e))
			invariant_failed("a slot of a located table cannot be read");
		format_entry(t, &e, buf);
	}
	if (kmeta_check_table(&c, t))
		invariant_failed("kmeta_check_table failed on a located table");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	msg_quiet_warnings = true;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(KMETA_ADDR_STR_SIZE);
	struct kmeta_image *img;

	nr_errors = 0;
	img = kmeta_open_memory("fuzz", data, size);
	if (!img) {
		if (nr_errors != 1)
			invariant_failed("kmeta_open_memory failed without exactly one error");
		free(buf);
		return 0;
	}
	if (nr_errors)
		invariant_failed("kmeta_open_memory succeeded but reported an error");
	kmeta_build_id(img, buf, KMETA_ADDR_STR_SIZE);
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++)
		walk_table(img, kmeta_table_descs[i], buf);
	kmeta_close(img);
	free(buf);
	return 0;
}
