/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kmeta command: options shared by its subcommands, and the subcommands.
 */
#ifndef KMETA_CMD_H
#define KMETA_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/json.h"
#include "kmeta.h"

struct opts {
	bool json;
	bool pretty;
	bool verbose;
	const char *module;	/* -m NAME */
	const char *release;	/* -r RELEASE */
	const char *root;	/* -d DIR */
	const char *func_glob;	/* dump --func */
	bool has_addr;		/* dump --addr */
	uint64_t addr_lo, addr_hi;
	char **args;
	int nr_args;
	struct json json_out;
};

/* Image idx of the command's FILE arguments (-m NAME is image 0); NULL after reporting. */
struct kmeta_image *cmd_open_image(struct opts *o, int idx);
/*
 * The same with every table located first: an error must not cut a command's output
 * short once it has begun.  NULL after reporting.
 */
struct kmeta_image *cmd_open_tables(struct opts *o, int idx);

int cmd_summary(struct opts *o);
int cmd_dump(struct opts *o);
int cmd_check(struct opts *o);
int cmd_diff(struct opts *o);

#endif
