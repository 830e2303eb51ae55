// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the output vmlinux: a new build-id (derived from the old one, kbolt's
 * version, the options and the profile's digest, so the same inputs give the same id),
 * a non-allocated .note.kbolt section that records those, and the image's contents,
 * into the temporary file of outfile.c, which renames it over the output once it is
 * verified.  The note goes at the end of the file with a new section-name table and
 * section header table; nothing the kernel loads moves.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/util.h"
#include "bat.h"
#include "output.h"

#define NT_GNU_BUILD_ID 3
#define NT_KBOLT 1

uint64_t digest_update(uint64_t h, const void *buf, size_t size)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < size; i++) {	/* FNV-1a */
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int digest_file(const char *path, uint64_t *out)
{
	unsigned char buf[65536];
	uint64_t h = DIGEST_INIT;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		pr_err(path, "%s", strerror(errno));
		return -errno;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = digest_update(h, buf, n);
	fclose(f);
	*out = h;
	return 0;
}

/* The descriptor of the GNU build-id note in allocated note sections, NULL if none */
static unsigned char *find_build_id(struct kmeta_image *img, uint32_t *size)
{
	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *sec = &img->secs[i];
		uint64_t off = 0;

		if (sec->type != SHT_NOTE || !sec->data)
			continue;
		while (off + 12 <= sec->size) {
			uint32_t namesz = get_u32(sec->data + off), descsz = get_u32(sec->data + off + 4);
			uint32_t type = get_u32(sec->data + off + 8);
			uint64_t desc = off + 12 + ((namesz + 3) & ~3U);

			if (desc + descsz > sec->size)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 &&
			    !memcmp(sec->data + off + 12, "GNU", 4)) {
				*size = descsz;
				return sec->data + desc;
			}
			off = desc + ((descsz + 3) & ~3U);
		}
	}
	return NULL;
}

static void set_build_id(struct kmeta_image *img, const char *record)
{
	uint32_t size;
	unsigned char *id = find_build_id(img, &size);
	uint64_t h;

	if (!id)
		return;
	h = digest_update(DIGEST_INIT, id, size);
	h = digest_update(h, record, strlen(record));
	for (uint32_t i = 0; i < size; i += 8) {
		uint64_t v = digest_update(h, &i, sizeof(i));

		memcpy(id + i, &v, size - i < 8 ? size - i : 8);
	}
}

static int write_at(int fd, const void *buf, size_t size, uint64_t off)
{
	const unsigned char *p = buf;

	while (size) {
		ssize_t n = pwrite(fd, p, size, off);

		if (n < 0)
			return -errno;
		p += n;
		off += n;
		size -= n;
	}
	return 0;
}

/* Where each section's contents go in the output, by section index */
struct out_layout {
	uint64_t *off, *size;
	uint64_t copy_end;	/* the input's bytes [0, copy_end) are copied as they are */
	uint64_t end;		/* the output's contents end here: the tail follows */
	const struct output_secs *secs;	/* non-allocated sections kbolt changed */
};

void output_secs_add(struct output_secs *s, size_t idx, unsigned char *data, uint64_t size)
{
	GROW(s->v, s->cap, s->nr + 1);
	s->v[s->nr++] = (struct output_sec){ idx, data, size };
}

void output_secs_take(struct output_secs *s, struct output_secs *from)
{
	for (size_t k = 0; k < from->nr; k++)
		output_secs_add(s, from->v[k].idx, from->v[k].data, from->v[k].size);
	free(from->v);
	*from = (struct output_secs){ 0 };
}

void output_secs_free(struct output_secs *s)
{
	for (size_t k = 0; k < s->nr; k++)
		free(s->v[k].data);
	free(s->v);
	*s = (struct output_secs){ 0 };
}

static const struct output_sec *changed_sec(const struct out_layout *l, size_t idx)
{
	for (size_t k = 0; l->secs && k < l->secs->nr; k++)
		if (l->secs->v[k].idx == idx)
			return &l->secs->v[k];
	return NULL;
}

/*
 * Sections with new contents: in their place if they fit, else after everything (the
 * old bytes stay behind, unreferenced: non-allocated sections may lie anywhere)
 */
