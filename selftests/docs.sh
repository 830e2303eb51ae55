#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Keep "kmeta --help", the man page (Documentation/kmeta.rst) and the table reference
# (Documentation/tables.rst) in agreement with the code.  Every option, command and table
# of --help is documented; every message kmeta/ can print (the format strings given to
# pr_err, pr_warn, check_report and fprintf(stderr), read from the sources) is listed in
# DIAGNOSTICS; the examples run on the 6.1 vmlinux and the summaries tables.rst quotes are
# what kmeta prints (examples on modules are not re-run); both .rst files render without
# warnings.  The checker first proves on doctored copies of its inputs that it can fail.
#
# The same for kbolt: every option and command of "kbolt --help" is in kbolt.rst, every
# message of kbolt/*/*.c (pr_err, pr_warn and printf formats, the problems the verifier
# reports through verify_fail(), the literal strings passed to them, the reasons
# check-profile gives) is in its DIAGNOSTICS, the JSON members
# check-profile prints are documented, kbolt.rst renders as a section 1 man page.  The
# QEMU plugin's profile kinds are the first of kbolt/profile/profile.c's, and all are described
# in profile-format.rst with the lines the plugin writes.  And for the boot lab: every
# option of "scripts/vmtest --help", its usage lines, every message of scripts/vmtest and
# of the plugin, every workload and each of its tests are in Documentation/lab.rst; the
# evaluation plugin's messages are in Documentation/evaluate.rst.
#
# What the two man pages say the programs do is run, on the flow fixture (a vmlinux
# assembled here, a profile of it), by conventions the pages keep:
# - OPTIONS: each entry's description starts with the commands that take the option
#   ("**optimize**, **heatmap**: ...", "**dump** only: ..."; none: every command), and a
#   paragraph quotes the message and the exit status ("exits N") with which the other
#   commands refuse it.  Every option is given to every command: taken (not exit 2) or
#   refused so.  The synopses show, for each command, the options it takes and no
#   others; each command's usage message is in DIAGNOSTICS and shows only those.
# - EXIT STATUS: a bullet list under each status.  Each item has one or more cases in
#   this file (its text without markup, a command line), which exit with that status;
#   their error message is listed under a DIAGNOSTICS title saying "(exit status N)";
#   optimize's failures leave no file behind.
# - kbolt.rst, "Statistics": each line of optimize --stats is described by a term whose
#   description starts with when it is printed ("With a profile only", "With a profile
#   layout only", "Only for a vmlinux without ``.rela`` sections", "when *N* is not 0";
#   none: always), checked over five runs (random, profile, greedy, random with a
#   profile, no relocations); the dyno stats lines are those shown; the skip reasons
#   those of SKIP REASONS, in order.  The JSON members of --stats -j are those the
#   paragraph "With **-j**" names, printed always or, in the clause "with a profile",
#   with a profile only; the example shows them in the order printed.
# - What "make" builds is what README.md, the Makefile's first comment and "make help"
#   say.
#
# Environment (besides lib.sh's): KMETA_HELP, KBOLT_HELP, files to use instead of
# "$KMETA --help" and "$KBOLT --help"; KBOLT, the kbolt binary (default kbolt/kbolt).

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

