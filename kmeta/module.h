/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KMETA_MODULE_H
#define KMETA_MODULE_H

/*
 * Path of module name in /lib/modules/RELEASE (root/lib/modules/RELEASE with a root),
 * the running kernel's tree without a release; NULL after reporting.  Caller frees.
 */
char *kmeta_module_find_path(const char *name, const char *release, const char *root);

#endif
