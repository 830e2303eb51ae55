// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction boundaries through capstone: the only file that includes it.  Each function
 * (symbol start to start + size) is decoded on demand, only as far as a question needs
 * (capstone formats every instruction's text, which is most of kmeta check's time), and
 * its instruction offsets cached; checks then ask whether a table site starts one.
 *
 * Capstone 4.0.2 (Debian 12) decodes "0f b9" (ud1, used as the static-call trampoline
 * signature and by newer BUG()s; 7.x's __WARN_trap has "67 48 0f b9 3a") as its prefixes
 * and two bytes with no ModRM; its real length adds the ModRM, fixed up below.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "internal.h"

struct decoder {
	csh cs;			/* kmeta_is_insn_boundary()'s cache: one thread only */
	bool cs_open;
	struct kmeta_func_insns *funcs;	/* parallel to img->funcs */
	unsigned char *decoded;		/* 1 once funcs[i] holds a result */
};

static struct decoder *get_decoder(struct kmeta_image *img)
{
	struct decoder *d = img->decoder;
	cs_err err;

	if (d)
		return d->cs_open ? d : NULL;
	d = img->decoder = xcalloc(1, sizeof(*d));
	d->funcs = xcalloc(img->nr_funcs, sizeof(*d->funcs));
	d->decoded = xcalloc(img->nr_funcs, 1);
	err = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);
	if (err != CS_ERR_OK) {
		pr_err(img->path, "capstone: %s", cs_strerror(err));
		return NULL;
	}
	d->cs_open = true;
	return d;
}

