// SPDX-License-Identifier: GPL-2.0
/*
 * The streaming JSON writer (see json.h).  Addresses are written as "0x..." strings:
 * kernel addresses do not survive a round trip through a double.
 */
#include <inttypes.h>

#include "json.h"

void json_init(struct json *j, FILE *out, bool pretty)
{
	*j = (struct json){ .out = out, .pretty = pretty };
}

static void indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Separator and indentation before a value or key at the current depth */
static void begin_item(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	if (j->depth)
		indent(j);
	j->need_comma[j->depth] = true;
}

static void open(struct json *j, char c)
{
	begin_item(j);
	fputc(c, j->out);
	if (j->depth < 63)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close(struct json *j, char c)
{
	bool had_items = j->need_comma[j->depth];

	if (j->depth)
		j->depth--;
	if (had_items)
		indent(j);
	fputc(c, j->out);
}

void json_obj_open(struct json *j) { open(j, '{'); }
void json_obj_close(struct json *j) { close(j, '}'); }
void json_arr_open(struct json *j) { open(j, '['); }
void json_arr_close(struct json *j) { close(j, ']'); }

void json_write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void json_key(struct json *j, const char *key)
{
	begin_item(j);
	json_write_string(j->out, key);
	fputs(j->pretty ? ": " : ":", j->out);
	j->after_key = true;
}

void json_str(struct json *j, const char *s)
{
	begin_item(j);
	json_write_string(j->out, s);
}

void json_u64(struct json *j, uint64_t v)
{
	begin_item(j);
	fprintf(j->out, "%" PRIu64, v);
}

void json_s64(struct json *j, int64_t v)
{
	begin_item(j);
	fprintf(j->out, "%" PRId64, v);
}

void json_bool(struct json *j, bool v)
{
	begin_item(j);
	fputs(v ? "true" : "false", j->out);
}

void json_hex(struct json *j, uint64_t v)
{
	begin_item(j);
	fprintf(j->out, "\"0x%" PRIx64 "\"", v);
}

/* json_member_TYPE(j, key, v): the key, then json_TYPE(j, v) */
#define DEFINE_JSON_MEMBER(type, ctype)					\
	void json_member_##type(struct json *j, const char *key, ctype v)	\
	{								\
		json_key(j, key);					\
		json_##type(j, v);					\
	}
DEFINE_JSON_MEMBER(str, const char *)
DEFINE_JSON_MEMBER(u64, uint64_t)
DEFINE_JSON_MEMBER(s64, int64_t)
DEFINE_JSON_MEMBER(bool, bool)
DEFINE_JSON_MEMBER(hex, uint64_t)

void json_end(struct json *j)
{
	fputc('\n', j->out);
}
