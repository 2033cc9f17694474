#!/usr/bin/env python3
"""No byte of the PII corpus survives into any output of `uitrail replay`.

Builds a session whose every text field (names, row cells, context names,
dialog snapshots, alerts, titles, URLs, choice values) carries the items of
fixtures/pii/corpus.txt, replays it in every output format, and requires that
no item, nor any 8-byte piece of one, appears in what uitrail printed.

Usage: pii_test.py UITRAIL SOURCE_ROOT
"""
import json
import subprocess
import sys
import tempfile

PIECE = 8  # bytes of a secret that may not survive anywhere


def corpus(root):
    """(text shown in the page, the secret in it) for each corpus line."""
    items = []
    with open(f"{root}/fixtures/pii/corpus.txt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            # "Bearer " is kept by design; the token after it is the secret.
            secret = line
            for word in ("bearer ", "basic "):  # kept by design, like "Bearer "
                if line.lower().startswith(word):
                    secret = line[len(word):]
            items.append((line, secret))
    return items


def session(items):
    t = 1718000000.0
    seq = 0
    out = []

    def ev(kind, rec):
        nonlocal t, seq
        t += 2.5
        seq += 1
        out.append([f"uitrail.{kind}", round(t, 3), {"tab": "pii", "seq": seq, **rec}])

    for i, item in enumerate(items):
        ev("nav", {"url": f"https://shop.example/orders/{i}?q={item}#{item}",
                   "title": f"Order for {item}", "how": "push"})
        ev("click", {"role": "link", "name": f"Open {item}", "el": f"row-{i}",
                     "ctx": {"kind": "row", "cells": [item, "SKU-1234", f"contact {item}"]}})
        ev("dialog", {"state": "open", "role": "dialog", "name": item, "el": f"dlg-{i}",
                      "text": f"Customer: {item} · Status: Published"})
        ev("dialog", {"state": "close", "role": "dialog", "name": item, "el": f"dlg-{i}"})
        ev("alert", {"role": "alert", "text": f"Could not reach {item}", "level": "error"})
        ev("change", {"role": "combobox", "name": f"Owner {item}", "el": f"owner-{i}",
                      "value": item})
        ev("click", {"role": "button", "name": "Save", "el": f"save-{i}",
                     "ctx": {"kind": "form", "name": f"Edit {item}"}})
    return out


def leaks(text, secrets, clean):
    """Pieces of a secret in `text`; pieces that the output of the same
    session without any secret (`clean`) also holds do not count."""
    found = []
    for secret in secrets:
        raw = secret.encode("utf-8")
        pieces = {raw[k:k + PIECE] for k in range(0, max(1, len(raw) - PIECE + 1))}
        for p in sorted(pieces):
            if len(p) == PIECE and p in text and p not in clean:
                found.append((secret, p.decode("utf-8", "replace")))
                break
    return found


def main():
    uitrail, root = sys.argv[1], sys.argv[2]
    items = corpus(root)
    assert len(items) > 50, "the PII corpus is unexpectedly small"
    secrets = [secret for _, secret in items]
    failed = False
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as f, \
         tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as c:
        json.dump(session([shown for shown, _ in items]), f, ensure_ascii=False)
        f.flush()
        json.dump(session(["Jane"] * len(items)), c)
        c.flush()
        runs = [["replay", f.name], ["replay", f.name, "--format", "json"],
                ["replay", f.name, "--format", "marks"], ["replay", f.name, "--framed"],
                ["replay", f.name, "--ring", "1000"]]
        for args in runs:
            clean = subprocess.run([uitrail, args[0], c.name] + args[2:], capture_output=True).stdout
            p = subprocess.run([uitrail] + args, capture_output=True, check=False)
            if p.returncode != 0:
                print(f"FAIL: uitrail {' '.join(args)} exited {p.returncode}: {p.stderr!r}")
                failed = True
                continue
            for where, text in (("stdout", p.stdout), ("stderr", p.stderr)):
                for item, piece in leaks(text, secrets, clean):
                    print(f"FAIL: uitrail {' '.join(args[:1] + args[2:])}: {where} holds "
                          f"{piece!r} of {item!r}")
                    failed = True
        # The replay must have printed the events, redacted: not an empty trace.
        p = subprocess.run([uitrail, "replay", f.name, "--ring", "1000"], capture_output=True)
        if p.stdout.count(b"[email]") < 5 or p.stdout.count(b"[card]") < 5:
            print("FAIL: the trace does not show the redaction labels it should")
            failed = True
    print(f"{len(items)} corpus items, {len(runs)} outputs: " + ("leaks found" if failed else "no leak"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