/* Length of a ModRM operand (ModRM, SIB, displacement) at p, 0 if it overruns */
static unsigned int modrm_len(const unsigned char *p, size_t avail)
{
	unsigned int mod, rm, len = 1;

	if (!avail)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod != 3 && rm == 4) {
		if (avail < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		len += 4;
	return len <= avail ? len : 0;
}

/* Bytes of legacy and REX prefixes at p (at most 4: what ud1's users put before it) */
static unsigned int prefix_len(const unsigned char *p, size_t avail)
{
	static const unsigned char legacy[] = { 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x3e, 0x26,
						0x64, 0x65, 0x36 };
	unsigned int i = 0;

	while (i < avail && i < 4 && ((p[i] & 0xf0) == 0x40 || memchr(legacy, p[i], sizeof(legacy))))
		i++;
	return i;
}

/* Is it a ud1 (0f b9) after its prefixes? */
static bool is_ud1(const unsigned char *p, size_t avail)
{
	unsigned int k = prefix_len(p, avail);

	return k + 2 <= avail && p[k] == 0x0f && p[k + 1] == 0xb9;
}

/* Capstone's length, corrected where capstone 4.0.2 is known to be wrong */
static size_t fix_len(const unsigned char *p, size_t avail, size_t cs_len)
{
	unsigned int k = prefix_len(p, avail);

	if (cs_len == k + 2 && avail > k + 2 && is_ud1(p, avail)) {
		unsigned int m = modrm_len(p + k + 2, avail - k - 2);

		return m ? k + 2 + m : 0;
	}
	return cs_len;
}

/*
 * Length of an instruction capstone 4.0.2 does not know, 0 if not one of those:
 * the operand-less 0f 01 group (mod 11), such as rdpkru/wrpkru (0f 01 ee/ef),
 * serialize (0f 01 e8) or encls (0f 01 cf), after optional 66/f2/f3 prefixes.
 */
static unsigned int unknown_len(const unsigned char *p, size_t avail)
{
	unsigned int i = 0;

	while (i < avail && i < 4 && (p[i] == 0x66 || p[i] == 0xf2 || p[i] == 0xf3))
		i++;
	if (i + 3 <= avail && p[i] == 0x0f && p[i + 1] == 0x01 && p[i + 2] >= 0xc0)
		return i + 3;
	return 0;
}

/*
 * The hypervisors' emulation prefixes (arch/x86/include/asm/emulate_prefix.h): "ud2;
 * .ascii "xen"" or "ud2; .ascii "kvm"" before an instruction a PV guest wants
 * emulated (xen_cpuid()).  The kernel's own decoder (arch/x86/lib/insn.c) reads prefix
 * and instruction as one, which resumes after it; so does kmeta.  Their length, 0 if
 * p starts none.
 */
static unsigned int emulate_prefix_len(const unsigned char *p, size_t avail)
{
	static const unsigned char prefixes[][5] = {
		{ 0x0f, 0x0b, 0x78, 0x65, 0x6e },	/* ud2; "xen" */
		{ 0x0f, 0x0b, 0x6b, 0x76, 0x6d },	/* ud2; "kvm" */
	};

	for (size_t k = 0; avail > sizeof(prefixes[0]) && k < ARRAY_SIZE(prefixes); k++)
		if (!memcmp(p, prefixes[k], sizeof(prefixes[k])))
			return sizeof(prefixes[k]);
	return 0;
}

/* Decode func from fi->done until past upto (or its end, or bad bytes) */
static void decode_until(struct decoder *d, struct kmeta_image *img, struct kmeta_sym *func,
			 struct kmeta_func_insns *fi, uint64_t upto)
{
	const unsigned char *code = kmeta_bytes_at(img, func->addr, func->size);
	uint64_t addr = fi->done;
	size_t size = fi->end - addr;
	cs_insn *insn;

	if (!code) {
		fi->bad_addr = fi->done = func->addr;
		return;
	}
	code += addr - func->addr;
	insn = cs_malloc(d->cs);
	while (size && addr <= upto) {
		unsigned int pre = emulate_prefix_len(code, size);
		const unsigned char *p;
		size_t len;

		code += pre;	/* recorded below as one instruction with what follows it */
		addr += pre;
		size -= pre;
		p = code;
		if (!cs_disasm_iter(d->cs, &code, &size, &addr, insn)) {
			len = unknown_len(p, size);
			if (!len) {
				fi->bad_addr = addr - pre;
				break;
			}
			GROW(fi->off, fi->cap, fi->nr + 1);
			fi->off[fi->nr++] = (uint32_t)(addr - pre - func->addr);
			code += len;
			addr += len;
			size -= len;
			continue;
		}
		len = fix_len(p, size + insn->size, insn->size);
		if (!len) {
			fi->bad_addr = addr - insn->size - pre;
			break;
		}
		if (len != insn->size) {	/* resync after a length fix-up */
			code = p + len;
			addr += len - insn->size;
			size -= len - insn->size;
		}
		GROW(fi->off, fi->cap, fi->nr + 1);
		fi->off[fi->nr++] = (uint32_t)(addr - len - pre - func->addr);
	}
	fi->done = fi->bad_addr ? fi->end : addr;
	cs_free(insn, 1);
}

/* The cached (possibly partly decoded) state of func */
static struct kmeta_func_insns *func_insns(struct decoder *d, struct kmeta_image *img,
					   struct kmeta_sym *func)
{
	struct kmeta_func_insns *fi;
	size_t lo = 0, hi = img->nr_funcs;

	while (lo < hi) {	/* func's index in img->funcs */
		size_t mid = lo + (hi - lo) / 2;

		if (img->funcs[mid]->addr < func->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < img->nr_funcs && img->funcs[lo] != func &&
	       img->funcs[lo]->addr == func->addr)
		lo++;
	if (lo >= img->nr_funcs || img->funcs[lo] != func)
		return NULL;
	fi = &d->funcs[lo];
	if (!d->decoded[lo]) {
		fi->start = fi->done = func->addr;
		fi->end = func->addr + func->size;
		d->decoded[lo] = 1;
	}
	return fi;
}

const struct kmeta_func_insns *kmeta_func_decode(struct kmeta_image *img, struct kmeta_sym *func)
{
	struct decoder *d = get_decoder(img);
	struct kmeta_func_insns *fi = d ? func_insns(d, img, func) : NULL;

	if (fi && fi->done < fi->end)
		decode_until(d, img, func, fi, fi->end);
	return fi;
}

int kmeta_is_insn_boundary(struct kmeta_image *img, uint64_t addr)
{
	struct decoder *d = get_decoder(img);
	struct kmeta_func_insns *fi = img->last_insns;
	struct kmeta_sym *func = img->last_func;
	uint32_t off;
	size_t lo, hi;

	/* table walks are mostly in address order: try the last function first */
	if (!func || addr < func->addr || addr >= func->addr + func->size) {
		func = kmeta_find_func_containing(img, addr);
		if (!func || !d)
			return -1;
		fi = func_insns(d, img, func);
		img->last_func = func;
		img->last_insns = fi;
	}
	if (!fi)
		return -1;
	if (fi->done <= addr)
		decode_until(d, img, func, fi, addr);
	if (fi->bad_addr && addr >= fi->bad_addr)
		return -1;
	off = addr - fi->start;
	lo = 0;
	hi = fi->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fi->off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < fi->nr && fi->off[lo] == off;
}


static bool has_group(const cs_insn *ci, uint8_t group)
{
	for (int i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == group)
			return true;
	return false;
}

/*
 * How control leaves an instruction, as the kernel uses it (Documentation/design.rst,
 * "Instructions that end the flow"), where capstone 4.0.2's groups would mislead:
 * syscall and sysenter are in its INT group, but in a Xen PV guest a syscall from the
 * kernel is a hypercall that comes back to the next instruction (xen_hypercall_pv):
 * they fall through.  sysret and sysexit are in its IRET group with iret: all three
 * leave for another context and never come back to the next one: traps.  ud1 and ud0
 * fall through (6.12's UBSAN traps resume); ud2 is a trap that a WARN resumes (cfg.c).
 * hlt and the VM instructions (vmcall, vmlaunch: VMfail falls through) are plain.
 */
static bool is_other_context_exit(unsigned int id)
{
	return id == X86_INS_IRET || id == X86_INS_IRETD || id == X86_INS_IRETQ ||
	       id == X86_INS_SYSRET || id == X86_INS_SYSEXIT;
}

static enum kmeta_insn_kind insn_kind(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	bool direct = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;

	if (ci->id == X86_INS_SYSCALL || ci->id == X86_INS_SYSENTER)
		return KI_OTHER;
	if (is_other_context_exit(ci->id))
		return KI_TRAP;
	if (has_group(ci, CS_GRP_RET) || has_group(ci, CS_GRP_IRET))
		return KI_RET;
	if (has_group(ci, CS_GRP_CALL))
		return direct ? KI_CALL : KI_ICALL;
	if (has_group(ci, CS_GRP_JUMP)) {
		if (ci->id == X86_INS_JMP || ci->id == X86_INS_LJMP)
			return direct ? KI_JMP : KI_IJMP;
		return KI_JCC;
	}
	if (has_group(ci, CS_GRP_INT) || ci->id == X86_INS_UD2)
		return KI_TRAP;	/* int3, int n, int1 resume: KIF_INT */
	return KI_OTHER;
}

/* Where target's bytes are: the rel8/rel32 of a direct branch, the disp32 of %rip */
static int locate_rel(const cs_insn *ci, const unsigned char *p, struct kmeta_insn *insn)
{
	const cs_x86 *x = &ci->detail->x86;
	uint64_t next = insn->addr + insn->len;
	int64_t v;

	if (insn->target) {	/* direct: the displacement ends the instruction */
		insn->rel_size = x->encoding.imm_size;
		if (insn->rel_size != 1 && insn->rel_size != 4)
			return -EILSEQ;
		insn->rel_off = insn->len - insn->rel_size;
		v = insn->rel_size == 1 ? (int8_t)p[insn->rel_off]
					: (int32_t)get_u32(p + insn->rel_off);
		return next + v == insn->target ? 0 : -EILSEQ;
	}
	if (!x->encoding.modrm_offset || (x->modrm & 0xc7) != 0x05)
		return 0;
	/* mod 00, r/m 101: disp32 right after ModRM, relative to the next instruction */
	insn->rel_off = x->encoding.modrm_offset + 1;
	insn->rel_size = 4;
	if (insn->rel_off + 4 > insn->len)
		return -EILSEQ;
	v = (int32_t)get_u32(p + insn->rel_off);
	if (v != x->disp)
		return -EILSEQ;
	insn->target = next + v;
	insn->flags |= KIF_RIP;
	return 0;
}

static int fill_insn(const cs_insn *ci, const unsigned char *p, size_t avail, uint64_t addr,
		     struct kmeta_insn *insn)
{
	insn->addr = addr;
	insn->len = fix_len(p, avail, ci->size);
	if (!insn->len)
		return -EILSEQ;
	insn->kind = insn_kind(ci);
	insn->target = 0;
	insn->flags = 0;
	insn->rel_off = insn->rel_size = 0;
	if (insn->kind == KI_JCC || insn->kind == KI_JMP || insn->kind == KI_CALL)
		insn->target = ci->detail->x86.operands[0].imm;
	if (ci->id == X86_INS_NOP)
		insn->flags |= KIF_NOP;
	if (ci->id == X86_INS_UD2 || is_ud1(p, avail))
		insn->flags |= KIF_UD;
	if (ci->id == X86_INS_INT3 || ci->id == X86_INS_INT || ci->id == X86_INS_INT1)
		insn->flags |= KIF_INT;
	if (insn->len != ci->size)	/* fixed-up ud1: no operand we relocate */
		return 0;
	return locate_rel(ci, p, insn);
}

/* An instruction capstone does not know but kmeta does: no branch, no operand we move */
static int fill_unknown(const unsigned char *p, size_t avail, uint64_t addr,
			struct kmeta_insn *insn)
{
	unsigned int len = unknown_len(p, avail);

	if (!len)
		return -EILSEQ;
	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->len = len;
	insn->kind = KI_OTHER;
	return 0;
}

/*
 * kmeta_insn_decode() and kmeta_insn_decode_range() are called from several threads
 * at once (kbolt's parallel loops): each thread decodes with a handle of its own, with
 * details, opened at its first decode and closed by kmeta_insn_thread_exit().
 */
static __thread csh thread_cs;
static __thread bool thread_cs_open;
static __thread cs_insn *thread_insn;	/* kmeta_insn_decode()'s, kept: 1.7 KB of details */

static csh detail_handle(void)
{
	if (!thread_cs_open) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &thread_cs) != CS_ERR_OK)
			return 0;
		cs_option(thread_cs, CS_OPT_DETAIL, CS_OPT_ON);
		thread_insn = cs_malloc(thread_cs);
		thread_cs_open = true;
	}
	return thread_cs;
}