static void place_changed(const Elf64_Shdr *sh, struct out_layout *l)
{
	for (size_t k = 0; l->secs && k < l->secs->nr; k++) {
		const struct output_sec *c = &l->secs->v[k];
		uint64_t align = sh[c->idx].sh_addralign ? sh[c->idx].sh_addralign : 1;

		if (!c->data)
			continue;
		l->size[c->idx] = c->size;
		if (c->size <= sh[c->idx].sh_size)
			continue;
		l->off[c->idx] = (l->end + align - 1) / align * align;
		l->end = l->off[c->idx] + c->size;
	}
}

/* A DWARF section, or the relocations of one */
static bool is_debug_sec(const Elf64_Shdr *sh, size_t nr, size_t i, const char *names)
{
	if (!strncmp(names + sh[i].sh_name, ".debug", 6))
		return true;
	return sh[i].sh_type == SHT_RELA && sh[i].sh_info && sh[i].sh_info < nr &&
	       !strncmp(names + sh[sh[i].sh_info].sh_name, ".debug", 6);
}

/*
 * With strip_debug, the DWARF (which would describe the old code) and its relocations
 * are left out: the file is copied up to the first of them, the sections after it that
 * are kept are packed behind, and the DWARF sections become empty.  The allocated
 * sections and the program headers must all come before: they do in a vmlinux.
 */
static int plan_layout(struct kmeta_image *img, bool strip_debug, struct out_layout *l)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->map;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img->map + eh->e_shoff);
	const char *names = (const char *)img->map + sh[eh->e_shstrndx].sh_offset;
	uint64_t cut = img->map_size, pos;

	l->off = xcalloc(eh->e_shnum, sizeof(*l->off));
	l->size = xcalloc(eh->e_shnum, sizeof(*l->size));
	for (size_t i = 0; i < eh->e_shnum; i++) {
		l->off[i] = sh[i].sh_offset;
		l->size[i] = sh[i].sh_size;
		if (strip_debug && sh[i].sh_size && is_debug_sec(sh, eh->e_shnum, i, names) &&
		    sh[i].sh_offset < cut)
			cut = sh[i].sh_offset;
	}
	l->copy_end = l->end = img->map_size;
	if (cut == img->map_size) {
		place_changed(sh, l);
		return 0;
	}
	for (size_t i = 0; i < eh->e_shnum; i++) {
		if ((sh[i].sh_flags & SHF_ALLOC) && sh[i].sh_type != SHT_NOBITS &&
		    sh[i].sh_offset + sh[i].sh_size > cut) {
			pr_err(img->path, "section %s lies after the DWARF: cannot strip it",
			       names + sh[i].sh_name);
			return -EINVAL;
		}
	}
	pos = cut;
	for (size_t i = 1; i < eh->e_shnum; i++) {
		uint64_t align = sh[i].sh_addralign ? sh[i].sh_addralign : 1;

		if (is_debug_sec(sh, eh->e_shnum, i, names)) {
			l->off[i] = cut;
			l->size[i] = 0;
		} else if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_offset >= cut &&
			   i != eh->e_shstrndx) {
			pos = (pos + align - 1) / align * align;
			l->off[i] = pos;
			pos += sh[i].sh_size;
		}
	}
	l->copy_end = cut;
	l->end = pos;
	return 0;
}

/*
 * The input file as it is, copied by the kernel (most of a debug vmlinux is DWARF
 * kbolt never reads: it is not brought into memory for this).
 */
static int copy_input(struct kmeta_image *img, int out, uint64_t end)
{
	int in = open(img->path, O_RDONLY);
	loff_t off_in = 0, off_out = 0;
	int err = 0;

	if (in < 0)
		return -errno;
	while ((uint64_t)off_in < end) {
		ssize_t n = copy_file_range(in, &off_in, out, &off_out, end - off_in, 0);

		if (n > 0)
			continue;
		if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP) {
			err = -errno;
			break;
		}
		/* no kernel copy here: plain writes from the mapping */
		err = write_at(out, img->map + off_in, end - off_in, off_in);
		break;
	}
	close(in);
	return err;
}

/*
 * What kbolt may have changed: allocated sections and their relocations, and the
 * symbol table (the sizes of functions that grew into their padding)
 */
