// SPDX-License-Identifier: GPL-2.0
/*
 * Reading BOLT's YAML profile (bolt_yaml.h; Documentation/profile-format.rst, "BOLT's
 * YAML") with libyaml, the one file that includes it.  The whole document is loaded
 * (yaml_parser_load()), then walked: the header's build-id, flags and event, and every
 * function's blocks, successors and calls, kept by name and block id until
 * profile_match() finds them in a vmlinux (yaml_map.c).  Keys kbolt does not know are
 * refused, as LLVM's YAML reader refuses them: a misspelt "succ" would otherwise drop
 * the edges unseen.  The pseudo-probe keys of newer BOLTs are known and ignored.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../../common/util.h"
#include "bolt_yaml.h"

struct ctx {
	struct prof *p;
	struct bolt_yaml *y;
	yaml_document_t doc;
};

static bool yaml_probe(const char *first_line)
{
	/* what llvm-bolt's YAMLProfileReader::isYAML() looks for */
	return !strcmp(first_line, "---\n") || !strncmp(first_line, "--- ", 4);
}

static size_t line_of(const yaml_node_t *n)
{
	return n->start_mark.line + 1;
}

/* "path: error: kbolt: line N: ...": -EINVAL */
static int __attribute__((format(printf, 3, 4))) bad(struct ctx *c, const yaml_node_t *n,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err(c->p->path, "line %zu: %s", line_of(n), msg);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A number as LLVM's YAML writes one: decimal, or hexadecimal after 0x */
static int number(struct ctx *c, const yaml_node_t *n, const char *key, uint64_t max,
		  uint64_t *v)
{
	const char *s = scalar(n);

	if (s && (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) &&
	    !prof_parse_number(s + 2, 16, max, v))
		return 0;
	if (s && !prof_parse_number(s, 10, max, v))
		return 0;
	return bad(c, n, "%s: not a number (at most %llu): %s", key, (unsigned long long)max,
		   s ? s : "(a list or mapping)");
}

static int number32(struct ctx *c, const yaml_node_t *n, const char *key, uint32_t *v)
{
	uint64_t x;
	int err = number(c, n, key, UINT32_MAX, &x);

	*v = x;
	return err;
}

/*
 * Each key of mapping n, with its value, to fn; 0 or the first error.  fn returns
 * -ENOENT for a key it does not know.
 */
static int for_each_pair(struct ctx *c, yaml_node_t *n, const char *what,
			 int (*fn)(struct ctx *c, const char *key, yaml_node_t *val, void *arg),
			 void *arg)
{
	if (n->type != YAML_MAPPING_NODE)
		return bad(c, n, "%s: not a mapping", what);
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, pr->value);
		const char *key = scalar(k);
		int err = key ? fn(c, key, v, arg) : -ENOENT;

		if (err == -ENOENT)
			return bad(c, k, "%s: unknown key %s", what, key ? key : "(not a scalar)");
		if (err)
			return err;
	}
	return 0;
}

/* Each item of sequence n to fn; 0 or the first error */
static int for_each_item(struct ctx *c, yaml_node_t *n, const char *what,
			 int (*fn)(struct ctx *c, yaml_node_t *item, void *arg), void *arg)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return bad(c, n, "%s: not a list", what);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		int err = fn(c, yaml_document_get_node(&c->doc, *it), arg);

		if (err)
			return err;
	}
	return 0;
}

static int succ_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct yaml_succ *s = arg;

	if (!strcmp(key, "bid"))
		return number32(c, v, key, &s->bid);
	if (!strcmp(key, "cnt"))
		return number(c, v, key, INT64_MAX, &s->count);
	if (!strcmp(key, "mis"))
		return number(c, v, key, INT64_MAX, &(uint64_t){ 0 });
	return -ENOENT;
}

static int add_succ(struct ctx *c, yaml_node_t *item, void *arg)
{
	struct yaml_succ s = { UINT32_MAX, 0, line_of(item) };
	struct bolt_yaml *y = c->y;
	int err = for_each_pair(c, item, "succ", succ_key, &s);

	if (!err && s.bid == UINT32_MAX)
		return bad(c, item, "succ: no bid");
	GROW(y->succs, y->cap_succs, y->nr_succs + 1);
	y->succs[y->nr_succs++] = s;
	return err;
}

static int call_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct yaml_call *cs = arg;

	if (!strcmp(key, "off"))
		return number32(c, v, key, &cs->off);
	if (!strcmp(key, "fid"))
		return number32(c, v, key, &cs->fid);
	if (!strcmp(key, "disc"))
		return number32(c, v, key, &cs->disc);
	if (!strcmp(key, "cnt"))
		return number(c, v, key, INT64_MAX, &cs->count);
	if (!strcmp(key, "mis") || !strcmp(key, "pp") || !strcmp(key, "ppn") ||
	    !strcmp(key, "ind"))
		return 0;	/* mispredictions, pseudo probes, "indirect": not kbolt's */
	return -ENOENT;
}