void kmeta_insn_thread_exit(void)
{
	if (!thread_cs_open)
		return;
	cs_free(thread_insn, 1);
	cs_close(&thread_cs);
	thread_cs_open = false;
}

/*
 * The instruction at p (avail bytes there) into insn, an emulation prefix included;
 * *known: capstone decoded it, ci holds its details
 */
static int decode_one(csh cs, cs_insn *ci, const unsigned char *p, size_t avail,
		      uint64_t addr, struct kmeta_insn *insn, bool *known)
{
	unsigned int pre = emulate_prefix_len(p, avail);
	const unsigned char *code = p + pre;
	size_t size = avail - pre < 16 ? avail - pre : 16;
	uint64_t a = addr + pre;
	int err;

	*known = cs_disasm_iter(cs, &code, &size, &a, ci);
	err = *known ? fill_insn(ci, p + pre, avail - pre, addr + pre, insn) :
		       fill_unknown(p + pre, avail - pre, addr + pre, insn);
	if (err || !pre)
		return err;
	insn->addr = addr;
	insn->len += pre;
	if (insn->rel_size)
		insn->rel_off += pre;
	*known = false;		/* its fields are not capstone's */
	return 0;
}

int kmeta_insn_decode(struct kmeta_image *img, uint64_t addr, struct kmeta_insn *insn)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, addr);
	cs_insn *ci;
	bool known;
	csh cs;

	if (!sec || !sec->data)
		return -EINVAL;
	cs = detail_handle();
	ci = thread_insn;
	if (!cs || !ci)
		return -ENOMEM;
	return decode_one(cs, ci, sec->data + (addr - sec->addr), sec->size - (addr - sec->addr),
			  addr, insn, &known);
}