static bool is_rewritten_sec(struct kmeta_image *img, const GElf_Shdr *sh)
{
	if (sh->sh_type == SHT_NOBITS || !sh->sh_size)
		return false;
	if ((sh->sh_flags & SHF_ALLOC) || sh->sh_type == SHT_SYMTAB)
		return true;
	return sh->sh_type == SHT_RELA && sh->sh_info && sh->sh_info < img->nr_secs &&
	       (img->secs[sh->sh_info].flags & SHF_ALLOC);
}

/* Copy size bytes of the input at in_off to out_off of the output, by the kernel */
static int copy_range(int in, int out, uint64_t in_off, uint64_t out_off, uint64_t size)
{
	loff_t oi = in_off, oo = out_off;

	while (size) {
		ssize_t n = copy_file_range(in, &oi, out, &oo, size, 0);

		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		size -= n;
	}
	return 0;
}

/* Where the runs of one section go */
struct section_copy {
	struct kmeta_image *img;
	int in, out;
	uint64_t in_off, out_off;	/* the section's offsets in the input and the output */
	bool in_place;			/* the copy of the input has its unchanged bytes */
};

/*
 * A run of a section's bytes: written ones from memory, the others from the input
 * file (nothing to do where the copy of the input already has them), falling back to
 * memory where the kernel cannot copy.
 */
static int write_run(void *ctx, uint64_t off, uint64_t size, bool written)
{
	struct section_copy *c = ctx;
	uint64_t to = c->out_off + (off - c->in_off);

	if (!written && c->in_place)
		return 0;
	if (!written && c->in >= 0 && !copy_range(c->in, c->out, off, to, size))
		return 0;
	return write_at(c->out, c->img->map + off, size, to);
}

/*
 * What kbolt changed, and what the layout moved, at the sections' new places.  Only
 * the pages kbolt wrote come from memory: the rest, the bulk of the relocations and
 * the code, never has to be read into it.
 */
static int write_sections(struct kmeta_image *img, int fd, const struct out_layout *l)
{
	struct section_copy c = { .img = img, .out = fd, .in = open(img->path, O_RDONLY) };
	int err = 0;

	for (size_t i = 1; i < img->nr_secs && !err; i++) {
		struct kmeta_sec *sec = &img->secs[i];
		const struct output_sec *changed = changed_sec(l, i);
		GElf_Shdr sh;

		if (!gelf_getshdr(sec->scn, &sh) || sh.sh_offset + sh.sh_size > img->map_size ||
		    !l->size[i] || sh.sh_type == SHT_NOBITS)
			continue;
		if (changed && changed->data) {
			err = write_at(fd, changed->data, changed->size, l->off[i]);
			continue;
		}
		if (!changed && !is_rewritten_sec(img, &sh) && l->off[i] == sh.sh_offset)
			continue;	/* copied with the input */
		/* tables are rewritten through sec->data: it must be the mapping's bytes */
		if (sec->data && sh.sh_type != SHT_RELA && sec->data != img->map + sh.sh_offset) {
			err = write_at(fd, sec->data, l->size[i], l->off[i]);
			continue;
		}
		c.in_off = sh.sh_offset;
		c.out_off = l->off[i];
		c.in_place = l->off[i] == sh.sh_offset && sh.sh_offset + l->size[i] <= l->copy_end;
		err = kmeta_for_each_page_run(img, sh.sh_offset, l->size[i], write_run, &c);
	}
	if (c.in >= 0)
		close(c.in);
	return err;
}

static void put_shdr(unsigned char *p, const Elf64_Shdr *sh)
{
	memcpy(p, sh, sizeof(*sh));	/* x86-64 only: host and file are little-endian */
}

/*
 * The file's tail: note, translation table (if any), section names, section headers
 * (all after the old contents)
 */
