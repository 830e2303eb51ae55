# SPDX-License-Identifier: GPL-2.0
#
# kbolt toolkit.  make: build kmeta/kmeta, kbolt/kbolt, the two QEMU plugins
# (kbolt/kbolt-qemu-plugin.so, kbolt/kbolt-eval-plugin.so) and the man pages; make check:
# every test; make check-quick: those that need no kernel; make install PREFIX=...:
# binaries and man pages.  V=1 shows full commands, SANITIZE=1 builds with
# AddressSanitizer and UndefinedBehaviorSanitizer, WERROR=1 (set in CI) turns warnings
# into errors.

PREFIX ?= /usr/local
CC ?= gcc
V ?= 0
SANITIZE ?= 0
WERROR ?= $(if $(CI),1,0)

ifeq ($(V),1)
Q :=
quiet = @true
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q := @
quiet = @true
else
Q := @
quiet = @printf '  %-4s %s\n'
endif

# Every library through pkg-config; a missing one stops the build with the package name.
PKGS := libelf libdw capstone libbpf libkmod liblzma libzstd zlib yaml-0.1
deb_libelf := libelf-dev
deb_libdw := libdw-dev
deb_capstone := libcapstone-dev
deb_libbpf := libbpf-dev
deb_libkmod := libkmod-dev
deb_liblzma := liblzma-dev
deb_libzstd := libzstd-dev
deb_zlib := zlib1g-dev
deb_yaml-0.1 := libyaml-dev
ifeq ($(filter clean help,$(MAKECMDGOALS)),)
$(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) && echo y),,\
  $(error $(p) not found by pkg-config: install Debian's $(deb_$(p)) (scripts/install-deps does))))
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS := $(shell pkg-config --libs $(PKGS))
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow -D_GNU_SOURCE -MMD -MP
CFLAGS += $(PKG_CFLAGS) -pthread
LDFLAGS += -pthread
ifeq ($(WERROR),1)
CFLAGS += -Werror
endif
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
OUT := .build/san
else
OUT := .build/default
endif

# common/: the project's own helpers (allocation, messages, JSON, sorting), under both
COMMON_LIB_SRCS := $(addprefix common/, util.c json.c)
KMETA_LIB_SRCS := $(addprefix kmeta/, image.c elf.c sym.c reloc.c version.c btf.c \
	insn.c compress.c table.c check.c module.c sites.c remap.c scan.c \
	addr_index.c pages.c padding.c) $(wildcard kmeta/tables/*.c)
KMETA_SRCS := $(addprefix kmeta/, main.c cmd_summary.c cmd_dump.c cmd_check.c cmd_diff.c)

# kbolt's library, one folder a stage (Documentation/design.rst, "The source tree"):
# lib/ generic helpers; profile/ the formats; model/ the optimizer's model; pass/ its
# passes in pipeline order (kbolt/pass/optimize.c is their table of contents); dwarf/
# the passes that rewrite the debug information; verify/ the proof, which knows kmeta
# and lib/ only; report/ what is drawn or counted from a profile or a layout, and
# other tools' outputs mended
KBOLT_LIB_SRCS := $(addprefix kbolt/lib/, parallel.c outfile.c output.c bat_format.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/profile/, profile.c cu_path.c prof_kbolt.c prof_bolt.c prof_perf.c \
	prof_fdata.c merge.c profile_match.c profile_symbols.c check_profile.c func_hash.c \
	portable.c portable_match.c translate.c prof_yaml.c yaml_map.c yaml_write.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/model/, func.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/pass/, optimize.c decode.c refs.c cfg.c prof_map.c infer.c \
	layout.c ext_tsp.c emit.c orc_gen.c rewrite.c bat_build.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/dwarf/, io.c line.c frame.c info.c info_walk.c loc.c addr.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/verify/, verify.c model.c walk.c flow.c meta.c values.c dwarf_tree.c \
	in_place.c dwarf.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/report/, heatmap.c heatmap_png.c dyno.c fix_sites.c)
KBOLT_LIB_SRCS += $(addprefix kbolt/record/, record_cmd.c perf_events.c cpu_list.c \
	sampler_load.c)
KBOLT_SRCS := kbolt/main.c

COMMON_LIB := $(OUT)/libcommon.a
KMETA_LIB := $(OUT)/libkmeta.a
KBOLT_LIB := $(OUT)/libkbolt.a
KBOLT_BIN := $(OUT)/kbolt/kbolt
KMETA_BIN := $(OUT)/kmeta/kmeta
MAN_PAGES := $(OUT)/man/kmeta.1 $(OUT)/man/kbolt.1

QEMU_PLUGIN := $(OUT)/kbolt/kbolt-qemu-plugin.so
EVAL_PLUGIN := $(OUT)/kbolt/kbolt-eval-plugin.so

all: $(KMETA_BIN) $(KBOLT_BIN) $(QEMU_PLUGIN) $(EVAL_PLUGIN) \
	$(if $(filter 0,$(SANITIZE)),kmeta/kmeta kbolt/kbolt kbolt/kbolt-qemu-plugin.so \
		kbolt/kbolt-eval-plugin.so) man

kmeta/kmeta: $(KMETA_BIN)
	$(Q)ln -sf ../$(KMETA_BIN) $@

kbolt/kbolt: $(KBOLT_BIN)
	$(Q)ln -sf ../$(KBOLT_BIN) $@

kbolt/kbolt-%-plugin.so: $(OUT)/kbolt/kbolt-%-plugin.so
	$(Q)ln -sf ../$< $@

$(QEMU_PLUGIN): kbolt/record/qemu_plugin.c kbolt/record/plugin.h kbolt/profile/record_order.h \
	kmeta/kernel_addr.h
$(EVAL_PLUGIN): kbolt/record/eval_plugin.c kbolt/record/plugin.h kbolt/record/fetch_sim.h \
	kmeta/kernel_addr.h

# Loaded by QEMU: plain C, no sanitizer runtime, no library but libc
$(QEMU_PLUGIN) $(EVAL_PLUGIN):
	$(quiet) CC $@
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter $(if $(filter 1,$(WERROR)),-Werror) \
		-shared -fPIC -fvisibility=hidden -o $@ $<

# kbolt record's BPF program (kbolt/record/sampler.bpf.c): compiled for the BPF target,
# with BTF (-g) for libbpf's CO-RE relocations and BTF-defined maps, its DWARF stripped,
# and embedded in the loader as bpftool's skeleton.  UAPI headers from the host's
# multiarch directory, as clang -target bpf has none of its own.
BPF_OBJ := $(OUT)/kbolt/record/sampler.bpf.o
BPF_SKEL := $(OUT)/kbolt/record/sampler.skel.h
MULTIARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)

$(BPF_OBJ): kbolt/record/sampler.bpf.c kbolt/record/record_agg.h kmeta/kernel_addr.h
	$(quiet) BPF $@
	@mkdir -p $(dir $@)
	$(Q)clang -target bpf -g -O2 -Wall $(if $(filter 1,$(WERROR)),-Werror) \
		-I/usr/include/$(MULTIARCH) -c -o $@.tmp $< && llvm-strip -g $@.tmp && mv $@.tmp $@

$(BPF_SKEL): $(BPF_OBJ)
	$(quiet) GEN $@
	$(Q)[ -x "$(BPFTOOL)" ] || { echo "bpftool not found: install Debian's bpftool (scripts/install-deps does)" >&2; exit 1; }
	$(Q)$(BPFTOOL) gen skeleton $< name sampler_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/kbolt/record/sampler_load.o: $(BPF_SKEL)
$(OUT)/kbolt/record/sampler_load.o: CFLAGS += -I$(OUT)/kbolt/record

$(OUT)/%.o: %.c
	$(quiet) CC $@
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(COMMON_LIB): $(COMMON_LIB_SRCS:%.c=$(OUT)/%.o)
	$(quiet) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

# One object, linked whole, whose only global symbols are the kmeta_ API: what the
# library's files share among themselves stays inside it
$(KMETA_LIB): $(KMETA_LIB_SRCS:%.c=$(OUT)/%.o)
	$(quiet) AR $@
	$(Q)rm -f $@ $(@:.a=.o) && ld -r -o $(@:.a=.o) $^ && \
		objcopy --wildcard --keep-global-symbol='kmeta_*' $(@:.a=.o) && \
		ar rcs $@ $(@:.a=.o)

$(KBOLT_LIB): $(KBOLT_LIB_SRCS:%.c=$(OUT)/%.o)
	$(quiet) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

# The rule that matters most: the proof knows the images, never the optimizer.  Checked
# on what the compiler read (its dependency file), so an indirect include counts too.
$(OUT)/kbolt/verify/%.o: kbolt/verify/%.c
	$(quiet) CC $@
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<
	$(Q)bad=$$(grep -Eo '[^ ]*/(model|pass|dwarf|profile|report)/[^ :]*' $(@:.o=.d) | head -n 1); \
	if [ -n "$$bad" ]; then \
		echo "$<: includes $$bad: kbolt/verify/ may use only kmeta/, common/ and kbolt/lib/" >&2; \
		rm -f $@; exit 1; fi

$(KMETA_BIN): $(KMETA_SRCS:%.c=$(OUT)/%.o) $(KMETA_LIB) $(COMMON_LIB)
	$(quiet) LINK $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(KBOLT_BIN): $(KBOLT_SRCS:%.c=$(OUT)/%.o) $(KBOLT_LIB) $(KMETA_LIB) $(COMMON_LIB)
	$(quiet) LINK $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

man: $(MAN_PAGES)

$(OUT)/man/%.1: Documentation/%.rst
	$(quiet) MAN $@
	@mkdir -p $(dir $@)
	$(Q)rst2man $< > $@.tmp && mv $@.tmp $@

UNIT_TESTS := $(patsubst %.c,$(OUT)/%,$(wildcard selftests/unit/*.c))

# The stage tests assemble their fixtures (selftests/fixtures/*.S) at run time, from here
$(OUT)/selftests/unit/%: selftests/unit/%.c $(KBOLT_LIB) $(KMETA_LIB) $(COMMON_LIB)
	$(quiet) CC $@
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DKBOLT_SRCDIR='"$(CURDIR)"' $(LDFLAGS) -o $@ $< $(KBOLT_LIB) \
		$(KMETA_LIB) $(COMMON_LIB) $(PKG_LIBS) -lm

check: all $(UNIT_TESTS)
	$(Q)KMETA=$(KMETA_BIN) KBOLT=$(KBOLT_BIN) OUT=$(OUT) selftests/run

# The edit-compile-test loop: the tests that need no kernel (fetched, built or booted),
# in under a minute (selftests/run, KBOLT_QUICK)
check-quick: all $(UNIT_TESTS)
	$(Q)KBOLT_QUICK=1 KMETA=$(KMETA_BIN) KBOLT=$(KBOLT_BIN) OUT=$(OUT) selftests/run

fuzz:
	$(Q)selftests/fuzz/run $(FUZZ_SECONDS)

bench: all
	$(Q)scripts/bench-kmeta $(KMETA_BIN)
	$(Q)scripts/bench-optimize $(KBOLT_BIN)

# What a package holds (debian/rules): the two programs, their man pages, the QEMU
# plugins under PREFIX/lib/kbolt/ (scripts/vmtest takes them from KBOLT_QEMU_PLUGIN),
# and the Kbuild series with kbuild-apply under PREFIX/share/kbolt/
# (Documentation/kbuild.rst)
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/kbolt
	install -m 755 $(KMETA_BIN) $(DESTDIR)$(PREFIX)/bin/kmeta
	install -m 755 $(KBOLT_BIN) $(DESTDIR)$(PREFIX)/bin/kbolt
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(QEMU_PLUGIN) $(EVAL_PLUGIN) $(DESTDIR)$(PREFIX)/lib/kbolt/
	for d in kbuild/*/; do \
		install -d $(DESTDIR)$(PREFIX)/share/kbolt/$$d && \
		install -m 644 $$d* $(DESTDIR)$(PREFIX)/share/kbolt/$$d || exit 1; done
	install -m 755 scripts/kbuild-apply $(DESTDIR)$(PREFIX)/share/kbolt/

clean:
	rm -rf .build kmeta/kmeta kbolt/kbolt kbolt/kbolt-qemu-plugin.so kbolt/kbolt-eval-plugin.so

help:
	@echo 'make [V=1] [SANITIZE=1] [WERROR=1]   build kmeta/kmeta, kbolt/kbolt, the QEMU plugins'
	@echo '                                     kbolt/kbolt-qemu-plugin.so and'
	@echo '                                     kbolt/kbolt-eval-plugin.so, and the man pages'
	@echo 'make check                           run every test (TAP), building the lab kernels'
	@echo '                                     on the way if they are not cached (minutes each)'
	@echo 'make check-quick                     the tests that need no kernel, in under a minute'
	@echo 'make fuzz [FUZZ_SECONDS=N]           fuzz the ELF, table and profile parsers'
	@echo 'make bench                           time kmeta, and kbolt next to llvm-bolt-19'
	@echo 'make install [PREFIX=/usr/local] [DESTDIR=]  binaries, man pages, QEMU plugins'

.PHONY: all man check check-quick fuzz bench install clean help

# only this build's: each build directory has its own objects
-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