/* Where capstone found ci's fields (zero for an instruction it does not know) */
static void fill_fields(const cs_insn *ci, struct kmeta_insn_fields *f)
{
	const cs_x86 *x = &ci->detail->x86;

	f->id = ci->id;
	f->disp_off = x->encoding.disp_offset;
	f->disp_size = x->encoding.disp_size;
	f->imm_off = x->encoding.imm_offset;
	f->imm_size = x->encoding.imm_size;
	f->gs = x->prefix[1] == X86_PREFIX_GS;
}

/* kmeta_insn_decode_range(), and with fields the fields of each instruction */
static int decode_range(struct kmeta_image *img, uint64_t start, uint64_t end,
			struct kmeta_insn **insns, struct kmeta_insn_fields **fields, size_t *nr,
			uint64_t *bad_addr)
{
	const unsigned char *code = kmeta_bytes_at(img, start, end - start);
	uint64_t addr = start;
	size_t cap = 0, fcap = 0;
	cs_insn *ci;
	csh cs;

	*insns = NULL;
	*nr = 0;
	*bad_addr = 0;
	if (fields)
		*fields = NULL;
	if (!code)
		return -EINVAL;
	cs = detail_handle();
	if (!cs)
		return -ENOMEM;
	ci = cs_malloc(cs);
	while (addr < end) {
		size_t left = end - addr;
		bool known;

		GROW(*insns, cap, *nr + 1);
		if (decode_one(cs, ci, code + (addr - start), left, addr, &(*insns)[*nr], &known) ||
		    (*insns)[*nr].len > left) {
			*bad_addr = addr;
			break;
		}
		if (fields) {
			GROW(*fields, fcap, *nr + 1);
			memset(&(*fields)[*nr], 0, sizeof(**fields));
			if (known && (*insns)[*nr].len == ci->size)
				fill_fields(ci, &(*fields)[*nr]);
		}
		addr += (*insns)[(*nr)++].len;
	}
	cs_free(ci, 1);
	return 0;
}

