/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_HEATMAP_H
#define KBOLT_HEATMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct heatmap_options {
	const char *optimized;	/* --optimized OUT: draw where the code lies in it too */
	bool force, json, pretty;
};

/*
 * kbolt heatmap: the executed code of profile over vmlinux's text, drawn to out (SVG,
 * or PNG if out ends in .png), and its footprint printed.  0, or 1 after reporting;
 * nothing is written at out on failure.
 */
int kbolt_heatmap(const char *vmlinux, const char *profile, const char *out,
		  const struct heatmap_options *o);

/* heatmap_png.c: an RGB image of width x height, rows top down, to f */
int heatmap_write_png(FILE *f, const unsigned char *rgb, uint32_t width, uint32_t height);

#endif
