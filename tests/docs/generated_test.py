#!/usr/bin/env python3
"""The texts made from uitraild's option table are the committed ones, and
no other text restates a default that has changed.

Every default is written once, in its row of src/daemon/config.c. `--help`
(and the man page help2man makes from it) prints the rows; OPTIONS.md and
tools/deploy/uitraild.conf are the output of `uitraild
--print-config-reference` and `--print-example-config`, committed: this test
fails when they differ, with the command that remakes them. Prose elsewhere
(the top-level *.md but OPTIONS.md and CHANGELOG.md, which is history) may
name a default, but then the sentence that names the option (`--NAME`) and
the word "default" must carry the current value. Likewise a text that counts
the scorer's parameters ("the 14 scorer parameters") has the count of rows
in include/uitrail/stab_params.h.

Usage: generated_test.py UITRAILD SOURCE_ROOT
"""
import difflib
import os
import re
import subprocess
import sys

GENERATED = [
    ('--print-config-reference', 'OPTIONS.md'),
    ('--print-example-config', os.path.join('tools', 'deploy', 'uitraild.conf')),
]
NEAR_BEFORE, NEAR_AFTER = 50, 60  # characters around an option that speak of it
ROW = re.compile(r'^\| `--([a-z0-9-]+)(?: [^`]*)?` \| `([^`]*)` \|', re.M)


def run(uitraild, flag):
    return subprocess.run([uitraild, flag], check=True, capture_output=True, text=True).stdout


def human_bytes(n):
    """1073741824 -> '1 GiB', the way prose writes a size; None if not whole."""
    for unit, size in (('GiB', 1 << 30), ('MiB', 1 << 20), ('KiB', 1 << 10)):
        if n >= size and n % size == 0:
            return f'{n // size} {unit}'
    return None


def spellings(value):
    """The ways prose may write a default: as printed, and for a whole number
    with spaces between thousands (100 000) or as a size (1 GiB)."""
    out = {value.replace(' ms', '')}
    if value.isdigit():
        n = int(value)
        out.add(f'{n:,}'.replace(',', ' '))
        if human_bytes(n):
            out.add(human_bytes(n))
    return out


def sentences(text):
    """The sentences of a Markdown text outside code blocks, lines joined."""
    text = re.sub(r'^```.*?^```', '', text, flags=re.M | re.S)
    for paragraph in re.split(r'\n\s*\n', text):
        yield from re.split(r'(?<=[.;])\s+(?=[A-Z`(])', ' '.join(paragraph.split()))


def scorer_counts(root, docs, reference):
    """Prose that counts the scorer's parameters ("the 14 scorer parameters")
    says how many rows include/uitrail/stab_params.h has: uitraild prints one
    `--stab-NAME` option per row, and `--stab-model`, which is no row."""
    count = len([n for n in re.findall(r'^\| `--stab-([a-z0-9-]+)', reference, re.M) if n != 'model'])
    problems = [] if count >= 10 else [f'only {count} --stab- options found in the reference']
    for rel in docs:
        with open(os.path.join(root, rel), encoding='utf-8') as f:
            text = ' '.join(f.read().split())
        for m in re.finditer(r'\b(\d+) scorer parameters\b|\bscorer\'s (\d+) parameters\b', text):
            if int(m.group(1) or m.group(2)) != count:
                problems.append(f'{rel}: says {m.group(0)}, there are {count} (include/uitrail/stab_params.h)')
    return problems


def main():
    uitraild, root = sys.argv[1], sys.argv[2]
    problems = []
    for flag, rel in GENERATED:
        made = run(uitraild, flag)
        with open(os.path.join(root, rel), encoding='utf-8') as f:
            committed = f.read()
        if made != committed:
            diff = ''.join(difflib.unified_diff(committed.splitlines(True), made.splitlines(True),
                                                rel, f'uitraild {flag}'))
            problems.append(f'{rel} is not what `uitraild {flag}` prints: remake it with\n'
                            f'  build/src/daemon/uitraild {flag} > {rel}\n{diff}')
    defaults = {name: value for name, value in ROW.findall(run(uitraild, '--print-config-reference'))
                if re.match(r'^[\d.]+( ms)?$', value)}
    if len(defaults) < 20:
        problems.append(f'only {len(defaults)} numeric defaults found in the reference')
    docs = [n for n in sorted(os.listdir(root)) if n.endswith('.md') and n not in ('OPTIONS.md', 'CHANGELOG.md')]
    docs.append(os.path.join('tools', 'sender', 'README.md'))
    checked = 0
    for rel in docs:
        with open(os.path.join(root, rel), encoding='utf-8') as f:
            text = f.read()
        for sentence in sentences(text):
            if 'default' not in sentence:
                continue
            for name, value in defaults.items():
                for m in re.finditer(rf'`--{re.escape(name)}(?![a-z0-9-])', sentence):
                    # The words around the option: "`--reorder-ms` (default 1000)",
                    # "(`--max-memory`, 1 GiB by default)", "300 ms by default (`--debounce-ms`)".
                    near = sentence[max(0, m.start() - NEAR_BEFORE):m.end() + NEAR_AFTER]
                    if 'default' not in near:
                        continue
                    checked += 1
                    if not any(re.search(rf'(?<![\d.]){re.escape(s)}(?![\d.])', near) for s in spellings(value)):
                        problems.append(f'{rel}: says a default of --{name}, which is {value} now:\n  {near}')
    problems += scorer_counts(root, docs, run(uitraild, '--print-config-reference'))
    for p in problems:
        print(p)
    print(f'{len(GENERATED)} generated files, {checked} sentences naming a default checked, '
          f'{len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