int kmeta_insn_decode_range(struct kmeta_image *img, uint64_t start, uint64_t end,
			    struct kmeta_insn **insns, size_t *nr, uint64_t *bad_addr)
{
	return decode_range(img, start, end, insns, NULL, nr, bad_addr);
}

int kmeta_insn_decode_range_fields(struct kmeta_image *img, uint64_t start, uint64_t end,
				   struct kmeta_insn **insns, struct kmeta_insn_fields **fields,
				   size_t *nr, uint64_t *bad_addr)
{
	return decode_range(img, start, end, insns, fields, nr, bad_addr);
}

int insn_containing(struct kmeta_image *img, uint64_t start, uint64_t end, uint64_t addr,
		    struct kmeta_insn *insn, uint64_t *bad)
{
	struct kmeta_insn *insns;
	uint64_t stop;
	size_t nr;
	int found = -1;

	if (decode_range(img, start, end, &insns, NULL, &nr, &stop))
		return -1;
	for (size_t i = 0; i < nr && found < 0; i++) {
		if (addr >= insns[i].addr && addr < insns[i].addr + insns[i].len) {
			*insn = insns[i];
			found = 0;
		}
	}
	if (bad)
		*bad = stop;
	free(insns);
	return found;
}

bool kmeta_swept_may_ref(struct kmeta_image *img, uint64_t addr, uint64_t target)
{
	struct kmeta_sym *sym = kmeta_find_func_containing(img, addr);
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, addr);
	struct kmeta_insn in;

	if (!sym)
		sym = kmeta_find_sym_containing(img, addr);
	if (!sym || (sym->type != STT_FUNC && sym->type != STT_NOTYPE) || !sec ||
	    !(sec->flags & SHF_EXECINSTR) || sym->addr < sec->addr ||
	    sym->addr + sym->size > sec->addr + sec->size ||
	    insn_containing(img, sym->addr, sym->addr + sym->size, addr, &in, NULL))
		return true;
	return in.addr == addr && in.rel_size && in.target == target;
}

int kmeta_jcc_cond(const unsigned char *p, unsigned int len)
{
	unsigned int i = 0;

	while (i < len && (p[i] == 0x2e || p[i] == 0x3e))	/* branch hints */
		i++;
	if (i + 2 == len && (p[i] & 0xf0) == 0x70)
		return p[i] & 0x0f;
	if (i + 6 == len && p[i] == 0x0f && (p[i + 1] & 0xf0) == 0x80)
		return p[i + 1] & 0x0f;
	return -1;
}

int kmeta_insn_len(struct kmeta_image *img, uint64_t addr)
{
	struct kmeta_insn insn;
	int err = kmeta_insn_decode(img, addr, &insn);

	return err ? err : insn.len;
}

void insn_free(struct kmeta_image *img)
{
	struct decoder *d = img->decoder;

	if (!d)
		return;
	for (size_t i = 0; i < img->nr_funcs; i++)
		free(d->funcs[i].off);
	free(d->funcs);
	free(d->decoded);
	if (d->cs_open)
		cs_close(&d->cs);
	free(d);
	img->decoder = NULL;
}