man_rst=$top/Documentation/kmeta.rst
tables_rst=$top/Documentation/tables.rst
sources=("$top"/common/*.[ch] "$top"/kmeta/*.[ch] "$top"/kmeta/tables/*.c)
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
kbolt_rst=$top/Documentation/kbolt.rst
format_rst=$top/Documentation/profile-format.rst
lab_rst=$top/Documentation/lab.rst
kbolt_sources=("$top"/kbolt/*.[ch] "$top"/kbolt/{lib,profile,model,pass,dwarf,verify,report}/*.[ch] "$top"/kbolt/record/{record_cmd,perf_events,cpu_list,sampler_load}.c)	# of kbolt/record/, not the plugins: they run inside QEMU
plugin_source=$top/kbolt/record/qemu_plugin.c
eval_rst=$top/Documentation/evaluate.rst

# The checker.  Each subcommand prints one record per test: "ok|fail TAB description
# [TAB diagnostic]".  Options, commands and tables come from the --help text; messages
# from the C sources, by a small tokenizer that follows string concatenation, PRIx64
# macros and ternaries.
cat > "$tmp/docs.py" <<'EOF'
import re, sys

def out(good, desc, diag=''):
    print('%s\t%s\t%s' % ('ok' if good else 'fail', desc.replace('#', '\\#'),
                          diag.replace('\t', ' ').replace('\n', ' | ')))

def norm(s):
    return ' '.join(s.split())

# --help text: the blocks under "Commands", "Options" and "Tables:"
def help_block(text, head):
    lines, on = [], False
    for l in text.splitlines():
        if l.startswith(head):
            on = True
            rest = l[len(head):].strip()
            if head.endswith(':') and rest:
                lines.append(rest)
            continue
        if on and not l.strip():
            break
        if on:
            lines.append(l)
    return lines

def help_options(text):
    opts = []
    for l in help_block(text, 'Options'):
        m = re.match(r'\s+((?:-\w, )?--[\w-]+(?:\[=\w+\]| \S+)?)(?:\s{2,}|$)', l)
        if m:
            opts.append(m.group(1))
    return opts

def help_commands(text):
    return [l.split()[0] for l in help_block(text, 'Commands') if l.strip()]

def help_tables(text):
    return ' '.join(help_block(text, 'Tables:')).split()

# reStructuredText: top-level sections are titles underlined with '='
def rst_sections(text):
    lines, secs, cur = text.splitlines(), {}, None
    for i, l in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if l.strip() and not l.startswith(' ') and re.fullmatch(r'=+', nxt) \
           and len(nxt) >= len(l.strip()) and not re.fullmatch(r'=+', l):
            cur = l.strip()
            secs[cur] = []
        elif cur:
            secs[cur].append(l)
    return {k: '\n'.join(v) for k, v in secs.items()}

def rst_titles(text, underline='-=~^'):
    lines = text.splitlines()
    return [l.strip() for l, n in zip(lines, lines[1:] + [''])
            if l.strip() and re.fullmatch('[%s]+' % re.escape(underline), n)
            and len(n) >= len(l.strip())]

def unmarkup(s):
    return norm(s.replace('\\ ', '').replace('**', '').replace('*', '').replace('``', ''))

def word_in(word, text):
    return re.search(r'(?<![\w-])%s(?![\w-])' % re.escape(word), text) is not None

def rst_name(rst_file):
    return rst_file.rsplit('/', 1)[-1]

def check_options(help_file, rst_file):
    text, secs = open(help_file).read(), rst_sections(open(rst_file).read())
    name = rst_name(rst_file)
    opts = help_options(text)
    out(len(opts) >= 5, '--help lists its options', '%d found' % len(opts))
    section = secs.get('OPTIONS', '')
    terms = [unmarkup(l) for l in section.splitlines() if l.startswith('**-')]
    for spec in opts:	# "-m, --module NAME": -m and --module, then the whole entry
        m = re.match(r'(?:(-\w), )?(--[\w-]+)', spec)
        for opt in filter(None, m.groups()):
            out(word_in(opt, section), '%s OPTIONS documents %s' % (name, opt),
                'add it to the OPTIONS section of %s' % rst_file)
        out(spec in terms, '%s OPTIONS has the entry "%s", as --help writes it' % (name, spec),
            'OPTIONS entries: %s' % '; '.join(terms))
    for t in terms:
        out(t in opts, 'option "%s" of %s OPTIONS is in --help' % (t, name),
            'stale documentation, or --help lost it')

def check_commands(help_file, rst_file):
    text, secs = open(help_file).read(), rst_sections(open(rst_file).read())
    cmds = help_commands(text)
    out(len(cmds) >= 1, '--help lists its commands', '%d found' % len(cmds))
    titles, name = rst_titles(secs.get('COMMANDS', ''), '-'), rst_name(rst_file)
    for c in cmds:
        out(c in titles, '%s COMMANDS has a section for %s' % (name, c),
            'sub-sections: %s' % ', '.join(titles))
        out(word_in(c, secs.get('SYNOPSIS', '')), '%s SYNOPSIS shows %s' % (name, c))
    for t in titles:
        out(t in cmds, 'command "%s" of %s COMMANDS is in --help' % (t, name))

def kmeta_table_descs(srcs):
    """Names of the table descriptors: .name of every struct table_desc initialiser."""
    names = []
    for f in srcs:
        for m in re.finditer(r'struct table_desc\s+\w+\s*=\s*\{[^}]*?\.name\s*=\s*"([^"]+)"',
                             open(f).read()):
            names.append(m.group(1))
    return names

def check_tables(help_file, rst_file, tables_file, srcs, summary_json=None):
    text, secs = open(help_file).read(), rst_sections(open(rst_file).read())
    tables = help_tables(text)
    out(len(tables) >= 1, '--help lists its tables', '%d found' % len(tables))
    terms = [unmarkup(l) for l in secs.get('TABLES', '').splitlines() if l.startswith('**')]
    titles = [t.split()[0] for t in rst_titles(open(tables_file).read()) if t.split()]
    for t in tables:
        out(t in terms, 'kmeta.rst TABLES describes %s' % t, 'entries: %s' % ', '.join(terms))
        out(t in titles, 'tables.rst has a section for %s' % t)
    for t in terms:
        out(t in tables, 'table "%s" of kmeta.rst TABLES is in --help' % t)
    descs = kmeta_table_descs(srcs)
    out(sorted(descs) == sorted(tables), '--help lists exactly the tables of kmeta/tables/*.c',
        'sources: %s; --help: %s' % (' '.join(sorted(descs)), ' '.join(sorted(tables))))
    if summary_json:
        import json
        printed = list(json.load(open(summary_json))['tables'])
        out(printed == tables, 'kmeta summary prints the tables of --help, in its order',
            'summary: %s' % ' '.join(printed))
        for t in printed:
            out(t in terms and t in titles, 'table %s printed by summary is documented' % t)

# C sources: the format string of every message
FMT_ARG = {'pr_err': 1, 'pr_warn': 1, 'pr_info': 1, 'check_report': 2, 'fprintf': 1}
WHAT_ARG = {'check_site_is_code': 2, 'check_insn_boundary': 2}
PRI = {'PRIu64': 'lu', 'PRId64': 'ld', 'PRIx64': 'lx', 'PRIX64': 'lX', 'PRIi64': 'li'}
TOKEN = re.compile(r'''(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<chr>'(?:[^'\\\n]|\\.)*')
    |(?P<cmt>/\*.*?\*/|//[^\n]*)|(?P<pp>^\s*\#[^\n]*)|(?P<id>[A-Za-z_]\w*)
    |(?P<open>[(\[{])|(?P<close>[)\]}])|(?P<comma>,)|(?P<ws>\s+)|(?P<other>.)''',
    re.S | re.X | re.M)

def c_string(tok):
    return bytes(tok[1:-1], 'utf-8').decode('unicode_escape')

def calls(path, funcs, stream='stderr', extra=None):
    """(function, file:line, [string groups of the format argument]) of each call; the
    first argument of fprintf must be stream (None: any); the literal strings of the
    arguments after the format are appended to the list extra, when given"""
    src = open(path).read()
    toks = [(m.lastgroup, m.group(), m.start()) for m in TOKEN.finditer(src)
            if m.lastgroup not in ('ws', 'cmt', 'pp')]
    for i, (kind, text, pos) in enumerate(toks):
        if kind != 'id' or text not in funcs or i + 1 >= len(toks) or toks[i + 1][1] != '(':
            continue
        if i and toks[i - 1][0] == 'id' and toks[i - 1][1] not in ('else', 'return', 'do'):
            continue	# a declaration or definition: "void pr_err("
        args, cur, depth = [], [], 0
        for k2, t2, _ in toks[i + 2:]:
            if k2 == 'close' and depth == 0:
                break
            depth += k2 == 'open'
            depth -= k2 == 'close'
            if k2 == 'comma' and depth == 0:
                args.append(cur)
                cur = []
            else:
                cur.append((k2, t2))
        args.append(cur)
        if text == 'fprintf' and stream and (not args[0] or args[0][0][1] != stream):
            continue
        where = '%s:%d' % (path, src.count('\n', 0, pos) + 1)
        arg = args[funcs[text]] if funcs[text] < len(args) else []
        groups, g = [], None
        for k2, t2 in arg:	# adjacent literals and PRIx64 macros form one string
            if k2 == 'str' or (k2 == 'id' and t2 in PRI):
                g = (g or '') + (c_string(t2) if k2 == 'str' else PRI[t2])
            elif g is not None:
                groups.append(g)
                g = None
        if g is not None:
            groups.append(g)
        if extra is not None:
            extra.extend((c_string(t2), where) for a in args[funcs[text] + 1:]
                         for k2, t2 in a if k2 == 'str')
        yield text, where, groups

CONV = re.compile(r'%%|%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?[diouxXcspneEfgGaA]')

def fmt_parts(fmt):
    """The constant pieces of a format, a None for each conversion"""
    parts, last = [], 0
    for m in CONV.finditer(fmt):
        if m.group() == '%%':
            continue
        parts.append(fmt[last:m.start()].replace('%%', '%'))
        parts.append(None)
        last = m.end()
    parts.append(fmt[last:].replace('%%', '%'))
    return parts

def leading_text(fmt):
    return fmt_parts(fmt)[0].strip()

def fmt_regex(fmt):
    """A message as the docs write it: constant text verbatim, each conversion a short
    placeholder (FILE, N, 0xADDR...)"""
    rx = ''
    for p in fmt_parts(fmt.rstrip('\n')):
        rx += r'.{1,40}?' if p is None else re.escape(norm(p)) if p.strip() else \
              (r'\s?' if p else '')
    return rx

def messages(srcs, funcs=FMT_ARG, extra=None):
    msgs, whats, bad = {}, {}, []
    for f in srcs:
        for fn, where, groups in calls(f, funcs, extra=extra):
            if not groups:
                bad.append((fn, where))
            for g in groups:
                msgs.setdefault(g, []).append(where)
        for fn, where, groups in calls(f, WHAT_ARG):
            for g in groups:
                whats.setdefault(g, []).append(where)
    return msgs, whats, bad

def source_order(where):
    path, _, line = where.rpartition(':')
    return path, int(line)

def check_messages(rst_file, srcs, top, extra_funcs=(), arg_literals=False,
                   section='DIAGNOSTICS', min_msgs=10):
    secs = rst_sections(open(rst_file).read())
    diag = norm(secs.get(section, ''))
    out(len(diag) > 0, '%s has a %s section' % (rst_name(rst_file), section))
    funcs = dict(FMT_ARG)	# "name" or "name:N": the format is argument N (default 0)
    for f in extra_funcs:
        name, _, idx = f.partition(':')
        funcs[name] = int(idx or 0)
    extra = [] if arg_literals else None
    msgs, whats, bad = messages(srcs, funcs, extra)
    out(len(msgs) >= min_msgs, 'messages found in the sources', '%d found' % len(msgs))
    for fn, where in bad:
        out(False, 'message at %s has a literal format' % where.replace(top + '/', ''),
            '%s() without a string literal cannot be checked against DIAGNOSTICS' % fn)
    for fmt, wheres in sorted(msgs.items(), key=lambda kv: source_order(kv[1][0])):
        parts = [p for p in fmt_parts(fmt) if p]
        if not re.search('[A-Za-z]{2}', ''.join(parts)):
            print('no constant text to document in %r (%s)' % (fmt, wheres[0]),
                  file=sys.stderr)
            continue
        shown = norm(fmt)
        shown = shown if len(shown) <= 72 else shown[:69] + '...'
        where = ', '.join(w.replace(top + '/', '') for w in wheres)
        out(re.search(fmt_regex(fmt), diag) is not None,
            '%s lists "%s" (%s)' % (section, shown, where),
            'leading text %r of %r not found: document the message in the DIAGNOSTICS '
            'section of %s, with its meaning and what to do, writing each conversion as '
            'a short placeholder (FILE, N)' % (leading_text(fmt), fmt, rst_file))
    for lit, where in extra or []:	# the strings a format's %s receives
        if re.search('[A-Za-z]{2}', lit):
            out(norm(lit) in diag, '%s lists "%s", an argument of the message at %s'
                % (section, lit, where.replace(top + '/', '')),
                'document it in the %s section of %s' % (section, rst_file))
    for what, wheres in sorted(whats.items()):
        out('``%s``' % what in diag, 'DIAGNOSTICS names the check subject "%s" (%s)'
            % (what, wheres[0].replace(top + '/', '')),
            'list ``%s`` among the WHAT values of DIAGNOSTICS' % what)

MAN_SECTIONS = {
    'kmeta': ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'COMMANDS', 'OPTIONS', 'TABLES', 'MODULES',
              'EXIT STATUS', 'DIAGNOSTICS', 'SEE ALSO'],
    'kbolt': ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'COMMANDS', 'OPTIONS', 'EXIT STATUS',
              'DIAGNOSTICS', 'SEE ALSO'],
}

def check_man(man_file, tool='kmeta'):
    text = open(man_file).read()
    out(re.search(r'^\.TH "?%s"? "?1"?' % tool.upper(), text, re.M) is not None,
        '%s.1 is a section 1 man page' % tool, text.splitlines()[0] if text else 'empty')
    for s in MAN_SECTIONS[tool]:
        out(re.search(r'^\.SH "?%s"?\s*$' % s, text, re.M) is not None,
            '%s.1 has the section %s' % (tool, s))

def check_exit(help_file, rst_file, tool='kmeta'):
    secs = rst_sections(open(rst_file).read())
    section = secs.get('EXIT STATUS', '')
    text = norm(open(help_file).read())
    for code in ('0', '1', '2'):
        out('**%s**' % code in section and re.search(r'\b%s\b' % code, text) is not None,
            'exit status %s is in --help and %s EXIT STATUS' % (code, rst_name(rst_file)))
    if tool == 'kmeta':
        out('diff' in text.split('Exit status')[-1] and word_in('diff', section),
            'exit status of diff is described in --help and kmeta.rst')

def literal_blocks(text):
    """The lines of every indented literal block (after a line ending in '::')"""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].rstrip().endswith('::'):
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(' ')):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            blocks.append([l[4:] if l.startswith('    ') else l.strip() for l in block])
        else:
            i += 1
    return blocks

def in_order(expected, actual):
    """expected lines appear in actual in that order; '...' stands for any lines"""
    pos = 0
    for e in expected:
        if e.strip() == '...':
            continue
        try:
            pos = actual.index(e, pos) + 1
        except ValueError:
            return e
    return None

def check_examples(rst_file, kmeta, vmlinux_dir):
    """Every "$ kmeta ... vmlinux" example of rst_file, re-run on the 6.1 vmlinux"""
    import shlex, subprocess
    n = 0
    for block in literal_blocks(open(rst_file).read()):
        for i, l in enumerate(block):
            if not l.startswith('$ kmeta '):
                continue
            args = shlex.split(l[len('$ kmeta '):])
            if 'vmlinux' not in args or any('.ko' in a or a.startswith('-m') for a in args):
                continue
            expected = []
            for e in block[i + 1:]:
                if e.startswith('$ '):
                    break
                expected.append(e)
            r = subprocess.run([kmeta] + args, cwd=vmlinux_dir, capture_output=True, text=True)
            actual = (r.stdout + r.stderr).splitlines()
            missing = in_order(expected, actual)
            out(missing is None, 'example "%s" is what kmeta prints' % l,
                'differs at %r; kmeta now prints: %s' % (missing, ' | '.join(actual[:6])))
            n += 1
    out(n > 0, '%s has examples to check' % rst_file.rsplit('/', 1)[-1])

def check_block(rst_file, output_file, what):
    """output_file is, line for line, one literal block of rst_file"""
    actual = open(output_file).read().splitlines()
    found = any(b == actual for b in literal_blocks(open(rst_file).read()))
    out(found, '%s quotes %s as kmeta prints it' % (rst_file.rsplit('/', 1)[-1], what),
        'kmeta now prints: %s' % ' | '.join(actual[:4]))

def c_literals(path):
    """The string literals of a C file, adjacent ones joined"""
    src, lits, cur = open(path).read(), [], None
    for m in TOKEN.finditer(src):
        if m.lastgroup in ('ws', 'cmt'):
            continue
        if m.lastgroup == 'str':
            cur = (cur or '') + c_string(m.group())
        elif cur is not None:
            lits.append((cur, '%s:%d' % (path, src.count('\n', 0, m.start()) + 1)))
            cur = None
    return lits

def check_literals(rst_file, top, what, srcs):
    """Every string of srcs (strings printed through a %s, such as check-profile's
    reasons) is listed in DIAGNOSTICS"""
    diag = norm(rst_sections(open(rst_file).read()).get('DIAGNOSTICS', ''))
    lits = [(l, w) for f in srcs for l, w in c_literals(f) if re.search('[A-Za-z]{2}', l)]
    out(len(lits) > 0, '%s found in the sources' % what, '%d found' % len(lits))
    for lit, where in lits:
        out('``%s``' % norm(lit) in diag, '%s DIAGNOSTICS lists "%s" (%s)'
            % (rst_name(rst_file), lit, where.replace(top + '/', '')),
            'document it, as ``%s``, in the DIAGNOSTICS section of %s' % (lit, rst_file))

def json_keys(v, path=''):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k, path + k
            yield from json_keys(x, path + k + '.')
    elif isinstance(v, list):
        for x in v:
            yield from json_keys(x, path + '[].')

def check_json_keys(rst_file, json_file, what):
    """Every member of the JSON a command printed is named in rst_file"""
    import json
    text = open(rst_file).read()
    keys = list(json_keys(json.load(open(json_file))))
    out(len(keys) > 0, '%s prints JSON members' % what, '%d found' % len(keys))
    for k, path in keys:
        out('``%s``' % k in text, '%s documents the JSON member %s of %s'
            % (rst_name(rst_file), path, what), 'name it as ``%s`` in %s' % (k, rst_file))

def kind_names(path):
    m = re.search(r'kind_names\[[^\]]*\]\s*=\s*\{([^}]*)\}', open(path).read())
    return re.findall(r'"([^"]*)"', m.group(1)) if m else []

def check_kinds(format_rst, top, reader, plugin):
    """The kinds of the plugin are the first kinds of the reader (which has more, for the
    formats without kinds), all in the kinds table of profile-format.rst; so is each line
    the plugin writes"""
    text = open(format_rst).read()
    rk, pk = kind_names(reader), kind_names(plugin)
    out(len(pk) > 0 and rk[:len(pk)] == pk, 'the plugin writes the kinds kbolt reads, in its order',
        'kbolt/profile/profile.c: %s; plugin: %s' % (' '.join(rk), ' '.join(pk)))
    for k in rk:
        out(re.search(r'^\s*\* - ``%s``' % re.escape(k), text, re.M) is not None,
            'profile-format.rst describes the kind %s' % k,
            'add a row for ``%s`` to the kinds table of %s' % (k, format_rst))
    written = []
    for fn, where, groups in calls(plugin, {'fprintf': 1}, stream='f'):
        for g in groups:
            written += [(l, where) for l in g.split('\n') if l.strip()]
    out(len(written) >= 5, 'lines the plugin writes found', '%d found' % len(written))
    flat = norm(text)
    for line, where in written:
        lead = norm(fmt_parts(line)[0])
        out(lead in flat, 'profile-format.rst shows the line "%s" the plugin writes (%s)'
            % (line, where.replace(top + '/', '')), 'the format changed, or the page did')

def rst_subsection(text, title):
    """The text under a title underlined with '-', up to the next title"""
    lines, body, on = text.splitlines(), [], False
    for i, l in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        is_title = l.strip() and re.fullmatch(r'[-=~^]+', nxt) and len(nxt) >= len(l.strip())
        if is_title:
            if on:
                break
            on = l.strip() == title and nxt[0] == '-'
            continue
        if on and not re.fullmatch(r'[-=~^]+', l):
            body.append(l)
    return '\n'.join(body)

def shell_messages(script):
    """Messages of a shell script: echo "vmtest: ..." and reasons+=("..."), each shell
    expansion turned into a %s"""
    msgs = []
    for n, l in enumerate(open(script), 1):
        for m in re.finditer(r'(?:echo "(vmtest: [^"]*)"|reasons\+=\("([^"]*)"\))', l):
            msg = re.sub(r'\$\{?\w+\}?|\$\([^)]*\)', '%s', m.group(1) or m.group(2))
            msgs.append((msg.replace('%s%s', '%s'), n))
    return msgs

def check_lab(help_file, lab_rst, vmtest, workloads):
    help_text, text = open(help_file).read(), open(lab_rst).read()
    opts = sorted(set(re.findall(r'(?<![\w-])--[a-z][\w-]*', help_text)))
    out(len(opts) >= 8, 'vmtest --help lists its options', '%d found' % len(opts))
    section = rst_subsection(text, 'Options')
    terms = [re.match(r'\*\*(-[\w-]+)\*\*', l).group(1) for l in section.splitlines()
             if re.match(r'\*\*-[\w-]+\*\*', l)]
    for o in opts:
        out(o in terms, 'lab.rst Options has an entry for %s of vmtest --help' % o,
            'entries: %s' % ' '.join(terms))
    for t in terms:
        out(t in opts or t in ('-h', '--help'), 'option %s of lab.rst Options is in vmtest --help' % t,
            'stale documentation, or --help lost it')
    usage = [l for l in help_text.splitlines() if l.startswith('  ')]
    indent = min(len(l) - len(l.lstrip()) for l in usage) if usage else 0
    usage = [l[indent:] for l in usage]
    found = any(in_order(usage, b) is None for b in literal_blocks(text))
    out(len(usage) > 0 and found, 'lab.rst quotes the usage lines of vmtest --help',
        'vmtest --help: %s' % ' | '.join(usage))
    m = re.search(r'Exit: (.*)', help_text)
    for code in ('0', '1', '2'):
        out(m is not None and code in m.group(1) and '**%s**' % code in text,
            'exit status %s is in vmtest --help and lab.rst' % code)
    flat = norm(text)
    for msg, n in shell_messages(vmtest):
        out(re.search(fmt_regex(msg), flat) is not None,
            'lab.rst lists the vmtest message "%s" (scripts/vmtest:%d)' % (msg, n),
            'document it in %s, a placeholder for each shell expansion' % lab_rst)
    m = re.search(r'^all_workloads="([^"]*)"', open(vmtest).read(), re.M)
    out(m is not None and '``%s``' % m.group(1) in flat,
        'lab.rst says what --workload all runs (%s)' % (m.group(1) if m else '?'))
    titles = rst_titles(rst_sections(text).get('Workloads', ''), '-')
    for w in workloads:
        name = w.rsplit('/', 1)[-1][:-3]
        out(name in titles, 'lab.rst Workloads has a section for %s' % name,
            'sections: %s' % ', '.join(titles))
        tests = re.findall(r'\btap_(?:check|ok|skip|fail)\s+"((?:[^"\\]|\\.)*)"', open(w).read())
        out(len(tests) > 0, 'workload %s has tests' % name)
        for t in tests:
            out('``%s``' % t in flat, 'lab.rst describes the test "%s" of %s' % (t, name),
                'quote the description as ``%s`` in the section of %s' % (t, name))

# What the man pages say the programs do, run: which command takes which option, the
# exit status of each case EXIT STATUS lists, the lines and JSON members of --stats.
# The runs are described by files docs.sh writes: one TAB-separated record a line.
def read_table(path):
    import shlex
    rows = []
    for l in open(path):
        if l.strip() and not l.startswith('#'):
            f = l.rstrip('\n').split('\t')
            rows.append((f[0], f[1], shlex.split(f[2]) if len(f) > 2 else [], f[3:]))
    return rows

def run(binary, words, workdir, copy_file=False):
    """binary WORDS in a fresh directory under workdir: (status, stdout, stderr, dir);
    copy_file: on a copy of the first file WORDS name, made there (to be written over)"""
    import os, shutil, subprocess, tempfile
    d = tempfile.mkdtemp(dir=workdir)
    for i, w in enumerate(words if copy_file else []):
        if os.path.isfile(w):
            words = words[:i] + [shutil.copy(w, d)] + words[i + 1:]
            break
    r = subprocess.run([binary] + words, cwd=d, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr, d

def shown(tool, words):
    return ' '.join([tool] + [w.rsplit('/', 1)[-1] if w.startswith('/') else w for w in words])

def error_line(stderr):
    for l in stderr.splitlines():
        if ': error: ' in l or l.startswith('error: '):
            return l.strip()
    return None

# A message as DIAGNOSTICS writes it: upper-case words (FILE, N, 0xADDR, OPTION) stand
# for what is printed, "..." for any text
PLACEHOLDER = re.compile(r'(\.\.\.|(?<![a-wyzA-Z])[A-Z][A-Z0-9_]*(?![a-zA-Z]))')

def lit_regex(lit, named=()):
    rx = ''
    for i, tok in enumerate(PLACEHOLDER.split(lit)):
        if i % 2 == 0:
            rx += r'\s+'.join(re.escape(w) for w in tok.split(' '))
        elif tok in named:
            rx += '(?P<%s>.+?)' % tok
        else:
            rx += '.*?' if tok == '...' else '.+?'
    return rx

def rst_body_under(text, title):
    """The text under a title (any underline), up to the next title"""
    lines, body, on = text.splitlines(), [], False
    for i, l in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if l.strip() and re.fullmatch(r'([-=~^])\1*', nxt) and len(nxt) >= len(l.strip()):
            if on:
                break
            on = l.strip() == title
            continue
        if on and not re.fullmatch(r'([-=~^])\1*', l):
            body.append(l)
    return '\n'.join(body)

def rst_subsections(text, underline='-'):
    lines, secs, cur = text.splitlines(), {}, None
    for i, l in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if l.strip() and re.fullmatch(re.escape(underline) + '+', nxt) and len(nxt) >= len(l.strip()):
            cur = l.strip()
            secs[cur] = []
        elif cur is not None and not re.fullmatch(re.escape(underline) + '+', l):
            secs[cur].append(l)
    return {k: '\n'.join(v) for k, v in secs.items()}

def definitions(body):
    """(term, description) of each definition-list item of body: a line at column 0
    followed by indented lines"""
    items, lines = [], body.splitlines()
    for i, l in enumerate(lines):
        if l.strip() and not l[0].isspace() and i + 1 < len(lines) and lines[i + 1].startswith('    '):
            desc = []
            for d in lines[i + 1:]:
                if d.strip() and not d[0].isspace():
                    break
                desc.append(d)
            items.append((l, '\n'.join(desc)))
    return items

def exit_messages(rst_file, tool, code):
    """The messages DIAGNOSTICS lists under a title that says "(exit status CODE)"; of
    kmeta.rst for kbolt too (kmeta's library reports them, with kbolt's name)"""
    msgs = []
    for f in rst_file:
        text = open(f).read()
        for title, body in rst_subsections(rst_sections(text).get('DIAGNOSTICS', '')).items():
            if '(exit status %s)' % code in title:
                for term, _ in definitions(body):
                    for lit in re.findall(r'``(.+?)``', term):
                        msgs.append(re.sub(r'\bkmeta\b', tool, lit))
    return msgs

def option_entries(rst_file, commands):
    """OPTIONS: each entry's options, the commands that take them (its description
    starts with them: "**optimize**, **heatmap**: ..."; none: every command) and the
    option it implies; the paragraph that says how the others refuse it"""
    section = rst_sections(open(rst_file).read()).get('OPTIONS', '')
    entries, refusal = [], None
    for term, desc in definitions(section):
        if not term.startswith('**-'):
            continue
        opts = re.findall(r'\*\*(-[\w-]+)', term)
        d = norm(desc)
        m = re.match(r'((?:\*\*[a-z][\w-]*\*\*(?:, | and | or )?)+)(?: only)?:', d)
        cmds = re.findall(r'\*\*([a-z][\w-]*)\*\*', m.group(1)) if m else list(commands)
        imp = re.search(r'implies \*\*(-[\w-]+)\*\*', d)
        entries.append({'opts': opts, 'cmds': cmds, 'all': m is None, 'term': unmarkup(term),
                        'implies': imp.group(1) if imp else None})
    for para in re.split(r'\n\s*\n', section):
        if para.startswith((' ', '**-')) or 'refuse' not in para:
            continue
        p = norm(para)
        msg = re.search(r'``(\w+: error: [^`]*)``', p)
        code = re.search(r'exits (\d)', p)
        if msg and code:
            refusal = (msg.group(1), int(code.group(1)))
    return entries, refusal

def adapt(words, flags):
    """A base command line for an option's sample: drop-file, without its first FILE (-m
    NAME stands for it); drop-output, without -o OUT"""
    import os
    if 'drop-output' in flags and '-o' in words:
        i = words.index('-o')
        words = words[:i] + words[i + 2:]
    for i, w in enumerate(words):
        if 'drop-file' in flags and os.path.isfile(w):
            return words[:i] + words[i + 1:]
    return words

def synopses(rst_file, tool, cmd):
    """The synopsis lines of cmd: in SYNOPSIS, and the first line of its COMMANDS entry,
    each as the list of options they show ([*OPTIONS*] expanded)"""
    text = open(rst_file).read()
    secs = rst_sections(text)
    syn = secs.get('SYNOPSIS', '')
    m = re.search(r'^\*OPTIONS\* := \{(.*)\}', syn, re.M)
    common = re.findall(r'\*\*(-[\w-]+)\*\*', m.group(1)) if m else []
    found = []
    for l in syn.splitlines():
        # the command is the first bold word after the tool and its [*OPTIONS*]
        if re.match(r'\| \*\*%s\*\* (?:\[\*OPTIONS\*\] )?\*\*%s\*\*' %
                    (re.escape(tool), re.escape(cmd)), l):
            found.append(('SYNOPSIS', l, re.findall(r'\*\*(-[\w-]+)', l) +
                          (common if '[*OPTIONS*]' in l else [])))
    body = rst_body_under(secs.get('COMMANDS', ''), cmd)
    first = norm(body.split('\n\n')[0]) if body.strip() else ''
    if first.startswith('**%s %s**' % (tool, cmd)):
        found.append(('COMMANDS', first, re.findall(r'\*\*(-[\w-]+)', first)))
    return found

def check_option_matrix(rst_file, tool, binary, table):
    """Every option of OPTIONS given to every command: taken by the commands its entry
    names (the command line is not refused: exit status other than 2), refused by the
    others with the message and exit status OPTIONS quotes"""
    name = rst_name(rst_file)
    rows = read_table(table)
    workdir = next(r[1] for r in rows if r[0] == 'workdir')
    bases = {r[1]: r[2] for r in rows if r[0] == 'base'}
    base_flags = {r[1]: ','.join(r[3]) for r in rows if r[0] == 'base'}
    samples = {r[1]: (r[2], ','.join(r[3])) for r in rows if r[0] == 'sample'}
    commands = rst_titles(rst_sections(open(rst_file).read()).get('COMMANDS', ''), '-')
    entries, refusal = option_entries(rst_file, commands)
    out(len(entries) >= 5, '%s OPTIONS has entries' % name, '%d found' % len(entries))
    out(refusal is not None, '%s OPTIONS says how a command refuses an option it does not '
        'take (a paragraph quoting the ``%s: error: ...`` message, "exits N")' % (name, tool))
    for c in commands:
        out(c in bases, 'docs.sh has a command line of %s %s to give options to' % (tool, c))
    for e in entries:
        for c in e['cmds']:
            out(c in commands, '%s OPTIONS entry %s names the command %s, which exists'
                % (name, e['term'], c))
        spec = next((samples[o] for o in e['opts'] if o in samples), None)
        out(spec is not None, 'docs.sh has an argument to give %s with' % e['term'])
        if spec is None:
            continue
        for c in commands:
            if c not in bases:
                continue
            base = bases[c]
            if any(o in base for o in e['opts']):	# "-o OUT": the base has it already
                words = base
            else:
                words = adapt(base, spec[1]) + spec[0]
            rc, so, se, _ = run(binary, words, workdir, 'copy-file' in spec[1])
            said = '%s: exit %d: %s' % (shown(tool, words), rc, ' | '.join(se.splitlines()[:3]))
            opt = e['opts'][-1]
            if c in e['cmds']:
                out(rc != (refusal[1] if refusal else 2), '%s %s %s: taken, as %s OPTIONS says'
                    % (tool, c, opt, name), said)
                continue
            good = refusal is not None and rc == refusal[1]
            msg = error_line(se) or ''
            m = re.search(lit_regex(refusal[0], ('OPTION', 'COMMAND')) + r'\s*$', msg) \
                if refusal else None
            good = good and m is not None
            if good and 'COMMAND' in m.groupdict():
                good = m.group('COMMAND') == c
            if good and 'OPTION' in m.groupdict():
                good = any(word_in(o, m.group('OPTION')) for o in e['opts'] + [e['implies'] or '-'])
            out(good, '%s %s %s: refused (exit %s, "%s"), as %s OPTIONS says'
                % (tool, c, opt, refusal[1] if refusal else '?', refusal[0] if refusal else '?',
                   name), said)
    takes = {c: set(o for e in entries if c in e['cmds'] for o in e['opts']) for c in commands}
    for c in commands:	# the synopses show what the command takes, and only that
        shown_opts, lines = set(), []	# a command with subcommands has a line each
        for where, line, opts in synopses(rst_file, tool, c):
            for o in opts:
                out(o in takes[c], '%s %s shows %s for %s, which takes it' % (name, where, o, c),
                    line)
            if where == 'SYNOPSIS':
                shown_opts.update(opts)
                lines.append(line)
        if lines:
            for e in entries:
                if not e['all'] and c in e['cmds']:
                    out(any(o in shown_opts for o in e['opts']), '%s SYNOPSIS of %s shows %s, '
                        'which OPTIONS says it takes' % (name, c, e['term']), '\n'.join(lines))
        base = bases.get(c)	# wrong number of arguments: the usage message
        if base is None:
            continue
        words = [c] + [w for i, w in enumerate(base) if w == '-o' or (i and base[i - 1] == '-o')]
        if 'stray' in base_flags.get(c, ''):	# a command of no argument: give it one
            words.append('stray')
        rc, so, se, _ = run(binary, words, workdir)
        msg = error_line(se) or ''
        docs = exit_messages([rst_file], tool, 2)	# verbatim, or by a generic message
        mine = [m for m in docs if m.startswith('%s: error: usage: %s %s ' % (tool, tool, c))]
        out(rc == 2 and (msg in mine or not mine and
                         any(re.fullmatch(lit_regex(m), msg) for m in docs)),
            '%s DIAGNOSTICS lists the usage message of %s under exit status 2'
            % (name, shown(tool, words)), 'exit %d: %s' % (rc, msg))
        for o in re.findall(r'(?<![\w-])(?<!\w\[)(--?[a-zA-Z][\w-]*)', msg.split('usage:')[-1]):
            out(o in takes[c], 'usage message of %s shows %s, which %s OPTIONS says it takes'
                % (c, o, name), msg)

def exit_items(rst_file):
    """EXIT STATUS: {code: (lead paragraph, [items])}, items being its bullet list"""
    section = rst_sections(open(rst_file).read()).get('EXIT STATUS', '')
    codes = {}
    for term, desc in definitions(section):
        m = re.fullmatch(r'\*\*(\d)\*\*', term.strip())
        if not m:
            continue
        paras = re.split(r'\n\s*\n', desc)
        items, cur = [], None
        for l in desc.splitlines():
            b = re.match(r'\s+- (.*)', l)
            if b:
                cur = [b.group(1)]
                items.append(cur)
            elif cur is not None and l.strip():
                cur.append(l.strip())
            else:
                cur = None
        codes[int(m.group(1))] = (norm(paras[0]), [unmarkup(' '.join(i)) for i in items])
    return codes

def check_exit_cases(rst_file, tool, binary, table, *more_rst):
    """Each item of EXIT STATUS has a case of docs.sh (claim TAB command line), which exits
    with the status the item is listed under; its error message is one DIAGNOSTICS lists
    under a title of that status"""
    name = rst_name(rst_file)
    rows = read_table(table)
    workdir = next(r[1] for r in rows if r[0] == 'workdir')
    cases = [(r[1], r[2]) for r in rows if r[0] == 'case']
    codes = exit_items(rst_file)
    out(sorted(codes) == [0, 1, 2] and all(codes[c][1] for c in codes),
        '%s EXIT STATUS lists the cases of 0, 1 and 2' % name, 'found %s' % sorted(codes))
    claims = {i: c for c in codes for i in codes[c][1]}
    for claim in claims:
        out(any(c == claim for c, _ in cases), '%s EXIT STATUS %d, "%s": docs.sh has a case'
            % (name, claims[claim], claim), 'add a case to docs.sh, or remove the item')
    for claim, words in cases:
        if claim not in claims:
            out(False, 'case "%s" of docs.sh is an item of %s EXIT STATUS' % (claim, name),
                'the item is gone or was reworded')
            continue
        code = claims[claim]
        rc, so, se, d = run(binary, words, workdir)
        out(rc == code, '%s EXIT STATUS %d, "%s": %s exits %d' % (name, code, claim,
            shown(tool, words), code), 'exit %d: %s' % (rc, ' | '.join(se.splitlines()[:3])))
        msg = error_line(se)
        if code and msg:
            docs = exit_messages([rst_file] + list(more_rst), tool, code)
            out(any(re.search(lit_regex(m) + r'\s*$', msg) for m in docs),
                '%s DIAGNOSTICS lists "%s" under a title of exit status %d'
                % (name, msg.replace(workdir.rsplit('/', 1)[0] + '/', ''), code),
                'move the message, or the item of EXIT STATUS')
        if code == 1 and words[:1] == ['optimize'] and \
           'optimize then leaves no OUT and no temporary file' in unmarkup(codes[1][0]):
            import os
            left = [f for r, _, fs in os.walk(d) for f in fs]
            out(left == [], '%s: optimize left no OUT and no temporary file' % shown(tool, words),
                'left: %s' % ' '.join(left))

# --stats: the lines "Statistics" describes (under optimize), each with the condition
# its description starts with, against the runs of docs.sh (mode TAB attributes TAB -
# TAB stdout file TAB JSON file); attributes: profile, profile-layout, norelocs
CONDITIONS = (('With a profile layout only', 'profile-layout'), ('With a profile only', 'profile'),
              ('Only for a vmlinux without ``.rela`` sections', 'norelocs'))

def term_regex(term):
    """A line as a term writes it: ``text`` verbatim, *N* any text, [...] optional; a
    space between two pieces is one in the line, an escaped one ("\\ ") is none"""
    rx, names, space = '', [], False
    for tok in re.findall(r'``.*?``|\*[^*\s]+\*|\\ |\[|\]|\s+|[^\s`*\[\]\\]+', term):
        if tok.isspace() or tok == '\\ ':
            space = tok.isspace()
            continue
        sep, space = ' ' if space and rx and tok != ']' else '', False
        if tok == '[':
            rx += '(?:' + sep
        elif tok == ']':
            rx += ')?'
        elif tok.startswith('``'):
            rx += sep + re.escape(tok[2:-2])
        elif tok.startswith('*'):
            names.append(tok[1:-1])
            rx += sep + '(?P<g%d>.+?)' % (len(names) - 1)
        else:
            rx += sep + re.escape(tok)
    return rx, names

def stats_runs(modes_file):
    import json
    runs = []
    for mode, attrs, _, rest in read_table(modes_file):
        text = open(rest[0]).read().splitlines()
        js = open(rest[1]).read().strip().splitlines()
        runs.append((mode, set(a for a in attrs.split(',') if a), text,
                     json.loads(js[-1]) if js else None))
    return runs

def skip_reasons(text):
    """(identifier, sentence) of each SKIP REASONS entry: ``id`` (``sentence``)"""
    out = []
    for t, _ in definitions(rst_sections(text).get('SKIP REASONS', '')):
        lits = re.findall(r'``([^`]+)``', t)
        out.append((lits[0], lits[1] if len(lits) > 1 else ''))
    return out

def check_stats_lines(rst_file, modes_file):
    name = rst_name(rst_file)
    text = open(rst_file).read()
    body = rst_body_under(text, 'Statistics')
    reasons = [s for _, s in skip_reasons(text)]
    terms = []
    for term, desc in definitions(body):
        if not term.startswith('``'):
            continue
        d = norm(desc)
        cond = set(a for lead, a in CONDITIONS if d.startswith(lead))
        if re.match(r'(?:[^.:]*?,\s*)?when \*N\* is not 0', d, re.I):
            cond.add('nonzero')
        rx, names = term_regex(term)
        terms.append((unmarkup(term), re.compile(rx), names, cond))
    out(len(terms) >= 5, '%s Statistics describes the lines of --stats' % name,
        '%d found' % len(terms))
    runs = stats_runs(modes_file)
    dyno_at = lambda lines: next((i for i, l in enumerate(lines) if l.startswith('dyno stats')),
                                 len(lines))
    printed_by = {t[0]: [] for t in terms}
    for mode, attrs, lines, _ in runs:
        undocumented = []
        for l in lines[:dyno_at(lines)]:
            hit = None
            for shown_term, rx, names, cond in terms:
                m = rx.fullmatch(l.strip())
                if m:
                    hit = shown_term
                    break
            if hit is None:
                undocumented.append(l)
                continue
            printed_by[hit].append(mode)
            if 'REASON' in names:
                r = m.group('g%d' % names.index('REASON'))
                out(r in reasons, 'the skip reason "%s" of --stats (%s) is in SKIP REASONS'
                    % (r, mode))
            if 'nonzero' in cond and 'N' in names:
                out(m.group('g%d' % names.index('N')) != '0', '"%s" is printed only when N is '
                    'not 0, as %s Statistics says (%s)' % (hit, name, mode), l)
        out(undocumented == [], 'every line of optimize --stats, %s, is described in %s '
            'Statistics' % (mode, name), 'undocumented: %s' % ' | '.join(undocumented))
    for shown_term, rx, names, cond in terms:
        need = cond - {'nonzero'}
        wrong = [m for m, attrs, _, _ in runs
                 if (m in printed_by[shown_term]) != need.issubset(attrs) and
                 not ('nonzero' in cond and m not in printed_by[shown_term])]
        when = ', '.join(sorted(cond)) or 'always'
        out(wrong == [] and printed_by[shown_term] != [], '%s Statistics: "%s" is printed '
            '%s' % (name, shown_term, when), 'not so in: %s; printed in: %s' %
            (' '.join(wrong) or '-', ' '.join(printed_by[shown_term]) or 'no run'))
    # the dyno stats: the block after "With a profile, the dyno stats follow"
    m = re.search(r'^(With a profile, the dyno stats follow.*?)::\n(.*?)\n\n(\S.*?)\n\n',
                  body, re.S | re.M)
    out(m is not None, '%s Statistics shows the dyno stats block' % name)
    if not m:
        return
    label = lambda l: norm(re.sub(r'^[\s\d().%+-]*', '', l))
    doc = [label(l) for l in m.group(2).splitlines() if l.strip()]
    optional_last = 'the last line, when there is one' in norm(m.group(3))
    for mode, attrs, lines, _ in runs:
        got = [label(l) for l in lines[dyno_at(lines):]]
        if 'profile' in attrs:
            good = got == doc or (optional_last and got == doc[:-1])
        else:
            good = got == []
        out(good, 'optimize --stats, %s: the dyno stats lines are those of %s%s' % (
            mode, name, '' if 'profile' in attrs else ' (none: no profile)'),
            'printed: %s' % ' | '.join(got))

def json_key_names(v, skip_children_of='skipped'):
    names = []
    if isinstance(v, dict):
        for k, x in v.items():
            names.append(k)
            if k == skip_children_of and isinstance(x, dict):
                for y in x.values():
                    names += json_key_names(y)
            else:
                names += json_key_names(x)
    return names

def check_stats_json(rst_file, modes_file):
    """The members the paragraph "With **-j**" of Statistics names, each printed in the
    runs its clause says ("with a profile": those with a profile), and no others"""
    name = rst_name(rst_file)
    text = open(rst_file).read()
    body = rst_body_under(text, 'Statistics')
    m = re.search(r'^With \*\*-j\*\*.*?::$', body, re.S | re.M)
    out(m is not None, '%s Statistics names the JSON members of --stats -j' % name)
    if not m:
        return
    para = norm(m.group(0).split('::')[0])
    cond = {}
    for clause in para.split(';'):
        c = clause.strip()
        c = re.sub(r'^and,?\s*', '', c)
        need = {'profile-layout'} if c.startswith('with a profile layout') else \
               {'profile'} if c.startswith('with a profile') else set()
        for k in re.findall(r'``([a-z_]+)``', clause):
            cond.setdefault(k, need)
    out(len(cond) >= 10, 'JSON members found in %s' % name, '%d found' % len(cond))
    runs = stats_runs(modes_file)
    printed = {mode: set(json_key_names(j)) for mode, _, _, j in runs}
    for k, need in cond.items():
        wrong = [mode for mode, attrs, _, _ in runs if (k in printed[mode]) != need.issubset(attrs)]
        out(wrong == [], '%s: the JSON member %s of optimize --stats -j is printed %s' % (
            name, k, 'with a profile layout only' if 'profile-layout' in need else
            'with a profile only' if need else 'always'), 'not so in: %s' % ' '.join(wrong))
    for mode, attrs, _, j in runs:
        extra = sorted(printed[mode] - set(cond))
        out(extra == [], 'every JSON member of optimize --stats -j, %s, is named in %s' % (
            mode, name), 'not named: %s' % ' '.join(extra))
        if 'profile' not in attrs and '0 without a profile' in para:
            nonzero = [k for k in json_key_names(j) if k.endswith('weight')
                       and k in j and j[k] != 0]
            out(nonzero == [], 'without a profile (%s) the weights are 0' % mode,
                ' '.join(nonzero))
    reasons = [i for i, _ in skip_reasons(text)]
    js = runs[0][3]
    out(js is not None and list(js.get('skipped', {})) == reasons,
        'the members of "skipped" are the SKIP REASONS of %s, in order' % name,
        'printed: %s' % '; '.join(js.get('skipped', {}) if js else []))
    example = re.search(r'--stats -p\n    \{\n(.*?)\n    \}', body, re.S)
    shown_keys = re.findall(r'^      "(\w+)":', example.group(1), re.M) if example else []
    full = next((list(j) for mode, attrs, _, j in runs if 'profile-layout' in attrs), [])
    it = iter(full)
    out(shown_keys != [] and all(k in it for k in shown_keys),
        'the JSON example of %s Statistics has the members in the order printed' % name,
        'example: %s; printed: %s' % (' '.join(shown_keys), ' '.join(full)))

def check_make_targets(makefile, readme):
    """What "make" builds (the programs the all target links into the tree, and the man
    pages), as the README, the Makefile's first comment and "make help" say"""
    mk = open(makefile).read()
    m = re.search(r'^all:((?:.*\\\n)*.*)', mk, re.M)
    built = re.findall(r'\bk\w+/[\w.-]+', m.group(1)) if m else []
    out(len(built) >= 2 and ' man' in m.group(1), 'the all target of the Makefile links the '
        'programs and makes the man pages', ' '.join(built))
    rd = open(readme).read()
    places = {
        'README.md, "Other targets"': re.search(r'^`make` builds (.*?)\(`V=1`', rd, re.M | re.S),
        'the first comment of the Makefile': re.search(r'^# kbolt toolkit\.  make: (.*?);', mk,
                                                        re.M | re.S),
        '"make help"': re.search(r"^help:\n\t@echo 'make \[[^\n]*?build (.*?)\n\t@echo 'make check",
                                 mk, re.M | re.S),
    }
    for where, pm in places.items():
        said = pm.group(1) if pm else ''
        missing = [b for b in built if b not in said] + ([] if 'man pages' in said else ['man pages'])
        out(pm is not None and missing == [], '%s names what make builds' % where,
            'missing: %s' % ' '.join(missing))

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == 'options':
    check_options(*args)
elif cmd == 'commands':
    check_commands(*args)
elif cmd == 'tables':
    check_tables(args[0], args[1], args[2], args[4:], args[3] or None)
elif cmd == 'messages':	# RST TOP [--funcs=F,G:N] [--arg-literals] [--section=S] [--min=N] SRC...
    opts = {'funcs': '', 'arg-literals': False, 'section': 'DIAGNOSTICS', 'min': '10'}
    rst, top, rest = args[0], args[1], args[2:]
    while rest and rest[0].startswith('--'):
        k, _, v = rest.pop(0)[2:].partition('=')
        opts[k] = v or True
    check_messages(rst, rest, top, [f for f in opts['funcs'].split(',') if f],
                   opts['arg-literals'], opts['section'], int(opts['min']))
elif cmd == 'man':
    check_man(*args)
elif cmd == 'exit':
    check_exit(*args)
elif cmd == 'literals':
    check_literals(args[0], args[1], args[2], args[3:])
elif cmd == 'json-keys':
    check_json_keys(*args)
elif cmd == 'kinds':
    check_kinds(*args)
elif cmd == 'lab':
    check_lab(args[0], args[1], args[2], args[3:])
elif cmd == 'examples':
    check_examples(*args)
elif cmd == 'block':
    check_block(*args)
elif cmd == 'option-matrix':	# RST TOOL BINARY TABLE
    check_option_matrix(*args)
elif cmd == 'exit-cases':	# RST TOOL BINARY TABLE [RST...]
    check_exit_cases(*args)
elif cmd == 'stats-lines':	# RST MODES
    check_stats_lines(*args)
elif cmd == 'stats-json':	# RST MODES
    check_stats_json(*args)
elif cmd == 'make-targets':	# MAKEFILE README
    check_make_targets(*args)
EOF

# run_checker DESCRIPTION SUBCOMMAND ARGS...: turn the checker's records into TAP lines
run_checker() {
	local what=$1 st desc diag
	shift
	if ! python3 "$tmp/docs.py" "$@" > "$tmp/records" 2> "$tmp/records.err"; then
		fail "$what: checker runs" "$(tail -n 5 "$tmp/records.err")"
		return
	fi
	sed 's/^/# /' "$tmp/records.err"
	while IFS=$'\t' read -r st desc diag; do
		if [ "$st" = ok ]; then ok "$desc"; else fail "$desc" "$diag"; fi
	done < "$tmp/records"
}

# expect_fail DESCRIPTION PATTERN SUBCOMMAND ARGS...: the checker must report a failure
# matching PATTERN on doctored input (the test can fail)
expect_fail() {
	local what=$1 pattern=$2
	shift 2
	python3 "$tmp/docs.py" "$@" > "$tmp/records" 2>&1
	if grep -q -- "^fail	.*$pattern" "$tmp/records"; then
		ok "checker: $what"
	else
		fail "checker: $what" "no failure matching '$pattern' in:" "$(head -n 5 "$tmp/records")"
	fi
}

if ! command -v python3 > /dev/null; then
	fail "python3 is installed (the checker is written in it)" "apt-get install python3"
	done_testing
	exit
fi

# The help text, from the binary under test
help=$tmp/help.txt
if [ -n "${KMETA_HELP:-}" ]; then
	cp "$KMETA_HELP" "$help"
	ok "help text from $KMETA_HELP"
elif "$KMETA" --help > "$help" 2> "$tmp/help.err"; then
	ok "kmeta --help exits 0"
else
	fail "kmeta --help exits 0" "KMETA=$KMETA: build it first (make)" "$(cat "$tmp/help.err")"
	done_testing
	exit
fi
check "kmeta.rst exists" test -s "$man_rst"
check "tables.rst exists" test -s "$tables_rst"

# The checker can fail: a doctored copy of each input must make it report
sed '/^  -V, --version/a\      --frobnicate N    a fake option' "$help" > "$tmp/help-fake-opt"
expect_fail "an option missing from kmeta.rst fails" '--frobnicate' options \
	"$tmp/help-fake-opt" "$man_rst"
sed '/^Commands/a\  frob FILE             a fake command' "$help" > "$tmp/help-fake-cmd"
expect_fail "a command missing from kmeta.rst fails" 'frob' commands \
	"$tmp/help-fake-cmd" "$man_rst"
sed 's/^Tables: /Tables: frob_table /' "$help" > "$tmp/help-fake-table"
expect_fail "a table missing from the docs fails" 'frob_table' tables \
	"$tmp/help-fake-table" "$man_rst" "$tables_rst" "" "${sources[@]}"
mkdir -p "$tmp/src"
printf '%s\n' 'void f(void) { pr_err(NULL, "frobnicated %s the widget", "x"); }' \
	> "$tmp/src/fake.c"
expect_fail "a message missing from DIAGNOSTICS fails" 'frobnicated' messages \
	"$man_rst" "$top" "$tmp/src/fake.c"
printf '%s\n' 'void f(void) { check_report(c, a, x ? "frob one" : "frob two %d", 1); }' \
	> "$tmp/src/fake.c"
expect_fail "both strings of a conditional format are checked" 'frob two' messages \
	"$man_rst" "$top" "$tmp/src/fake.c"

# The real checks
run_checker options options "$help" "$man_rst"
run_checker commands commands "$help" "$man_rst"
summary_json=
need_kernels
if [ "$have_kernels" = 1 ]; then
	if "$KMETA" summary -j "$VMLINUX_61" > "$tmp/summary.json"; then
		summary_json=$tmp/summary.json
	else
		fail "kmeta summary -j runs on $VMLINUX_61"
	fi
else
	skip "table names printed by kmeta summary are documented" \
		"$no_kernels"
fi
run_checker tables tables "$help" "$man_rst" "$tables_rst" "$summary_json" "${sources[@]}"
run_checker messages messages "$man_rst" "$top" "${sources[@]}"
run_checker "exit status" exit "$help" "$man_rst"

# The examples are real: re-run those on the 6.1 vmlinux, and compare the summaries that
# tables.rst quotes (run where the vmlinux is, so that the file is named "vmlinux")
if [ "$have_kernels" = 1 ]; then
	sed 's/^\(    alternatives       6.1 *\)4468/\14469/' "$man_rst" > "$tmp/kmeta-fake.rst"
	expect_fail "an example kmeta does not print fails" 'summary vmlinux' examples \
		"$tmp/kmeta-fake.rst" "$KMETA" "$(dirname "$VMLINUX_61")"
	run_checker examples examples "$man_rst" "$KMETA" "$(dirname "$VMLINUX_61")"
	for v in "$VMLINUX_61" "$VMLINUX_612"; do
		(cd "$(dirname "$v")" && "$KMETA" summary vmlinux) > "$tmp/summary.txt" 2>&1
		run_checker "summary of $v" block "$tables_rst" "$tmp/summary.txt" \
			"the summary of $(basename "$(dirname "$v")")"
	done
else
	skip "the examples of kmeta.rst and tables.rst are what kmeta prints" \
		"$no_kernels"
fi

# Rendering: rst2man as the Makefile runs it, and tables.rst through docutils
if command -v rst2man > /dev/null; then
	if rst2man --halt=warning --report=warning "$man_rst" > "$tmp/kmeta.1" 2> "$tmp/rst2man.err" &&
	   [ ! -s "$tmp/rst2man.err" ]; then
		ok "rst2man renders kmeta.rst without warnings"
		run_checker "man page" man "$tmp/kmeta.1"
		if command -v groff > /dev/null; then
			groff -man -Tutf8 -ww -z "$tmp/kmeta.1" > "$tmp/groff.err" 2>&1
			check_eq "groff formats kmeta.1 without warnings" "" "$(cat "$tmp/groff.err")"
		else
			skip "groff formats kmeta.1 without warnings" "groff is not installed"
		fi
	else
		fail "rst2man renders kmeta.rst without warnings" "$(cat "$tmp/rst2man.err")"
	fi
else
	skip "rst2man renders kmeta.rst without warnings" \
		"rst2man is not installed (apt-get install python3-docutils)"
fi
if command -v rst2pseudoxml > /dev/null; then
	rst2pseudoxml --halt=warning --report=warning "$tables_rst" > /dev/null 2> "$tmp/tables.err"
	check_eq "docutils reads tables.rst without warnings" "" "$(cat "$tmp/tables.err")"
else
	skip "docutils reads tables.rst without warnings" \
		"rst2pseudoxml is not installed (apt-get install python3-docutils)"
fi

# kbolt: its man page (Documentation/kbolt.rst) against "kbolt --help" and kbolt/*/*.c
kbolt_help=$tmp/kbolt-help.txt
if [ -n "${KBOLT_HELP:-}" ]; then
	cp "$KBOLT_HELP" "$kbolt_help"
	ok "kbolt help text from $KBOLT_HELP"
elif "$KBOLT" --help > "$kbolt_help" 2> "$tmp/kbolt-help.err"; then
	ok "kbolt --help exits 0"
else
	fail "kbolt --help exits 0" "KBOLT=$KBOLT: build it first (make)" "$(cat "$tmp/kbolt-help.err")"
	: > "$kbolt_help"
fi
check "kbolt.rst exists" test -s "$kbolt_rst"
check "profile-format.rst exists" test -s "$format_rst"
if [ -s "$kbolt_help" ]; then
	sed '/^  -V, --version/a\  -z, --frobnicate  a fake option' "$kbolt_help" > "$tmp/kbolt-fake-opt"
	expect_fail "an option missing from kbolt.rst fails" '--frobnicate' options \
		"$tmp/kbolt-fake-opt" "$kbolt_rst"
	sed '/^Commands/a\  frob VMLINUX   a fake command' "$kbolt_help" > "$tmp/kbolt-fake-cmd"
	expect_fail "a command missing from kbolt.rst fails" 'frob' commands \
		"$tmp/kbolt-fake-cmd" "$kbolt_rst"
	run_checker "kbolt options" options "$kbolt_help" "$kbolt_rst"
	run_checker "kbolt commands" commands "$kbolt_help" "$kbolt_rst"
	run_checker "kbolt exit status" exit "$kbolt_help" "$kbolt_rst" kbolt
fi
printf '%s\n' 'void f(void) { pr_err(p, "line %zu: %s", n, x ? "frobbed" : "malformed"); }' \
	> "$tmp/src/fake.c"
expect_fail "a string passed to a kbolt message must be in DIAGNOSTICS" 'frobbed' messages \
	"$kbolt_rst" "$top" --arg-literals "$tmp/src/fake.c"
printf '%s\n' 'void f(void) { printf("%s: frobnicated %d\n", a, 1); }' > "$tmp/src/fake.c"
expect_fail "a kbolt printf format must be in DIAGNOSTICS" 'frobnicated' messages \
	"$kbolt_rst" "$top" --funcs=printf "$tmp/src/fake.c"
printf '%s\n' 'void f(void) { verify_fail(v, addr, "frobbed %s at %d", x, 1); }' > "$tmp/src/fake.c"
expect_fail "a problem verify_fail() reports must be in DIAGNOSTICS" 'frobbed' messages \
	"$kbolt_rst" "$top" --funcs=printf,verify_fail:2 "$tmp/src/fake.c"
run_checker "kbolt messages" messages "$kbolt_rst" "$top" --funcs=printf,verify_fail:2 \
	--arg-literals "${kbolt_sources[@]}"
run_checker "check-profile reasons" literals "$kbolt_rst" "$top" "reasons check-profile gives" \
	"$top/kbolt/profile/check_profile.c"
run_checker "profile kinds" kinds "$format_rst" "$top" "$top/kbolt/profile/profile.c" "$plugin_source"

# The JSON members check-profile prints, on a profile of one record outside the image
if [ "$have_kernels" = 1 ] && [ -x "$KBOLT" ]; then
	printf 'kbolt-profile 1\nbuild-id -\nrelease %s\nB 1000 2000 1 other\n' \
		"$KERNEL_61_RELEASE" > "$tmp/one.prof"
	if "$KBOLT" check-profile -j "$VMLINUX_61" "$tmp/one.prof" > "$tmp/check-profile.json"; then
		ok "kbolt check-profile -j runs on a profile of one record"
		run_checker "check-profile JSON" json-keys "$kbolt_rst" "$tmp/check-profile.json" \
			"check-profile -j"
	else
		fail "kbolt check-profile -j runs on a profile of one record" \
			"$(head -n 3 "$tmp/check-profile.json")"
	fi
else
	skip "the JSON members of kbolt check-profile are documented" \
		"$no_kernels, or no $KBOLT"
fi

# Behaviour: what kbolt.rst and kmeta.rst say about options, exit status and the output
# of optimize --stats, run on the flow fixture (fixtures/flow.S), a vmlinux of 22
# functions kbolt rewrites in milliseconds, linked with and without its .rela sections,
# and a profile of two of its functions.  The tables below name the command lines; the
# checker runs them, each in a directory of its own.
beh=$tmp/behaviour
mkdir -p "$beh/runs"
lds=(-e _text -T "$top/selftests/fixtures/vmlinux.lds" --no-warn-rwx-segments)
sed 's/^8:\tud2;/8:\tnop; nop;/' "$top/selftests/fixtures/flow.S" > "$beh/badbug.S"	# bug table at nops
sed 's/movl\t$0x5a5a, %eax/movl\t$0x5a5b, %eax/' "$top/selftests/fixtures/flow.S" > "$beh/changed.S"
printf '.pushsection .orc_unwind, "a"\n.word 8, 0, 5\n.popsection\n' > "$beh/orc1.S"	# an ip short
fixture_ok=1
for f in flow badbug changed; do
	src=$beh/$f.S
	[ $f = flow ] && src=$top/selftests/fixtures/flow.S
	gcc -c -I "$top/selftests/fixtures" -o "$beh/$f.o" "$src" &&
		ld -q "${lds[@]}" -o "$beh/$f" "$beh/$f.o" || fixture_ok=0
done
gcc -c -o "$beh/orc1.o" "$beh/orc1.S" && ld -q "${lds[@]}" -o "$beh/badorc" "$beh/flow.o" "$beh/orc1.o" &&
	ld "${lds[@]}" -o "$beh/norelocs" "$beh/flow.o" || fixture_ok=0
fx=$beh/flow
rand=$beh/rand
# the profile: every direct branch of flow_syscall and flow_sysenter taken 100 times
objdump -d --no-show-raw-insn "$fx" 2>/dev/null | awk '
	/<flow_sys(call|enter)>:$/ { on = 1; next }
	/^$/ { on = 0 }
	on && $2 ~ /^j/ && $3 ~ /^[0-9a-f]+$/ {
		sub(":", "", $1)
		printf "B %s %s 100 %s\n", $1, $3, $2 == "jmp" ? "jmp" : "jcc"
	}' > "$beh/records"
first=$(head -n 1 "$beh/records" | cut -d' ' -f2)
printf 'kbolt-profile 1\nbuild-id -\nrelease -\n' > "$beh/none.prof"
cat "$beh/none.prof" "$beh/records" > "$beh/prof"
{ cat "$beh/prof"; echo "B $first $(nm "$fx" | awk '$3 == "flow_syscall" {print $1}') 1 jcc"; } \
	> "$beh/bad.prof"	# a jcc to its function's entry: not its encoded target
{ printf 'kbolt-profile 1\nbuild-id -\nrelease 0.0-other\n'; cat "$beh/records"; } > "$beh/other.prof"
{ cat "$beh/none.prof"; echo "F ffffffff81000005 ffffffff81000007 18446744073709551615"; } \
	> "$beh/huge.prof"	# a count that one more makes pass 64 bits
echo 'not a vmlinux, nor a profile' > "$beh/text"
if [ $fixture_ok = 1 ] && [ "$(wc -l < "$beh/records")" -ge 6 ] && [ -x "$KBOLT" ] &&
   "$KBOLT" optimize "$fx" -o "$rand" --layout random --seed 1; then
	ok "the flow fixture, its variants and its profile are made"
else
	fail "the flow fixture, its variants and its profile are made" "gcc, ld or $KBOLT failed"
	fixture_ok=0
fi

# row KIND NAME WORDS [FLAGS]: one line of a table
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${3:-}" "${4:-}"; }
# Options: a command line of each command that succeeds, and an argument for each option
{
	row workdir "$beh/runs"
	row base optimize "optimize $fx -o out --layout random --seed 1"
	row base verify "verify $fx $rand"
	row base check-profile "check-profile $fx $beh/prof"
	row base profile-to-bolt "profile-to-bolt -o out.bolt $beh/prof"
	row base heatmap "heatmap $fx $beh/prof -o heat.svg"
	row base fix-sites "fix-sites $fx -o out"
	row base profile "profile merge $beh/prof -o out.prof"
	# it records for a second as root; the wrong number of arguments is one too many
	row base record "record --duration 1 -o out.prof" stray
	for o in -j -p -f --stats --require-rewrite --strip-debug --update-debug --no-update-debug --debug-info -h -V; do
		row sample $o "$o"
	done
	row sample --duration "--duration 1"
	row sample --event "--event cpu-clock"
	row sample --frequency "--frequency 100"
	row sample --branches "--branches"
	row sample --map-entries "--map-entries 1024"
	row sample --bpf-stats "--bpf-stats"
	row sample --check "--check" drop-output
	row sample -w "-w 1"
	row sample -o "-o out2"
	row sample --profile "--profile $beh/prof"
	row sample --layout "--layout random"
	row sample --seed "--seed 2"
	row sample --funcs "--funcs flow_*"
	row sample --skip-funcs "--skip-funcs flow_ret"
	row sample --optimized "--optimized $rand"
	row sample --format "--format pre"
	row sample --in-place --in-place drop-output,copy-file
} > "$beh/kbolt-options"
{
	row workdir "$beh/runs"
	row base summary "summary $fx"
	row base dump "dump orc $fx"
	row base check "check $fx"
	row base diff "diff $fx $fx"
	for o in -j -p -v -h -V; do row sample $o "$o"; done
	row sample -m "-m no_such_module" drop-file	# -m NAME stands for the first FILE
	row sample -r "-m no_such_module -r 0.0" drop-file
	row sample -d "-m no_such_module -r 0.0 -d ." drop-file
	row sample --func "--func flow_*"
	row sample --addr "--addr 0xffffffff81000000-0xffffffff81001000"
} > "$beh/kmeta-options"
# Exit status: a case for each item of EXIT STATUS (the item's text, without markup).
# The usage errors name files that do not exist: exit 2, not 1, shows none was read.
{
	row workdir "$beh/runs"
	row case "optimize: OUT was written and verified" "optimize $fx -o out --layout random --seed 1"
	row case "verify: NEW is ORIG with blocks moved" "verify $fx $rand"
	row case "check-profile: every record agrees with the kernel or was not checked (outside, patched)" \
		"check-profile $fx $beh/prof"
	row case "profile-to-bolt: OUT was written" "profile-to-bolt -o out $beh/prof"
	row case "heatmap: FILE was written" "heatmap $fx $beh/prof -o heat.png"
	row case "fix-sites: OUT was written" "fix-sites $fx -o out"
	row case "profile merge: OUT was written" "profile merge $beh/prof $beh/prof -o out.prof"
	# as root only: kbolt record needs it
	[ "$(id -u)" != 0 ] || row case "record: OUT was written, or with --check the program passed the verifier" \
		"record --check"
	for w in -h -V "verify -h" "optimize a -V"; do row case "-h or -V, with or without a command" "$w"; done
	row case "the image cannot be read" "verify $beh/text $fx"
	row case "the profile cannot be read" "check-profile $fx $beh/text"
	row case "the profile has no records" "check-profile $fx $beh/none.prof"
	row case "the profile was recorded on another kernel (without --force)" \
		"check-profile $fx $beh/other.prof"
	row case "the profile was recorded on another kernel (without --force)" \
		"optimize $fx -o out --profile $beh/other.prof"
	row case "a record disagrees with the kernel's code (check-profile)" "check-profile $fx $beh/bad.prof"
	row case "the profiles to merge are of two kernels, or a count passes 64 bits (profile merge)" \
		"profile merge $beh/prof $beh/other.prof -o out.prof"
	row case "the profiles to merge are of two kernels, or a count passes 64 bits (profile merge)" \
		"profile merge $beh/huge.prof $beh/huge.prof -o out.prof"
	row case "optimize refuses the kernel, or cannot rewrite it" \
		"optimize $beh/flow.o -o out --layout random --seed 1"
	row case "verification fails (verify, or optimize's own)" "verify $fx $beh/changed"
	row case "OUT cannot be written" "optimize $fx -o no/such/dir/out --layout random --seed 1"
	row case "record cannot record: it is not root, the kernel lacks BPF or perf events, the program cannot be loaded (--map-entries too large), or the event cannot be opened" \
		"record --check --map-entries 4000000000"
	row case "no command" ""
	row case "an unknown option" "verify --frobnicate a b"
	row case "an unknown command" "frobnicate a"
	row case "the wrong number of arguments" "verify a"
	row case "an option without its argument" "optimize a --layout random --seed 1 -o"
	row case "an argument an option does not take (--layout, --seed)" "optimize a -o out --layout frob"
	row case "an argument an option does not take (--layout, --seed)" "optimize a -o out --seed 0x10"
	row case "-o missing" "optimize a --layout random --seed 1"
	row case "an option given to a command that does not take it (OPTIONS)" "verify --stats a b"
	row case "an optimize without a layout to make" "optimize a -o out"
	claim="optimize options that contradict each other (--layout profile or greedy without"
	for w in "--layout greedy" "--layout profile" "--profile p --seed 1"; do
		row case "$claim --profile, --seed with a profile layout)" "optimize a -o out $w"
	done
	row case "a heatmap FILE that ends neither in .svg nor in .png" "heatmap a p -o heat.jpg"
	row case "-o naming one of the inputs" "fix-sites $fx -o $fx"
	row case "profile with another subcommand than merge, or -w not once per profile" \
		"profile frob a -o out"
	row case "profile with another subcommand than merge, or -w not once per profile" \
		"profile merge -w 2 a b -o out"
	row case "record without -o nor --check, or with both" "record"
	row case "record without -o nor --check, or with both" "record --check -o out"
} > "$beh/kbolt-cases"
{
	row workdir "$beh/runs"
	row case "check: no violation" "check $fx"
	row case "diff: no difference" "diff $fx $fx"
	row case "dump of a table the image does not have" "dump kcfi_traps $fx"
	for w in -h -V "summary -h" "diff a -V"; do row case "-h or -V, with or without a command" "$w"; done
	row case "the image cannot be read" "summary $beh/text"
	row case "a table cannot be decoded" "dump orc $beh/badorc"
	row case "check found violations" "check $beh/badbug"
	row case "diff found differences" "diff $fx $rand"
	row case "an unknown option" "--frobnicate summary a"
	row case "an unknown command" "frobnicate a"
	row case "an unknown table" "dump frob a"
	row case "an ambiguous command prefix" "d a"
	row case "the wrong number of FILE arguments" "summary a b"
	row case "an invalid combination of options" "-d . summary a"
	row case "an invalid combination of options" "-m virtio_net -d . summary"
	row case "an invalid combination of options" "--func flow_* summary a"
} > "$beh/kmeta-cases"
# optimize --stats in each mode, plain and -j: mode, what it has, the two outputs
[ $fixture_ok = 1 ] && {
	while read -r mode attrs vmlinux args; do
		"$KBOLT" optimize "$vmlinux" -o "$beh/$mode.out" $args --stats > "$beh/$mode.txt" &&
			"$KBOLT" optimize "$vmlinux" -o "$beh/$mode.out" $args --stats -j > "$beh/$mode.json" ||
			echo "optimize $args failed" >&2
		row "$mode" "$attrs" - "$beh/$mode.txt	$beh/$mode.json"
	done <<-EOF
	random none $fx --layout random --seed 1
	profile profile,profile-layout $fx --profile $beh/prof
	greedy profile,profile-layout $fx --profile $beh/prof --layout greedy
	random-profile profile $fx --profile $beh/prof --layout random --seed 1
	norelocs norelocs $beh/norelocs --layout random --seed 1
	EOF
} > "$beh/modes" 2> "$beh/modes.err"
if [ $fixture_ok = 1 ]; then
	check_eq "optimize --stats runs in every mode" "" "$(grep -v ': info: ' "$beh/modes.err")"
	# The checker can fail: a false claim of each kind planted in a copy of kbolt.rst
	sed 's/^    \*\*optimize\*\*: once \*OUT\*/    **optimize** and **verify**: once *OUT*/' \
		"$kbolt_rst" > "$tmp/kbolt-fake.rst"
	expect_fail "an option documented for a command that refuses it fails" \
		'kbolt verify --stats: taken' option-matrix "$tmp/kbolt-fake.rst" kbolt "$KBOLT" \
		"$beh/kbolt-options"
	sed -e '/^    - the profile has no records$/d' \
		-e '/^    - an unknown command$/a\    - the profile has no records' \
		"$kbolt_rst" > "$tmp/kbolt-fake.rst"
	expect_fail "an exit status the case does not give fails" \
		'EXIT STATUS 2, "the profile has no records"' exit-cases "$tmp/kbolt-fake.rst" kbolt \
		"$KBOLT" "$beh/kbolt-cases" "$man_rst"
	sed 's/^    With a profile only: shares/    Shares/' "$kbolt_rst" > "$tmp/kbolt-fake.rst"
	expect_fail "a --stats line printed more rarely than documented fails" \
		'"profile weight: P% in rewritten functions, P2% in functions kept as they were" is printed always' \
		stats-lines "$tmp/kbolt-fake.rst" "$beh/modes"
	sed -e '/``kept``, ``not_analysed`` (0 unless$/{N;s/ ``not_analysed`` (0 unless\nthe layout is a profile layout), /\n/}' \
		-e 's/``jump_labels_widened``; and, with a/``jump_labels_widened``; with a profile layout ``not_analysed`` after ``kept``; and, with a/' \
		"$kbolt_rst" > "$tmp/kbolt-fake.rst"
	expect_fail "a JSON member printed more often than documented fails" \
		'JSON member not_analysed of optimize --stats -j is printed with a profile layout only' \
		stats-json "$tmp/kbolt-fake.rst" "$beh/modes"

	run_checker "kbolt option matrix" option-matrix "$kbolt_rst" kbolt "$KBOLT" "$beh/kbolt-options"
	run_checker "kmeta option matrix" option-matrix "$man_rst" kmeta "$KMETA" "$beh/kmeta-options"
	run_checker "kbolt exit status" exit-cases "$kbolt_rst" kbolt "$KBOLT" "$beh/kbolt-cases" "$man_rst"
	run_checker "kmeta exit status" exit-cases "$man_rst" kmeta "$KMETA" "$beh/kmeta-cases"
	run_checker "optimize --stats lines" stats-lines "$kbolt_rst" "$beh/modes"
	run_checker "optimize --stats JSON" stats-json "$kbolt_rst" "$beh/modes"
fi
run_checker "what make builds" make-targets "$top/Makefile" "$top/README.md"

# The boot lab: Documentation/lab.rst against "scripts/vmtest --help" (which exits 2),
# scripts/vmtest's messages, the plugin's messages and the workloads
vmtest_help=$tmp/vmtest-help.txt
"$top/scripts/vmtest" --help > "$vmtest_help" 2>&1
check "scripts/vmtest --help prints its usage" grep -q -- '--kernel FILE' "$vmtest_help"
check "lab.rst exists" test -s "$lab_rst"
workloads=("$top"/scripts/lab/workloads/*.sh)
sed 's/\[--smp N\]/[--smp N] [--frobnicate]/' "$vmtest_help" > "$tmp/vmtest-fake-opt"
expect_fail "a vmtest option missing from lab.rst fails" '--frobnicate' lab \
	"$tmp/vmtest-fake-opt" "$lab_rst" "$top/scripts/vmtest" "${workloads[@]}"
printf '%s\n' 'tap_check "frobnication works" true' > "$tmp/frob.sh"
expect_fail "a workload test missing from lab.rst fails" 'frobnication' lab \
	"$vmtest_help" "$lab_rst" "$top/scripts/vmtest" "$tmp/frob.sh"
run_checker "lab" lab "$vmtest_help" "$lab_rst" "$top/scripts/vmtest" "${workloads[@]}"
run_checker "plugin messages" messages "$lab_rst" "$top" --funcs=qemu_plugin_outs \
	"--section=Recording a profile" --min=4 "$plugin_source" "$top/kbolt/record/plugin.h"
run_checker "evaluation plugin messages" messages "$eval_rst" "$top" --funcs=qemu_plugin_outs \
	"--section=The evaluation plugin" --min=1 "$top/kbolt/record/eval_plugin.c"

# Rendering: kbolt.rst as the man page it is, the other two through docutils
if command -v rst2man > /dev/null; then
	if rst2man --halt=warning --report=warning "$kbolt_rst" > "$tmp/kbolt.1" \
		2> "$tmp/rst2man.err" && [ ! -s "$tmp/rst2man.err" ]; then
		ok "rst2man renders kbolt.rst without warnings"
		run_checker "kbolt man page" man "$tmp/kbolt.1" kbolt
		if command -v groff > /dev/null; then
			groff -man -Tutf8 -ww -z "$tmp/kbolt.1" > "$tmp/groff.err" 2>&1
			check_eq "groff formats kbolt.1 without warnings" "" "$(cat "$tmp/groff.err")"
		else
			skip "groff formats kbolt.1 without warnings" "groff is not installed"
		fi
	else
		fail "rst2man renders kbolt.rst without warnings" "$(cat "$tmp/rst2man.err")"
	fi
else
	skip "rst2man renders kbolt.rst without warnings" \
		"rst2man is not installed (apt-get install python3-docutils)"
fi
for rst in "$format_rst" "$lab_rst" "$eval_rst"; do
	if command -v rst2pseudoxml > /dev/null; then
		rst2pseudoxml --halt=warning --report=warning "$rst" > /dev/null 2> "$tmp/rst.err"
		check_eq "docutils reads $(basename "$rst") without warnings" "" "$(cat "$tmp/rst.err")"
	else
		skip "docutils reads $(basename "$rst") without warnings" \
			"rst2pseudoxml is not installed (apt-get install python3-docutils)"
	fi
done

done_testing
