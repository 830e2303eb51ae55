// SPDX-License-Identifier: GPL-2.0
/*
 * Compressed modules (.ko.xz, .ko.zst, as kmod installs them): decompressed whole into
 * memory with liblzma or libzstd, the only file that includes them.
 */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

bool compress_is_compressed(const char *path)
{
	return has_suffix(path, ".xz") || has_suffix(path, ".zst");
}

static int read_all(struct kmeta_image *img, int fd, unsigned char **buf, size_t *size)
{
	struct stat st;
	size_t done = 0;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		pr_err(img->path, "not a regular file");
		return -EINVAL;
	}
	*size = st.st_size;
	*buf = xmalloc(*size);
	while (done < *size) {
		ssize_t n = read(fd, *buf + done, *size - done);

		if (n <= 0) {
			pr_err(img->path, "read: %s", n ? strerror(errno) : "short read");
			free(*buf);
			return -EIO;
		}
		done += n;
	}
	return 0;
}

static int unxz(struct kmeta_image *img, const unsigned char *in, size_t in_size)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = in_size * 4 + 4096;
	lzma_ret ret;

	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK) {
		pr_err(img->path, "liblzma: cannot initialise the decoder");
		return -ENOMEM;
	}
	img->map = xmalloc(cap);
	strm.next_in = in;
	strm.avail_in = in_size;
	do {
		if (strm.total_out == cap) {
			cap *= 2;
			img->map = xrealloc(img->map, cap);
		}
		strm.next_out = img->map + strm.total_out;
		strm.avail_out = cap - strm.total_out;
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	img->map_size = strm.total_out;
	lzma_end(&strm);
	if (ret != LZMA_STREAM_END) {
		pr_err(img->path, "xz: corrupt or truncated data (liblzma error %d)", ret);
		return -EINVAL;
	}
	return 0;
}

static int unzstd(struct kmeta_image *img, const unsigned char *in, size_t in_size)
{
	unsigned long long n = ZSTD_getFrameContentSize(in, in_size);
	size_t got;

	if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > (1ULL << 32)) {
		pr_err(img->path, "zstd: not a zstd frame with a known size");
		return -EINVAL;
	}
	img->map = xmalloc(n);
	got = ZSTD_decompress(img->map, n, in, in_size);
	if (ZSTD_isError(got) || got != n) {
		pr_err(img->path, "zstd: %s", ZSTD_isError(got) ? ZSTD_getErrorName(got) :
		       "short frame");
		return -EINVAL;
	}
	img->map_size = n;
	return 0;
}

int compress_read_file(struct kmeta_image *img, int fd)
{
	unsigned char *in;
	size_t in_size;
	int err = read_all(img, fd, &in, &in_size);

	if (err)
		return err;
	img->map_is_heap = true;
	err = has_suffix(img->path, ".xz") ? unxz(img, in, in_size) : unzstd(img, in, in_size);
	free(in);
	return err;
}
