#!/usr/bin/env python3
"""Page text cannot forge the framed trace, end to end through `uitrail replay`.

For each injection string of fixtures/hostile/corpus.json, builds a session whose every
printed field (nav path and title, click role, name and row cells, the
dialog it opens, an alert, a change's value, a dialog's snapshot) carries
it, replays it with --framed and with --format json, and requires that:
the framed trace has exactly one frame (one opening tag, one closing tag,
one section header); every line inside the frame is the header, a real
entry or the PAGE line; page text adds no quote, arrow, angle bracket or
line (the same session with "x" in every field has the same structure);
no invisible character or look-alike bracket is printed; the JSON and
compact traces carry none of the table of PROTOCOL.md §4.5 raw (nor '<',
'>', U+2028, U+2029: they are JSON escapes); and the JSON trace gives the
text back as ingest cleaned it (the table's dropped characters gone, NEL a
newline).

Usage: escape_test.py UITRAIL SOURCE_ROOT
"""
import json
import re
import subprocess
import sys
import tempfile

# What must never be printed raw in any output (PROTOCOL.md §4.5), restated
# here rather than read from the code so that the test checks the table.
DROPPED = ("\u0080-\u0084\u0086-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
           "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
           "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef")
LOOKALIKES = ("\u02c2\u02c3\u1433\u1438\u2329\u232a\u276c\u276d\u2770\u2771\u27e8\u27e9"
              "\u29fc\u29fd\u3008\u3009\ufe64\ufe65\uff1c\uff1e")
INVISIBLE = re.compile(f"[{DROPPED}\u0085\u2028\u2029\r\x0b\x0c]")
# In the bytes of a JSON answer: nothing of the table raw, and no '<' '>'.
JSON_RAW = re.compile(f"[{DROPPED}{LOOKALIKES}\u0085\u2028\u2029<>\x7f]")


def load_corpus(root):
    with open(f"{root}/fixtures/hostile/corpus.json", encoding="utf-8") as f:
        return json.load(f)["strings"]


def cleaned(s):
    """What ingest keeps of `s` (protocol §1 text)."""
    return re.sub(f"[{DROPPED}]", "", s.replace("\u0085", "\n"))


def session(s):
    recs = [
        ("nav", {"url": "https://shop.test/" + s, "title": s, "how": "load"}),
        ("click", {"role": s[:32], "name": s, "el": "k1" + s[:40],
                   "ctx": {"kind": "row", "cells": [s, s]}}),
        ("dialog", {"state": "open", "role": "dialog", "name": s, "el": "d1", "text": ""}),
        ("alert", {"role": "alert", "text": s, "level": "error"}),
        ("app", {"name": "evt", "text": s, "level": "info", "data": {"k": s}}),
        ("change", {"role": "combobox", "name": s, "el": "k2", "value": s}),
        ("dialog", {"state": "close", "role": "dialog", "name": s, "el": "d1", "text": s}),
    ]
    times = [0, 5, 5.2, 20, 25, 30, 40]
    return [[f"uitrail.{k}", 1715693490 + t, {"tab": "x", **r}] for (k, r), t in zip(recs, times)]


def replay(uitrail, s, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as f:
        json.dump(session(s), f, ensure_ascii=False)
        f.flush()
        p = subprocess.run([uitrail, "replay", f.name, *args], capture_output=True, check=False)
    if p.returncode != 0:
        raise AssertionError(f"uitrail replay {' '.join(args)} exited {p.returncode}: {p.stderr!r}")
    out = p.stdout.decode("utf-8")
    if "json" in args or "compact" in args:
        m = JSON_RAW.search(out)
        assert not m, f"{' '.join(args)}: {m.group(0)!r} raw in the JSON:\n{out!r}"
    return out


def skeleton(trace):
    return re.sub(r'[^"<\n\u2192]|(?<!-)>', "", trace.replace("->", ""))


def frame_entries(trace):
    """The entry lines inside the frame; raises on anything else there."""
    assert trace.count("<user_activity>") == 1, "opening tags"
    assert trace.count("</user_activity>") == 1, "closing tags"
    assert trace.count("--- Recent User Activity ---") == 1, "section headers"
    inner = trace.split("\n<user_activity>\n", 1)[1].split("</user_activity>\n", 1)[0]
    lines = inner.split("\n")
    assert lines[0] == "RECENT USER ACTIONS (newest first):", lines[0]
    assert lines[-1] == "", "the frame ends with a newline"
    assert lines[-2].startswith("PAGE: "), "the PAGE line is last"
    for line in lines[1:-2]:
        assert re.match(r"- (\d\d:\d\d)?:\d\d \S", line), f"not an entry: {line!r}"
    return lines[1:-2]


def check(uitrail, s, reference):
    framed = replay(uitrail, s, "--framed")
    entries = frame_entries(framed)
    assert skeleton(framed) == reference, f"page text added structure:\n{framed}"
    assert not INVISIBLE.search(framed), f"an invisible character printed:\n{framed!r}"
    assert not re.search(f"[{LOOKALIKES}]", framed), f"a look-alike bracket printed:\n{framed!r}"
    for line in entries:
        # A role is one token between the word and the quoted name.
        m = re.match(r"- \S+ (?:click|set|opened|closed) ([^\"]*)\"", line)
        if m:
            assert re.fullmatch(r"([A-Za-z0-9_-]+ )?", m.group(1)), f"role {m.group(1)!r}"
    doc = json.loads(replay(uitrail, s, "--format", "json"))["x"]  # by tab
    assert len(doc["events"]) == len(entries), "JSON and text entries differ"
    want = cleaned(s)
    assert doc["title"] == want, (doc["title"], want)
    kinds = {e["kind"]: e for e in doc["events"]}
    assert kinds["click"]["name"] == want
    assert kinds["click"]["ctx"]["cells"] == [want, want]
    assert kinds["change"]["value"] == want
    assert kinds["alert"]["text"] == want
    assert kinds["app"]["text"] == want
    assert kinds["app"]["data"] == {"k": want}, kinds["app"]["data"]
    assert kinds["click"]["el"] == cleaned("k1" + s[:40])[:len(kinds["click"]["el"])]
    replay(uitrail, s, "--format", "compact")  # checked raw in replay()


def main():
    uitrail = sys.argv[1]
    corpus = load_corpus(sys.argv[2])
    reference = replay(uitrail, "x", "--framed")
    assert len(frame_entries(reference)) == 6, reference
    reference = skeleton(reference)
    failed = 0
    for i, s in enumerate(corpus):
        try:
            check(uitrail, s, reference)
        except AssertionError as e:
            print(f"FAIL corpus[{i}] {s!r}: {e}")
            failed += 1
    print(f"{len(corpus)} injection strings, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
