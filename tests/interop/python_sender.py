#!/usr/bin/python3
"""Tells the story of story.json for one tab through Debian's
python3-fluent-logger (fluent.sender, Message mode, EventTime with
nanosecond_precision), at its own pace, as a Python backend would.

Usage: python_sender.py HOST PORT TAB
"""
import json
import os
import sys
import time

from fluent import sender


def main():
    host, port, tab = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "story.json")) as f:
        story = json.load(f)["events"]
    logger = sender.FluentSender("uitrail", host=host, port=port, nanosecond_precision=True)
    start = time.time()
    for seq, e in enumerate(story, 1):
        wait = start + e["at_ms"] / 1000 - time.time()
        if wait > 0:
            time.sleep(wait)
        record = dict(e["record"], tab=tab, seq=seq)
        if not logger.emit_with_time(e["kind"], time.time(), record):
            print("emit failed: %r" % (logger.last_error,), file=sys.stderr)
            return 1
    logger.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
