/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small streaming JSON writer in the manner of bpftool's json_writer: the writer
 * tracks nesting and commas, -p/--pretty indents.
 */
#ifndef KMETA_JSON_H
#define KMETA_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *out;
	bool pretty;
	int depth;
	bool need_comma[64];
	bool after_key;
};

void json_init(struct json *j, FILE *out, bool pretty);
/* s as a JSON string, quoted and escaped: the one escaper (messages use it too) */
void json_write_string(FILE *out, const char *s);
void json_obj_open(struct json *j);
void json_obj_close(struct json *j);
void json_arr_open(struct json *j);
void json_arr_close(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_s64(struct json *j, int64_t v);
void json_bool(struct json *j, bool v);
void json_hex(struct json *j, uint64_t v);	/* "0x..." string: addresses exceed 2^53 */
/* key and value, the common pair */
void json_member_str(struct json *j, const char *key, const char *s);
void json_member_u64(struct json *j, const char *key, uint64_t v);
void json_member_s64(struct json *j, const char *key, int64_t v);
void json_member_bool(struct json *j, const char *key, bool v);
void json_member_hex(struct json *j, const char *key, uint64_t v);
void json_end(struct json *j);			/* final newline */

#endif