static int add_call(struct ctx *c, yaml_node_t *item, void *arg)
{
	struct yaml_call cs = { UINT32_MAX, UINT32_MAX, 0, 0, line_of(item) };
	struct bolt_yaml *y = c->y;
	int err = for_each_pair(c, item, "calls", call_key, &cs);

	if (!err && (cs.off == UINT32_MAX || cs.fid == UINT32_MAX))
		return bad(c, item, "calls: want off and fid");
	GROW(y->calls, y->cap_calls, y->nr_calls + 1);
	y->calls[y->nr_calls++] = cs;
	return err;
}

static int block_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct yaml_block *b = arg;

	if (!strcmp(key, "bid"))
		return number32(c, v, key, &b->bid);
	if (!strcmp(key, "insns"))
		return number32(c, v, key, &b->nr_insns);
	if (!strcmp(key, "hash")) {
		b->has_hash = true;
		return number(c, v, key, UINT64_MAX, &b->hash);
	}
	if (!strcmp(key, "exec"))	/* BOLT's sum of the edges in: kbolt has the edges */
		return number(c, v, key, INT64_MAX, &(uint64_t){ 0 });
	if (!strcmp(key, "events"))
		return number(c, v, key, INT64_MAX, &b->events);
	if (!strcmp(key, "succ")) {
		b->first_succ = c->y->nr_succs;
		return for_each_item(c, v, key, add_succ, NULL) ?:
		       (b->nr_succ = c->y->nr_succs - b->first_succ, 0);
	}
	if (!strcmp(key, "calls")) {
		b->first_call = c->y->nr_calls;
		return for_each_item(c, v, key, add_call, NULL) ?:
		       (b->nr_calls = c->y->nr_calls - b->first_call, 0);
	}
	if (!strcmp(key, "probes") || !strcmp(key, "probe"))
		return 0;
	return -ENOENT;
}

static int add_block(struct ctx *c, yaml_node_t *item, void *arg)
{
	struct yaml_block b = { .bid = UINT32_MAX, .lineno = line_of(item) };
	struct bolt_yaml *y = c->y;
	int err = for_each_pair(c, item, "block", block_key, &b);

	if (err)
		return err;
	if (b.bid == UINT32_MAX)
		return bad(c, item, "block: no bid");
	GROW(y->blocks, y->cap_blocks, y->nr_blocks + 1);
	y->blocks[y->nr_blocks++] = b;
	return 0;
}

static int func_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	struct yaml_func *fn = arg;

	if (!strcmp(key, "name")) {
		if (!scalar(v) || !scalar(v)[0])
			return bad(c, v, "name: not a function name");
		fn->name = xstrdup(scalar(v));
		return 0;
	}
	if (!strcmp(key, "fid"))
		return number32(c, v, key, &fn->fid);
	if (!strcmp(key, "nblocks"))
		return number32(c, v, key, &fn->nr_blocks);
	if (!strcmp(key, "hash") || !strcmp(key, "exec") || !strcmp(key, "extern"))
		return number(c, v, key, UINT64_MAX, &(uint64_t){ 0 });
	if (!strcmp(key, "blocks")) {
		fn->first_block = c->y->nr_blocks;
		return for_each_item(c, v, key, add_block, NULL) ?:
		       (fn->nr_listed = c->y->nr_blocks - fn->first_block, 0);
	}
	if (!strcmp(key, "inline_tree") || !strcmp(key, "ppit") || !strcmp(key, "guid") ||
	    !strcmp(key, "pseudo_probe_desc_hash"))
		return 0;
	return -ENOENT;
}

/* A function's blocks: bids below nblocks, each once */
static int check_bids(struct ctx *c, yaml_node_t *item, const struct yaml_func *fn)
{
	const struct yaml_block *b = c->y->blocks + fn->first_block;

	for (size_t i = 0; i < fn->nr_listed; i++) {
		if (b[i].bid >= fn->nr_blocks) {
			pr_err(c->p->path, "line %zu: %s: bid %u out of range (nblocks %u)",
			       b[i].lineno, fn->name, b[i].bid, fn->nr_blocks);
			return -EINVAL;
		}
		for (size_t s = 0; s < b[i].nr_succ; s++) {
			const struct yaml_succ *su = &c->y->succs[b[i].first_succ + s];

			if (su->bid >= fn->nr_blocks) {
				pr_err(c->p->path, "line %zu: %s: successor bid %u out of range "
				       "(nblocks %u)", su->lineno, fn->name, su->bid, fn->nr_blocks);
				return -EINVAL;
			}
		}
		for (size_t k = 0; k < i; k++)
			if (b[k].bid == b[i].bid)
				return bad(c, item, "%s: bid %u twice", fn->name, b[i].bid);
	}
	return 0;
}

