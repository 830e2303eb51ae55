#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tool tests of kmeta on Debian's kernels (scripts/kernels.conf).

Every table is decoded a second, independent way here (pyelftools and struct, from the
kernel's own struct definitions, per kernel series: FORMATS) and compared entry by entry
with `kmeta dump -j`, and the counts with `kmeta summary -j`.  Then `kmeta check` must
pass on each clean kernel, and a few entries are checked against facts known from the
kernel source: among them, the exported symbols (__ksymtab; 7.x's __kflagstab) and the
sealed endbr are functions' starts, which kbolt never moves.  The 6.1 and 6.12 kernels are the tests' own (scripts/fetch-kernels);
5.10 (GCC 10) and 7.3 are read when fetched.  TAP output.
"""
import json
import os
import struct
import subprocess
import sys

from elftools.elf.elffile import ELFFile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KMETA = os.environ.get("KMETA", os.path.join(TOP, "kmeta/kmeta"))
if not os.path.isabs(KMETA):
    KMETA = os.path.join(TOP, KMETA)

passed = failed = skipped = 0
n = 0


def ok(cond, desc, *diag):
    global passed, failed, n
    n += 1
    if cond:
        passed += 1
        print(f"ok {n} - {desc}")
    else:
        failed += 1
        print(f"not ok {n} - {desc}")
        for d in diag:
            print("# " + str(d)[:500])


def skip(desc, why):
    global skipped, n
    n += 1
    skipped += 1
    print(f"ok {n} - {desc} # SKIP {why}")


def conf():
    out = {}
    with open(os.path.join(TOP, "scripts/kernels.conf")) as f:
        for line in f:
            if "=" in line and not line.startswith("#") and "$" not in line:
                k, v = line.strip().split("=", 1)
                out[k] = v
    cache = os.environ.get("KBOLT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kbolt")
    return out, cache


class Image:
    """Just enough of a vmlinux: sections by address, symbols, little-endian reads."""

    def __init__(self, path):
        self.f = open(path, "rb")
        self.elf = ELFFile(self.f)
        self.secs = [s for s in self.elf.iter_sections()
                     if s["sh_flags"] & 2 and s["sh_addr"] and s["sh_type"] != "SHT_NOBITS"]
        self.data = {}
        self.syms = {}
        self.func_starts = set()
        self.addrs = set()
        for s in self.elf.get_section_by_name(".symtab").iter_symbols():
            if s.name and s["st_shndx"] != "SHN_UNDEF":
                self.syms.setdefault(s.name, s["st_value"])
                self.addrs.add(s["st_value"])
                if s["st_info"]["type"] == "STT_FUNC":
                    self.func_starts.add(s["st_value"])

    def sec_of(self, addr):
        for s in self.secs:
            if s["sh_addr"] <= addr < s["sh_addr"] + s["sh_size"]:
                return s
        return None

    def read(self, addr, size):
        s = self.sec_of(addr)
        if s.name not in self.data:
            self.data[s.name] = s.data()
        off = addr - s["sh_addr"]
        return self.data[s.name][off:off + size]

    def bounds(self, start, stop):
        if start in self.syms and stop in self.syms:
            return self.syms[start], self.syms[stop]
        return None

    def area(self, addr):
        s = self.sec_of(addr)
        return s.name if s is not None and s.name in (".text", ".init.text") else "other"


def s32_list(img, start, stop):
    """Tables of s32 self-relative pointers; a 0 slot is filler."""
    b = img.bounds(start, stop)
    if not b:
        return None
    raw = img.read(b[0], b[1] - b[0])
    out = []
    for i in range(0, len(raw), 4):
        v = struct.unpack_from("<i", raw, i)[0]
        out.append(None if v == 0 else b[0] + i + v)
    return out


def fixed(img, start, stop, size, fields, cut=0):
    """Fixed-size entries; fields: list of (offset, 'rel32'|'rel64'|'abs64'|fmt); the last
    entry cut bytes short."""
    b = img.bounds(start, stop)
    if not b:
        return None
    raw = img.read(b[0], b[1] - b[0]) + bytes(cut)
    out = []
    for i in range(0, len(raw), size):
        ent = []
        for off, kind in fields:
            a = b[0] + i + off
            if kind == "rel32":
                ent.append((a + struct.unpack_from("<i", raw, i + off)[0]) & (2**64 - 1))
            elif kind == "rel64":
                ent.append((a + struct.unpack_from("<q", raw, i + off)[0]) & (2**64 - 1))
            elif kind == "abs64":
                ent.append(struct.unpack_from("<Q", raw, i + off)[0])
            else:
                ent.append(struct.unpack_from("<" + kind, raw, i + off)[0])
        out.append(ent)
    return out


# What differs per kernel series, from its source: alt_instr's size, the bug entry's fields
# (7.x: the format after the address), the third field of an exception entry (5.10: a
# relative pointer to the handler), .parainstructions (gone in 6.8; 5.10's last entry
# lacks its 4 bytes of tail padding), and the tables of the kernel's config.
FORMATS = {
    "5.10": dict(alt=12, bug=[(0, "rel32"), (4, "rel32"), (8, "H"), (10, "H")],
                 ex3="rel32", paravirt=True, sites=("smp_locks", "retpoline_sites",
                                                     "return_sites")),
    "6.1": dict(alt=12, bug=[(0, "rel32"), (4, "rel32"), (8, "H"), (10, "H")],
                ex3="i", paravirt=True, sites=("smp_locks", "retpoline_sites", "return_sites")),
    "6.12": dict(alt=14, bug=[(0, "rel32"), (4, "rel32"), (8, "H"), (10, "H")],
                 ex3="i", paravirt=False, sites=("smp_locks", "retpoline_sites",
                                                  "return_sites", "call_sites",
                                                  "ibt_endbr_seal", "runtime_const")),
    "7.3": dict(alt=14, bug=[(0, "rel32"), (8, "rel32"), (12, "H"), (14, "H"), (4, "rel32")],
                ex3="i", paravirt=False, sites=("retpoline_sites", "return_sites",
                                                 "call_sites", "ibt_endbr_seal",
                                                 "runtime_const")),
}


def independent_tables(img, fmt):
    """table -> list of entries (first element the site; None for filler slots)."""
    t = {}
    for name, a, b in [("smp_locks", "__smp_locks", "__smp_locks_end"),
                       ("retpoline_sites", "__retpoline_sites", "__retpoline_sites_end"),
                       ("return_sites", "__return_sites", "__return_sites_end"),
                       ("call_sites", "__call_sites", "__call_sites_end"),
                       ("ibt_endbr_seal", "__ibt_endbr_seal", "__ibt_endbr_seal_end")]:
        lst = s32_list(img, a, b)
        if lst is not None:
            t[name] = [[s] if s is not None else None for s in lst]
    alt_size = fmt["alt"]
    t["alternatives"] = fixed(img, "__alt_instructions", "__alt_instructions_end", alt_size,
                              [(0, "rel32"), (4, "rel32"), (alt_size - 2, "B"),
                               (alt_size - 1, "B")])
    if fmt["paravirt"]:
        b = img.bounds("__parainstructions", "__parainstructions_end")
        cut = (16 - (b[1] - b[0]) % 16) % 16	# 5.10: no padding after the last entry
        t["paravirt"] = fixed(img, "__parainstructions", "__parainstructions_end", 16,
                              [(0, "abs64"), (8, "B"), (9, "B")], cut)
    t["jump_table"] = fixed(img, "__start___jump_table", "__stop___jump_table", 16,
                            [(0, "rel32"), (4, "rel32"), (8, "rel64")])
    t["static_call_sites"] = fixed(img, "__start_static_call_sites",
                                   "__stop_static_call_sites", 8, [(0, "rel32"), (4, "rel32")])
    mc = fixed(img, "__start_mcount_loc", "__stop_mcount_loc", 8, [(0, "abs64")])
    t["mcount_loc"] = [e if e[0] else None for e in mc]
    t["ex_table"] = fixed(img, "__start___ex_table", "__stop___ex_table", 12,
                          [(0, "rel32"), (4, "rel32"), (8, fmt["ex3"])])
    bug_size = max(off for off, _ in fmt["bug"]) + 2
    t["bug_table"] = fixed(img, "__start___bug_table", "__stop___bug_table", bug_size,
                           fmt["bug"])
    ip = s32_list(img, "__start_orc_unwind_ip", "__stop_orc_unwind_ip")
    orc = fixed(img, "__start_orc_unwind", "__stop_orc_unwind", 6,
                [(0, "h"), (2, "h"), (4, "H")])
    t["orc"] = [[a] + o for a, o in zip(ip, orc)]
    t["kprobe_blacklist"] = fixed(img, "__start_kprobe_blacklist", "__stop_kprobe_blacklist",
                                  8, [(0, "abs64")])
    return t


def kmeta_json(*args):
    r = subprocess.run([KMETA, *args, "-j"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"kmeta {' '.join(args)}: exit {r.returncode}: {r.stderr[:300]}")
    return json.loads(r.stdout)


def kmeta_entry(table, e):
    """The same tuple as independent_tables() builds, from a `kmeta dump -j` entry."""
    h = lambda k: int(e[k], 16)
    r = lambda k: e[k + "_raw"]
    site = h("site_addr")
    if table in ("smp_locks", "retpoline_sites", "return_sites", "call_sites",
                 "ibt_endbr_seal", "mcount_loc", "kprobe_blacklist"):
        return [site]
    if table == "alternatives":
        return [site, h("replacement_addr"), r("instrlen"), r("replacementlen")]
    if table == "paravirt":
        return [site, r("type"), r("len")]
    if table == "jump_table":
        # kmeta masks the key's flag bits into "|0xN" of the text; the address is clean
        flags = int(e["key"].split("|")[1], 16) if "|" in e["key"] else 0
        return [site, h("target_addr"), h("key_addr") + flags]
    if table == "static_call_sites":
        flags = int(e["key"].split("|")[1], 16) if "|" in e["key"] else 0
        return [site, h("key_addr") + flags]
    if table == "ex_table":
        return [site, h("fixup_addr"), h("handler_addr") if "handler" in e else r("data")]
    if table == "bug_table":
        fmt = [h("format_addr")] if "format" in e else []
        return [site, h("file_addr"), r("line"), r("flags")] + fmt
    if table == "orc":
        return [site, r("sp_offset"), r("bp_offset"), r("bits")]
    raise KeyError(table)


def test_kernel(label, path, fmt):
    img = Image(path)
    ref = independent_tables(img, fmt)
    summary = kmeta_json("summary", path)["tables"]
    for table, entries in sorted(ref.items()):
        real = [e for e in entries if e is not None]
        got = summary[table]
        ok(got["entries"] == len(real) and got["filler"] == len(entries) - len(real),
           f"{label}: {table}: {len(real)} entries, {len(entries) - len(real)} filler",
           f"kmeta summary says {got['entries']} entries, {got['filler']} filler")
        areas = {".text": 0, ".init.text": 0, "other": 0}
        for e in real:
            areas[img.area(e[0])] += 1
        ok((got["text"], got["init_text"], got["other"]) ==
           (areas[".text"], areas[".init.text"], areas["other"]),
           f"{label}: {table}: sites by area {areas}",
           f"kmeta: {got['text']} {got['init_text']} {got['other']}")
        dumped = kmeta_json("dump", table, path)["entries"]
        mine = [kmeta_entry(table, e) for e in dumped]
        bad = [(a, b) for a, b in zip(real, mine) if a != b]
        ok(len(mine) == len(real) and not bad,
           f"{label}: {table}: every entry decodes as the independent reader's",
           f"{len(mine)} vs {len(real)} entries; first difference: {bad[:1]}")
    for table in ("smp_locks", "call_sites", "ibt_endbr_seal", "runtime_const"):
        want = table in fmt["sites"]
        ok(summary[table]["present"] == want,
           f"{label}: {table} {'present' if want else 'absent'} as in the kernel's config")
    ok(summary["paravirt"]["present"] == fmt["paravirt"],
       f"{label}: paravirt table {'present' if fmt['paravirt'] else 'absent'}")
    r = subprocess.run([KMETA, "check", path], capture_output=True, text=True)
    ok(r.returncode == 0 and r.stdout == "", f"{label}: kmeta check passes on the clean kernel",
       r.stdout[:400], r.stderr[:400])
    return img


# The first two ORC entries of schedule() in objtool's notation, per series: 6.12's endbr64
# and call-depth padding move the first past +0; 7.3's schedule() starts with its
# frame set up through %rdi
SCHEDULE_ORC = {
    "5.10": ("schedule ", " sp:sp+8 bp:(und) type:call end:0"),
    "6.1": ("schedule ", " sp:sp+8 bp:(und) type:call end:0"),
    "6.12": ("schedule+", " type:call sp:sp+16 bp:(und) signal:0"),
    "7.3": ("schedule+", " type:call sp:di+16 bp:(und) signal:0"),
}


def test_symbolic(label, path, series):
    """Entries whose decoding the kernel source fixes."""
    ex = kmeta_json("dump", "ex_table", path)["entries"]
    if series == "5.10":
        # before 5.16 an entry names its handler function
        handlers = {e["handler"] for e in ex}
        ok("ex_handler_default" in handlers and "ex_handler_uaccess" in handlers and
           all(h.startswith("ex_handler_") for h in handlers),
           f"{label}: ex_table handlers are ex_handler_* functions", sorted(handlers)[:10])
    else:
        # copy_user_generic's uaccess: its ex_table entries are EX_TYPE_UACCESS or DEFAULT
        types = {e["data"].split(",")[0] for e in ex}
        ok("EX_TYPE_UACCESS" in types and "EX_TYPE_DEFAULT" in types,
           f"{label}: ex_table types decode by name", sorted(types)[:10])
    if series == "7.3":
        bug = kmeta_json("dump", "bug_table", path)["entries"]
        args = [e for e in bug if "ARGS" in e["flags"]]
        ok(len(args) > 1000 and all("WARNING" in e["flags"] for e in args) and
           any(e["format"] == "%s" or "%" in e["format"] for e in args),
           f"{label}: bug_table: {len(args)} WARNs with arguments and their format strings",
           args[:1])
    alt = kmeta_json("dump", "alternatives", path)["entries"]
    feat = "cpuid" if FORMATS[series]["alt"] == 12 else "ft_flags"
    names = {e[feat] for e in alt}
    ok(any(n.startswith("X86_FEATURE_SMAP") for n in names)
       and any(n.startswith("X86_BUG_") or n.startswith("!X86_") for n in names),
       f"{label}: alternative features decode by name (SMAP, bugs, NOT)")
    sc = kmeta_json("dump", "static_call_sites", path)["entries"]
    ok(all(e["key"].startswith("__SCK__") for e in sc),
       f"{label}: every static call key of vmlinux is a __SCK__ symbol")
    orc = subprocess.run([KMETA, "dump", "orc", path, "--func", "schedule"],
                         capture_output=True, text=True).stdout.splitlines()
    want = SCHEDULE_ORC[series]
    ok(orc and orc[0].startswith(want[0]) and orc[0].endswith(want[1]),
       f"{label}: ORC of schedule in objtool notation", orc[:2])
    one = kmeta_json("dump", "ex_table", path, "--func", "copy_user_generic*")["entries"]
    ok(all(e["site"].startswith("copy_user_generic") for e in one),
       f"{label}: dump --func filters by function", len(one))


def test_exports(label, path, series):
    """__ksymtab (and 6.1's __ksymtab_gpl; 7.x's __kflagstab, a byte of flags per entry,
    which replaced it): every exported symbol in .text and .init.text is a function's
    start, which kbolt never moves, or an asm label: a thunk without a type, or inside a
    function (__put_user_nocheck_1), which keeps that function as it is (symbol_inside).
    No entry ever changes."""
    img = Image(path)
    starts = [e[0] for t in ("", "_gpl")
              for e in fixed(img, f"__start___ksymtab{t}", f"__stop___ksymtab{t}", 12,
                             [(0, "rel32")]) or []]
    code = [a for a in starts if img.area(a) != "other"]
    labels = [a for a in code if a not in img.func_starts]
    ok(len(code) > 5000 and len(labels) < 100 and all(a in img.addrs for a in labels),
       f"{label}: the {len(code)} exported symbols in code are functions' starts, "
       f"or {len(labels)} asm labels", [hex(a) for a in labels[:5]])
    seal = kmeta_json("dump", "ibt_endbr_seal", path).get("entries", [])
    if series in ("5.10", "6.1"):
        ok(not seal, f"{label}: no sealed endbr (built without IBT)")
    else:
        ok(len(seal) > 1000 and all("+" not in e["site"] for e in seal),
           f"{label}: all {len(seal)} sealed endbr are functions' starts, which never move")
    flags = img.bounds("__start___kflagstab", "__stop___kflagstab")
    if series == "7.3":
        ok(flags and flags[1] - flags[0] == len(starts) and
           not img.bounds("__start___ksymtab_gpl", "__stop___ksymtab_gpl"),
           f"{label}: __kflagstab has a byte for each of the {len(starts)} __ksymtab "
           f"entries, and there is no __ksymtab_gpl", flags)
    else:
        ok(not flags, f"{label}: no __kflagstab")


def main():
    c, cache = conf()
    kernels = [("6.1", "KERNEL_61", "6.1"), ("6.12", "KERNEL_612", "6.12"),
               ("5.10", "KERNEL_510", "5.10"), ("7.3", "KERNEL_73", "7.3")]
    for label, var, series in kernels:
        path = os.path.join(cache, c[var + "_RELEASE"], "vmlinux")
        if not os.path.exists(path):
            skip(f"{label}: tables of the Debian kernel",
                 f"not fetched: run scripts/fetch-kernels {label}")
            continue
        test_kernel(label, path, FORMATS[series])
        test_symbolic(label, path, series)
        test_exports(label, path, series)
    line = f"{passed} passed, {failed} failed"
    print(line + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
