#!/usr/bin/python3
"""Tells the story of story.json for one tab through Debian's
python3-fluent-logger as a Python backend that batches its logs does: one
logger per tag, each buffered by the standard library's
logging.handlers.MemoryHandler in front of fluent's FluentHandler (EventTime
with nanosecond_precision: each event keeps the time it was logged), and
the buffers flushed one tag at a time, FLUSH_S seconds apart, in the order
the tags were first used (what fluent-logger's PackedForward mode does for
Node). The events of one tag therefore reach the daemon seconds after the
later events of the tags flushed before it.

Usage: python_batched_sender.py HOST PORT TAB FLUSH_S
"""
import json
import logging
import logging.handlers
import os
import sys
import time

from fluent import handler


def main():
    host, port, tab, flush_s = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "story.json")) as f:
        story = json.load(f)["events"]
    buffers = {}  # tag -> (logger, MemoryHandler, FluentHandler), in order of first use
    order = []

    def logger_for(kind):
        tag = "uitrail." + kind
        if tag not in buffers:
            target = handler.FluentHandler(tag, host=host, port=port, nanosecond_precision=True)
            target.setFormatter(handler.FluentRecordFormatter())
            memory = logging.handlers.MemoryHandler(capacity=1000, flushLevel=logging.CRITICAL + 1,
                                                    target=target, flushOnClose=False)
            log = logging.getLogger(tag)
            log.propagate = False
            log.setLevel(logging.INFO)
            log.addHandler(memory)
            buffers[tag] = (log, memory, target)
            order.append(tag)
        return buffers[tag][0]

    start = time.time()
    for seq, e in enumerate(story, 1):
        wait = start + e["at_ms"] / 1000 - time.time()
        if wait > 0:
            time.sleep(wait)
        logger_for(e["kind"]).info(dict(e["record"], tab=tab, seq=seq))
    for tag in order:
        time.sleep(flush_s)
        buffers[tag][1].flush()
    for _, memory, target in buffers.values():
        memory.close()
        target.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
