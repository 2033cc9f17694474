#!/usr/bin/env python3
"""Every relative link of the documentation points to something that is there.

Checks README.md, the other top-level *.md files and tools/sender/README.md:
each [text](target) and ![alt](target) outside code whose target is not a URL
must name an existing file or directory (relative to the file that links),
and a #fragment must be a heading of that file, spelled as GitHub spells
anchors. Prints one line per broken link and exits 1 if there is any.

Usage: links_test.py SOURCE_ROOT
"""
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+(?:\([^()]*\))?)(?:\s+"[^"]*")?\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')


def prose_lines(text):
    """The lines outside fenced code blocks, numbered from 1, inline code removed."""
    fence = None
    for number, line in enumerate(text.split('\n'), 1):
        stripped = line.lstrip()
        if fence is None and stripped.startswith(('```', '~~~')):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, re.sub(r'`[^`]*`', '``', line)


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation out, spaces to dashes."""
    text = re.sub(r'`([^`]*)`', r'\1', heading)
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = text.strip().lower()
    text = ''.join(ch for ch in text if ch.isalnum() or ch in '-_ ')
    return text.replace(' ', '-')


def anchors(path):
    seen = {}
    found = set()
    fence = None
    with open(path, encoding='utf-8') as f:
        for line in f.read().split('\n'):
            stripped = line.lstrip()
            if stripped.startswith(('```', '~~~')):
                fence = None if fence else stripped[:3]
                continue
            m = None if fence else HEADING.match(line)
            if not m:
                continue
            base = anchor(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f'{base}-{n}')
    return found


def check(root, rel):
    problems = []
    path = os.path.join(root, rel)
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for number, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue  # http:, https:, mailto:
            file_part, _, fragment = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f'{rel}:{number}: {target}'
            if not os.path.exists(dest):
                problems.append(f'{where}: no such file')
            elif fragment and dest.endswith('.md') and fragment not in anchors(dest):
                problems.append(f'{where}: no heading #{fragment} in {os.path.relpath(dest, root)}')
    return problems


def main():
    root = sys.argv[1]
    files = sorted(n for n in os.listdir(root) if n.endswith('.md'))
    files.append(os.path.join('tools', 'sender', 'README.md'))
    if 'README.md' not in files:
        print('no README.md in', root)
        return 1
    problems = [p for rel in files for p in check(root, rel)]
    for p in problems:
        print(p)
    print(f'{len(files)} files checked, {len(problems)} broken links')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
