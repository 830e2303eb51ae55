/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kbolt's two QEMU TCG plugins share: the declarations of the QEMU plugin API they
 * use, the marker nops that bracket a workload, and an allocator that exits on
 * out-of-memory.  kbolt-qemu-plugin.so (qemu_plugin.c) records edge profiles,
 * kbolt-eval-plugin.so (eval_plugin.c) simulates the kernel's instruction fetch.
 *
 * Written for QEMU 7.2's plugin API, version 1.  Debian ships no qemu-plugin.h, so the
 * few types and functions used are declared below, as that version defines them
 * (include/qemu/qemu-plugin.h).  Include this header from exactly one file per plugin:
 * it defines qemu_plugin_version, which QEMU looks up in each plugin it loads.
 */
#ifndef KBOLT_RECORD_PLUGIN_H
#define KBOLT_RECORD_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU 7.2 plugin API, version 1 (include/qemu/qemu-plugin.h) ---- */
typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union {
		struct { int smp_vcpus, max_vcpus; } system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS,
			    QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;
/* ---- end of the QEMU API ---- */

static inline void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "kbolt plugin: out of memory\n");
		abort();
	}
	return p;
}

/*
 * The workload markers: 7-byte nops "nopl 0x3153424b(%rax)" (start) and
 * "nopl 0x3053424b(%rax)" (stop), "KBS1" and "KBS0" in their bytes, which a user
 * program executes around the workloads (scripts/lab/labtool.c).  Register cb on each
 * marker of a user TB, with userdata (void *)1 for a start and NULL for a stop.
 */
static inline void markers_register(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb)
{
	static const unsigned char start[] = { 0x0f, 0x1f, 0x80, 'K', 'B', 'S', '1' };
	static const unsigned char stop[] = { 0x0f, 0x1f, 0x80, 'K', 'B', 'S', '0' };
	size_t n = qemu_plugin_tb_n_insns(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const void *data = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) != sizeof(start))
			continue;
		if (!memcmp(data, start, sizeof(start)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, cb, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)1);
		else if (!memcmp(data, stop, sizeof(stop)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, cb, QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

/*
 * The arguments both plugins take: out=FILE (required) and boot=on|off, into *out and
 * *boot; each other one goes to other(), which returns 0 when it took it, 1 when it
 * does not know it, -1 after reporting an error.  The number of vCPUs the machine can
 * have (per-vCPU state is indexed by vcpu_index), or -1 after reporting.
 */
static inline int plugin_parse_args(const qemu_info_t *info, int argc, char **argv,
				    const char **out, volatile bool *boot,
				    int (*other)(const char *arg))
{
	for (int i = 0; i < argc; i++) {
		int ret = 1;

		if (!strncmp(argv[i], "out=", 4))
			*out = argv[i] + 4, ret = 0;
		else if (!strncmp(argv[i], "boot=", 5) && (!strcmp(argv[i] + 5, "on") ||
							   !strcmp(argv[i] + 5, "off")))
			*boot = !strcmp(argv[i] + 5, "on"), ret = 0;
		else if (other)
			ret = other(argv[i]);
		if (ret < 0)
			return -1;
		if (ret > 0) {
			fprintf(stderr, "kbolt plugin: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!*out || !info->system_emulation) {
		fprintf(stderr, "kbolt plugin: needs out=FILE and system emulation\n");
		return -1;
	}
	return info->system.max_vcpus > 0 ? info->system.max_vcpus : 1;
}

/*
 * What both plugins' qemu_plugin_install() (PLUGIN_INSTALL) begins with: the arguments
 * parsed and a zeroed state of vcpu_size bytes per vCPU.  NULL (said) on a bad argument.
 */
static inline void *plugin_setup(const qemu_info_t *info, int argc, char **argv,
				 const char **out, volatile bool *boot,
				 int (*other)(const char *arg), size_t vcpu_size, int *nr_vcpus)
{
	*nr_vcpus = plugin_parse_args(info, argc, argv, out, boot, other);
	return *nr_vcpus < 0 ? NULL : xcalloc(*nr_vcpus, vcpu_size);
}

/*
 * A plugin's entry point: its arguments (parse_arg), its vcpus[nr_vcpus], out_path and
 * active set up (plugin_setup()), then init(id) registers its callbacks: 0 or -1
 */
#define PLUGIN_INSTALL(parse_arg, init)							\
	QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,			\
						   const qemu_info_t *info, int argc,	\
						   char **argv)				\
	{										\
		vcpus = plugin_setup(info, argc, argv, &out_path, &active, parse_arg,	\
				     sizeof(*vcpus), &nr_vcpus);			\
		return vcpus ? init(id) : -1;						\
	}

#endif
