// SPDX-License-Identifier: GPL-2.0
/*
 * The heatmap as a PNG (ISO/IEC 15948, RFC 2083): the signature, then chunks of a
 * big-endian length, a four-letter type, the data and a CRC-32 of type and data.
 * IHDR: 8-bit RGB, no interlace; IDAT: the zlib stream of every row, each behind its
 * filter byte (0, none: the picture is mostly runs of one colour, which deflate
 * already packs); IEND.  zlib is included here only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../common/util.h"
#include "heatmap.h"

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void write_chunk(FILE *f, const char *type, const unsigned char *data, uint32_t size)
{
	unsigned char be[4];
	uLong crc = crc32(0L, (const Bytef *)type, 4);

	if (size)
		crc = crc32(crc, data, size);
	put_be32(be, size);
	fwrite(be, 1, 4, f);
	fwrite(type, 1, 4, f);
	if (size)
		fwrite(data, 1, size, f);
	put_be32(be, crc);
	fwrite(be, 1, 4, f);
}

int heatmap_write_png(FILE *f, const unsigned char *rgb, uint32_t width, uint32_t height)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t stride = (size_t)width * 3, raw_size = (stride + 1) * height;
	unsigned char ihdr[13] = { 0 }, *raw = xmalloc(raw_size), *z;
	uLongf z_size = compressBound(raw_size);
	int zerr;

	put_be32(ihdr, width);
	put_be32(ihdr + 4, height);
	ihdr[8] = 8;		/* bits per sample */
	ihdr[9] = 2;		/* colour type: RGB */
	for (uint32_t y = 0; y < height; y++) {
		raw[y * (stride + 1)] = 0;	/* filter: none */
		memcpy(raw + y * (stride + 1) + 1, rgb + y * stride, stride);
	}
	z = xmalloc(z_size);
	zerr = compress2(z, &z_size, raw, raw_size, Z_BEST_COMPRESSION);
	free(raw);
	if (zerr != Z_OK) {
		pr_err(NULL, "zlib: %s", zError(zerr));
		free(z);
		return -EINVAL;
	}
	fwrite(sig, 1, sizeof(sig), f);
	write_chunk(f, "IHDR", ihdr, sizeof(ihdr));
	write_chunk(f, "IDAT", z, z_size);
	write_chunk(f, "IEND", NULL, 0);
	free(z);
	return 0;
}
