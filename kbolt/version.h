/* SPDX-License-Identifier: GPL-2.0 */
/* kbolt's version, as --version prints it and every output's .note.kbolt records it */
#ifndef KBOLT_VERSION_H
#define KBOLT_VERSION_H

#define KBOLT_VERSION_STRING "0.1"

#endif
