#!/usr/bin/env python3
"""Writes the seed corpora of the wire fuzz targets into fixtures/fuzz/.

Run from anywhere: python3 tests/fuzz/make_corpus.py. The output is
deterministic, so re-running it changes nothing unless this file changed.
Inputs that fuzzing found and that were fixed are kept by hand next to
these seeds, named regress-*, and are never overwritten here.
"""
import gzip
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fuzz")


class EventTime:
    def __init__(self, sec, nsec=0):
        self.sec, self.nsec = sec, nsec


class Raw:
    """Bytes inserted as they are (hostile headers)."""
    def __init__(self, data):
        self.data = data


def pack(v):
    """A small msgpack encoder: enough for the seeds, nothing more."""
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, Raw):
        return v.data
    if isinstance(v, EventTime):
        return b"\xd7\x00" + struct.pack(">II", v.sec, v.nsec)
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        if v >= 0:
            return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode("utf-8", "surrogateescape")
        return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xdb" + struct.pack(">I", len(b))) + b
    if isinstance(v, bytes):
        return b"\xc6" + struct.pack(">I", len(v)) + v
    if isinstance(v, (list, tuple)):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdd" + struct.pack(">I", len(v))
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) < 16 else b"\xdf" + struct.pack(">I", len(v))
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


T = 1718000000
RECORDS = {
    "nav": {"tab": "t1", "url": "/catalog?q=1", "title": "Catalog", "how": "load", "tz": -300, "seq": 1},
    "click": {"tab": "t1", "role": "link", "name": "Blue Widget", "el": "r1",
              "ctx": {"kind": "row", "cells": ["Blue Widget", "SKU-1234"]},
              "state": {"expanded": True}, "sens": False},
    "change": {"tab": "t1", "role": "combobox", "name": "Status", "el": "s", "value": "Published",
               "len": 9, "checked": False},
    "alert": {"tab": "t1", "role": "alert", "text": "Price must be positive", "level": "error"},
    "dialog": {"tab": "t1", "state": "open", "role": "dialog", "name": "Blue Widget", "el": "d",
               "text": "Price: $24.99 \u00b7 Status: Published"},
    "mutation": {"tab": "t1", "dom": [1200, 14], "recs": [["main", 0, 3, 40, 5, 900], ["p", 2, 9, 0, 1, 90000]],
                 "busy": 1, "dropped": 2, "rt": 1718000000500000},
    "close": {"tab": "t1"},
    "unload": {"tab": "t1", "seq": 9, "persisted": True},
    "app": {"tab": "t1", "name": "order.refund_failed", "text": "Refund exceeds captured amount",
            "level": "error", "data": {"order": "4411", "amount": "150.00"}},
    "invalid": {"tab": "t1", "fields": [{"role": "spinbutton", "name": "Amount", "text": "Enter an amount"},
                                        {"role": "checkbox", "text": "You must accept the terms"}]},
}
# In the order of ut_kind: the record seeds' first byte picks the kind.
KINDS = ["nav", "click", "change", "alert", "dialog", "mutation", "close", "unload", "app", "invalid"]


def gz(data):
    """gzip, deterministic (no time stamp in the header)."""
    return gzip.compress(data, 9, mtime=0)