static int write_tail(struct kmeta_image *img, int fd, const char *record,
		      const struct output_extra *bat, const struct out_layout *l)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->map;
	uint64_t off = l->end, note_off, bat_off, names_off, shoff;
	size_t namesz = strlen("kbolt") + 1, descsz = strlen(record) + 1;
	size_t note_size = 12 + ((namesz + 3) & ~3U) + ((descsz + 3) & ~3U);
	const Elf64_Shdr *old_sh = (const Elf64_Shdr *)(img->map + eh->e_shoff);
	const Elf64_Shdr *str_sh = &old_sh[eh->e_shstrndx];
	size_t bat_size = bat ? bat->size : 0, nr_new = bat ? 2 : 1;
	size_t names_size = str_sh->sh_size + strlen(".note.kbolt") + 1 +
			    (bat ? strlen(BAT_SEC_NAME) + 1 : 0);
	size_t tail_size, nr = eh->e_shnum;
	unsigned char *tail;
	Elf64_Shdr sh;
	Elf64_Ehdr neh = *eh;
	int err;

	note_off = (off + 7) & ~7ULL;
	bat_off = note_off + note_size;
	names_off = bat_off + bat_size;
	shoff = (names_off + names_size + 7) & ~7ULL;
	tail_size = shoff + (nr + nr_new) * sizeof(Elf64_Shdr) - off;
	tail = xcalloc(1, tail_size);
	put_u32(tail + note_off - off, namesz);
	put_u32(tail + note_off - off + 4, descsz);
	put_u32(tail + note_off - off + 8, NT_KBOLT);
	memcpy(tail + note_off - off + 12, "kbolt", namesz);
	memcpy(tail + note_off - off + 12 + ((namesz + 3) & ~3U), record, descsz);
	memcpy(tail + names_off - off, img->map + str_sh->sh_offset, str_sh->sh_size);
	memcpy(tail + names_off - off + str_sh->sh_size, ".note.kbolt", strlen(".note.kbolt") + 1);
	if (bat) {
		memcpy(tail + bat_off - off, bat->data, bat_size);
		memcpy(tail + names_off - off + str_sh->sh_size + strlen(".note.kbolt") + 1,
		       BAT_SEC_NAME, strlen(BAT_SEC_NAME) + 1);
	}
	for (size_t i = 0; i < nr; i++) {
		sh = old_sh[i];
		sh.sh_offset = l->off[i];
		sh.sh_size = l->size[i];
		if (i == eh->e_shstrndx) {
			sh.sh_offset = names_off;
			sh.sh_size = names_size;
		}
		put_shdr(tail + shoff - off + i * sizeof(sh), &sh);
	}
	sh = (Elf64_Shdr){ .sh_name = str_sh->sh_size, .sh_type = SHT_NOTE,
			   .sh_offset = note_off, .sh_size = note_size, .sh_addralign = 4 };
	put_shdr(tail + shoff - off + nr * sizeof(sh), &sh);
	if (bat) {	/* not loaded (no SHF_ALLOC): no byte the kernel sees changes */
		sh = (Elf64_Shdr){ .sh_name = str_sh->sh_size + strlen(".note.kbolt") + 1,
				   .sh_type = SHT_PROGBITS, .sh_offset = bat_off,
				   .sh_size = bat_size, .sh_addralign = 1 };
		put_shdr(tail + shoff - off + (nr + 1) * sizeof(sh), &sh);
	}
	neh.e_shoff = shoff;
	neh.e_shnum = nr + nr_new;
	err = copy_input(img, fd, l->copy_end);
	if (!err)
		err = write_sections(img, fd, l);
	if (!err)
		err = write_at(fd, &neh, sizeof(neh), 0);
	if (!err)
		err = write_at(fd, tail, tail_size, off);
	free(tail);
	return err;
}

static bool can_extend(struct kmeta_image *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->map;

	return img->map_size >= sizeof(*eh) && eh->e_shnum && eh->e_shnum < SHN_LORESERVE &&
	       eh->e_shstrndx < eh->e_shnum && eh->e_shentsize == sizeof(Elf64_Shdr) &&
	       eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) <= img->map_size;
}

int output_write(struct kmeta_image *img, struct outfile *of, const char *record,
		 const struct output_extra *bat, bool strip_debug)
{
	return output_write_secs(img, of, record, bat, strip_debug, NULL);
}

int output_write_secs(struct kmeta_image *img, struct outfile *of, const char *record,
		      const struct output_extra *bat, bool strip_debug,
		      const struct output_secs *secs)
{
	struct out_layout l = { .secs = strip_debug ? NULL : secs };
	int err;

	if (!can_extend(img)) {
		pr_err(img->path, "section headers kbolt cannot extend");
		return -EINVAL;
	}
	set_build_id(img, record);
	err = plan_layout(img, strip_debug, &l);
	if (!err)
		err = write_tail(img, of->fd, record, bat, &l);
	free(l.off);
	free(l.size);
	if (err)
		pr_err(of->path, "cannot write: %s", strerror(-err));
	return err;
}
