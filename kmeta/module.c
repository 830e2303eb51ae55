// SPDX-License-Identifier: GPL-2.0
/*
 * Finding an installed module by name through libkmod (the only file that includes it):
 * aliases and dashes/underscores resolve as modprobe resolves them.
 */
#include <errno.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/util.h"
#include "module.h"

static struct kmod_ctx *open_ctx(const char *release, const char *root)
{
	char *dir = NULL;
	struct kmod_ctx *ctx;

	/* NULL lets libkmod use /lib/modules/$(uname -r); main() makes -d come with -r */
	if (release || root)
		dir = xasprintf("%s/lib/modules/%s", root ? root : "", release ? release : "");
	ctx = kmod_new(dir, NULL);
	if (!ctx)
		pr_err(dir ? dir : "/lib/modules", "libkmod cannot open the module tree");
	free(dir);
	return ctx;
}

char *kmeta_module_find_path(const char *name, const char *release, const char *root)
{
	struct kmod_ctx *ctx = open_ctx(release, root);
	struct kmod_list *list = NULL, *l;
	char *path = NULL;
	int err;

	if (!ctx)
		return NULL;
	err = kmod_module_new_from_lookup(ctx, name, &list);
	if (err < 0 || !list) {
		pr_err(NULL, "module '%s' not found in the module tree of %s", name,
		       release ? release : "the running kernel");
		kmod_unref(ctx);
		return NULL;
	}
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);
		const char *p = kmod_module_get_path(mod);

		if (p && !path)
			path = xstrdup(p);
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	kmod_unref(ctx);
	if (!path)
		pr_err(NULL, "module '%s' is built into the kernel: use its vmlinux", name);
	return path;
}