def forward_seeds():
    s = {}
    for kind, rec in RECORDS.items():
        s["message-" + kind] = pack(["uitrail." + kind, EventTime(T, 5000), rec])
    s["message-option-chunk"] = pack(["uitrail.close", T, {"tab": "a"}, {"chunk": "c1"}])
    s["message-float-time"] = pack(["uitrail.close", T + 0.25, {"tab": "a"}])
    s["heartbeat"] = b"\xc0"
    s["forward"] = pack(["uitrail.click", [[T, RECORDS["click"]], [T + 1, RECORDS["click"]]], {"chunk": "k"}])
    body = pack([T, RECORDS["alert"]]) + pack([EventTime(T, 1), RECORDS["alert"]])
    s["packed-bin"] = pack(["uitrail.alert", body, {"compressed": "text"}])
    entry = pack([T, {"tab": "a"}])
    s["packed-str"] = b"\x92" + pack("uitrail.close") + b"\xdb" + struct.pack(">I", len(entry)) + entry
    s["packed-str-cut"] = b"\x92" + pack("uitrail.close") + b"\xdb" + struct.pack(">I", 8) + entry[:8]
    s["packed-gzip"] = pack(["uitrail.alert", gz(body), {"compressed": "gzip", "chunk": "g"}])
    s["packed-gzip-two-members"] = pack(["uitrail.alert", gz(body[:len(body) // 2 + 1]) + gz(body[len(body) // 2 + 1:]),
                                         {"compressed": "gzip"}])
    s["packed-gzip-not-gzip"] = pack(["uitrail.alert", body, {"compressed": "gzip"}])
    s["packed-gzip-cut"] = pack(["uitrail.alert", gz(body)[:-6], {"compressed": "gzip"}])
    s["packed-gzip-bomb"] = pack(["uitrail.alert", gz(b"\0" * (9 << 20)), {"compressed": "gzip"}])
    s["packed-gzip-bad-content"] = pack(["uitrail.alert", gz(b"\xc1\x00\x01"), {"compressed": "gzip"}])
    s["one-tag-message"] = pack(["uitrail", T, dict(RECORDS["click"], kind="click")])
    s["one-tag-forward"] = pack(["uitrail", [[T + i, dict(RECORDS[k], kind=k)] for i, k in enumerate(KINDS)],
                                 {"chunk": "o"}])
    s["one-tag-no-kind"] = pack(["uitrail", T, RECORDS["alert"]])
    s["packed-garbage"] = pack(["uitrail.alert", b"\xc1\x00\x01"])
    s["foreign-tag"] = pack(["app.log", T, {"msg": "x"}, {"chunk": "z"}])
    s["meta"] = pack(["uitrail.meta", T, {"format": "uitrail-recording", "version": 1}])
    s["unknown-kind"] = pack(["uitrail.scroll", T, {"tab": "a"}])
    s["bad-record"] = pack(["uitrail.click", T, {"tab": "a", "role": 7}])
    s["bad-time"] = pack(["uitrail.close", Raw(b"\xd6\x00\x00\x00\x00\x01"), {"tab": "a"}])
    s["stream"] = b"".join(pack(["uitrail." + k, EventTime(T + i), RECORDS[k]]) for i, k in enumerate(KINDS))
    s["hostile-array32"] = b"\xdd\x10\x00\x00\x00"
    s["hostile-map32"] = b"\x93\xa1t\x01\xdf\x7f\xff\xff\xff"
    s["hostile-str32"] = b"\x93\xa1t\x01\xdb\xff\xff\xff\xff"
    s["hostile-nesting"] = b"\x92\xa1t" + b"\x91" * 40 + b"\xc0"
    s["hostile-root-map"] = b"\x80"
    s["hostile-int-tag"] = b"\x93\x01\x01\x80"
    s["truncated"] = s["stream"][: len(s["stream"]) // 2]
    return s


def record_seeds():
    s = {}
    for i, kind in enumerate(KINDS):
        s["good-" + kind] = bytes([i]) + pack(RECORDS[kind])
    s["missing-el"] = bytes([1]) + pack({"tab": "t", "role": "button", "name": "x"})
    s["wrong-type"] = bytes([1]) + pack({"tab": "t", "role": "button", "name": "x", "el": 3})
    s["bad-enum"] = bytes([0]) + pack({"tab": "t", "url": "/", "how": "teleport"})
    s["bad-app-key"] = bytes([KINDS.index("app")]) + pack({"tab": "t", "name": "x", "data": {"e mail": "a"}})
    s["bad-app-many"] = bytes([KINDS.index("app")]) + pack({"tab": "t", "name": "x", "data": {str(i): "v" for i in range(17)}})
    s["invalid-empty"] = bytes([KINDS.index("invalid")]) + pack({"tab": "t", "fields": []})
    s["invalid-many"] = bytes([KINDS.index("invalid")]) + pack(
        {"tab": "t", "fields": [{"role": "textbox", "name": "f%d" % i, "text": "m"} for i in range(12)]})
    s["invalid-field-not-map"] = bytes([KINDS.index("invalid")]) + pack({"tab": "t", "fields": [["textbox", "x"]]})
    s["not-map"] = bytes([6]) + pack([1, 2])
    s["invalid-utf8"] = bytes([3]) + pack({"tab": "t\udcff", "role": "log", "text": "a\udcc0\udcafb"})
    s["many-cells"] = bytes([1]) + pack({"tab": "t", "role": "row", "name": "r", "el": "r",
                                          "ctx": {"kind": "row", "cells": ["c%d" % i for i in range(20)]}})
    s["loaded"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0, "recs": [],
                                                          "loaded": True})
    s["loaded-not-bool"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0,
                                                                   "recs": [], "loaded": 1})
    s["input"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0, "recs": [],
                                                         "input": True})
    s["input-not-bool"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0,
                                                                  "recs": [], "input": "yes"})
    s["net"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0, "recs": [],
                                                       "net": 2})
    s["net-negative"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0,
                                                                "recs": [], "net": -1})
    s["net-huge"] = bytes([KINDS.index("mutation")]) + pack({"tab": "t", "dom": [40, 6], "busy": 0,
                                                            "recs": [], "net": 1 << 40})
    s["many-recs"] = bytes([5]) + pack({"tab": "t", "dom": [1, 1], "busy": 0,
                                         "recs": [["e%d" % i, 1, 1, 1, 1, 1] for i in range(520)]})
    s["long-text"] = bytes([4]) + pack({"tab": "t", "state": "open", "role": "dialog", "el": "d",
                                         "text": "\u00e9" * 1500})
    return s


def json_seeds():
    s = {}
    msgs = [["uitrail." + k, T + i, RECORDS[k]] for i, k in enumerate(KINDS)]
    s["one-message"] = json.dumps(msgs[1]).encode()
    s["array-of-messages"] = json.dumps(msgs).encode()
    s["forward-mode"] = json.dumps(["uitrail.close", [[T, {"tab": "a"}], [T + 0.5, {"tab": "b"}]],
                                    {"chunk": "c"}]).encode()
    s["empty-array"] = b"[]"
    s["object-root"] = b'{"tag":"uitrail.close"}'
    s["syntax-error"] = b'["uitrail.close",\n 1718000000 {"tab":"a"}]'
    s["duplicate-key"] = b'["t", 1, {"tab":"a","tab":"b"}]'
    s["deep"] = b'["t", 1, {"a":[[[[[[[[1]]]]]]]]}]'
    s["unicode"] = json.dumps(["uitrail.alert", T, {"tab": "\u00e9", "role": "log", "text": "\u2603 \\u0000"}]).encode()
    return s


def write(target, seeds):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


write("fuzz_forward", forward_seeds())
write("fuzz_validate", record_seeds())
write("fuzz_json", json_seeds())