static int add_func(struct ctx *c, yaml_node_t *item, void *arg)
{
	struct yaml_func fn = { .fid = UINT32_MAX, .nr_blocks = UINT32_MAX, .lineno = line_of(item) };
	struct bolt_yaml *y = c->y;
	int err = for_each_pair(c, item, "function", func_key, &fn);

	if (!err && (!fn.name || fn.fid == UINT32_MAX || fn.nr_blocks == UINT32_MAX))
		err = bad(c, item, "function: want name, fid and nblocks");
	if (!err)
		err = check_bids(c, item, &fn);
	if (err) {
		free(fn.name);
		return err;
	}
	GROW(y->funcs, y->cap_funcs, y->nr_funcs + 1);
	y->funcs[y->nr_funcs++] = fn;
	return 0;
}

static int flag(struct ctx *c, yaml_node_t *item, void *arg)
{
	const char *s = scalar(item);

	if (s && !strcmp(s, "sample"))
		c->y->samples = true;
	else if (!s || (strcmp(s, "lbr") && strcmp(s, "memevent")))
		return bad(c, item, "profile-flags: not lbr, sample or memevent: %s", s ? s : "?");
	return 0;
}

static int header_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	const char *s = scalar(v);
	uint64_t version;

	if (!strcmp(key, "profile-version")) {
		if (number(c, v, key, UINT32_MAX, &version))
			return -EINVAL;
		return version == 1 ? 0 : bad(c, v, "profile-version %llu: kbolt reads version 1",
					      (unsigned long long)version);
	}
	if (!strcmp(key, "binary-build-id")) {
		/* "<unknown>": the binary had no build-id note */
		if (s && strcmp(s, "<unknown>"))
			snprintf(c->p->build_id, sizeof(c->p->build_id), "%s", s);
		return 0;
	}
	if (!strcmp(key, "profile-flags"))
		return v->type == YAML_SCALAR_NODE ? flag(c, v, NULL) :
		       for_each_item(c, v, key, flag, NULL);
	if (!strcmp(key, "profile-events")) {
		snprintf(c->p->event, sizeof(c->p->event), "%s", s ? s : "");
		return 0;
	}
	if (!strcmp(key, "hash-func"))
		return s && (!strcmp(s, "std-hash") || !strcmp(s, "xxh3")) ? 0 :
		       bad(c, v, "hash-func: not std-hash or xxh3");
	/* the block ids: kbolt finds blocks by the offsets in their hashes, in any order */
	if (!strcmp(key, "binary-name") || !strcmp(key, "profile-origin") ||
	    !strcmp(key, "dfs-order"))
		return 0;
	return -ENOENT;
}

static int top_key(struct ctx *c, const char *key, yaml_node_t *v, void *arg)
{
	if (!strcmp(key, "header"))
		return for_each_pair(c, v, key, header_key, NULL);
	if (!strcmp(key, "functions"))
		return for_each_item(c, v, key, add_func, NULL);
	if (!strcmp(key, "pseudo_probe_desc"))
		return 0;
	return -ENOENT;
}

void bolt_yaml_free(struct bolt_yaml *y)
{
	if (!y)
		return;
	for (size_t i = 0; i < y->nr_funcs; i++)
		free(y->funcs[i].name);
	free(y->funcs);
	free(y->blocks);
	free(y->succs);
	free(y->calls);
	free(y);
}

static int yaml_read(struct prof *p, FILE *f)
{
	struct ctx c = { .p = p, .y = xcalloc(1, sizeof(*c.y)) };
	yaml_parser_t parser;
	yaml_node_t *root;
	int err;

	snprintf(p->recorder, sizeof(p->recorder), "bolt-yaml");
	p->yaml = c.y;
	if (!yaml_parser_initialize(&parser)) {
		pr_err(p->path, "libyaml: cannot initialize its parser");
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &c.doc)) {
		pr_err(p->path, "line %zu: malformed YAML: %s", parser.problem_mark.line + 1,
		       parser.problem ? parser.problem : "libyaml gave no reason");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&c.doc);
	if (!root) {
		pr_err(p->path, "an empty YAML document");
		err = -EINVAL;
	} else {
		err = for_each_pair(&c, root, "the document", top_key, NULL);
	}
	if (!err && !c.y->nr_funcs)
		err = bad(&c, root, "no functions: nothing was recorded");
	yaml_document_delete(&c.doc);
	yaml_parser_delete(&parser);
	return err;
}

/* yaml_map() frees it once the records are addresses; else here */
static void yaml_release(struct prof *p)
{
	bolt_yaml_free(p->yaml);
	p->yaml = NULL;
}

const struct prof_format prof_format_yaml = {
	.name = "yaml",
	.probe = yaml_probe,
	.read = yaml_read,
	.release = yaml_release,
};
