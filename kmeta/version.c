// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel release of an image: from linux_banner ("Linux version 6.1.0-57-cloud-amd64
 * (...)", init/version.c) in a vmlinux, from the vermagic in .modinfo of a module.
 * Table layouts fall back to the major.minor version when BTF does not describe them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void set_release(struct kmeta_image *img, const char *s, size_t len)
{
	unsigned int maj = 0, min = 0;

	if (len >= sizeof(img->release))
		len = sizeof(img->release) - 1;
	memcpy(img->release, s, len);
	img->release[len] = 0;
	if (sscanf(img->release, "%u.%u", &maj, &min) == 2)
		img->version = KMETA_VERSION(maj, min);
}

static void read_banner(struct kmeta_image *img)
{
	static const char prefix[] = "Linux version ";
	struct kmeta_sym *sym = kmeta_find_sym_by_name(img, "linux_banner");
	const char *s;

	if (!sym || sym->size <= sizeof(prefix))
		return;
	s = (const char *)kmeta_bytes_at(img, sym->addr, sym->size);
	if (!s || strncmp(s, prefix, sizeof(prefix) - 1) || !memchr(s, 0, sym->size))
		return;
	s += sizeof(prefix) - 1;
	set_release(img, s, strcspn(s, " "));
}

static void read_vermagic(struct kmeta_image *img)
{
	static const char key[] = "vermagic=";
	struct kmeta_sec *sec = kmeta_find_sec_by_name(img, ".modinfo");

	if (!sec || !sec->data)
		return;
	for (size_t off = 0; off < sec->size;) {
		const char *s = (const char *)sec->data + off;
		size_t len = strnlen(s, sec->size - off);

		if (len > sizeof(key) && !strncmp(s, key, sizeof(key) - 1)) {
			/* the last string may lack its NUL: look no further than len */
			size_t n = len - (sizeof(key) - 1);
			const char *space;

			s += sizeof(key) - 1;
			space = memchr(s, ' ', n);
			set_release(img, s, space ? (size_t)(space - s) : n);
			return;
		}
		off += len + 1;
	}
}

int kmeta_build_id(struct kmeta_image *img, char *buf, size_t size)
{
	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *sec = &img->secs[i];
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (sec->type != SHT_NOTE || !sec->data || !(data = elf_getdata(sec->scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) ||
			    size < 2 * nh.n_descsz + 1)
				continue;
			for (size_t k = 0; k < nh.n_descsz; k++)
				sprintf(buf + 2 * k, "%02x", desc[k]);
			return 0;
		}
	}
	return -ENOENT;
}

int kmeta_read_version(struct kmeta_image *img)
{
	if (img->is_module)
		read_vermagic(img);
	else
		read_banner(img);
	return 0;
}
