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
# Environment (besides lib.sh's): KMETA_HELP, KBOLT_HELP, files to use instead of
# "$KMETA --help" and "$KBOLT --help"; KBOLT, the kbolt binary (default kbolt/kbolt).

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

man_rst=$top/Documentation/kmeta.rst
tables_rst=$top/Documentation/tables.rst
sources=("$top"/kmeta/*.[ch] "$top"/kmeta/tables/*.c)
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
kbolt_rst=$top/Documentation/kbolt.rst
format_rst=$top/Documentation/profile-format.rst
lab_rst=$top/Documentation/lab.rst
kbolt_sources=("$top"/kbolt/*.[ch] "$top"/kbolt/{lib,profile,model,pass,verify,report}/*.[ch])	# not kbolt/record/: the plugin runs inside QEMU
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
        m = re.match(r'\s+((?:-\w, )?--[\w-]+(?: \S+)?)(?:\s{2,}|$)', l)
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

def table_descs(srcs):
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
    descs = table_descs(srcs)
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
		"no test kernels in $KBOLT_CACHE (scripts/fetch-kernels)"
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
		"no test kernels in $KBOLT_CACHE (scripts/fetch-kernels)"
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
		"no test kernels in $KBOLT_CACHE (scripts/fetch-kernels), or no $KBOLT"
fi

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
