#!/usr/bin/env python3
"""Writes the seed corpora of the daemon fuzz targets, fixtures/fuzz/fuzz_http/
and fixtures/fuzz/fuzz_ws/.

Run from anywhere: python3 tests/fuzz/make_daemon_corpus.py. The output is
deterministic. Inputs that fuzzing found and that were fixed are kept by hand
next to these seeds, named regress-*, and are never overwritten here.

fuzz_http input: one control byte (where the request bytes are cut in two
writes), then the bytes a client sends on http.sock.
fuzz_http_tcp input: as fuzz_http's, sent over TCP (fixtures/fuzz/fuzz_http_tcp/).
fuzz_ws input: one control byte (bit 0: send an allowed Origin; bit 1: the
handshake and the first piece of frames in one write; bits 2-7: the cut),
then the WebSocket frame bytes sent after the upgrade request.
"""
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fuzz")
T = 1718000000


def pack(v):
    """A small msgpack encoder: enough for the seeds, nothing more."""
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, str):
        b = v.encode("utf-8", "surrogateescape")
        return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b
    if isinstance(v, bytes):
        return b"\xc4" + bytes([len(v)]) + v
    if isinstance(v, (list, tuple)):
        return bytes([0x90 | len(v)]) + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        return bytes([0x80 | len(v)]) + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


def event_time(sec, nsec=0):
    return b"\xd7\x00" + struct.pack(">II", sec, nsec)


def message(kind, record, t=T, option=None):
    parts = [pack("uitrail." + kind), event_time(t), pack(record)]
    if option is not None:
        parts.append(pack(option))
    return bytes([0x90 | len(parts)]) + b"".join(parts)


NAV = {"tab": "t1", "url": "/catalog", "title": "Catalog", "how": "load", "tz": 60, "seq": 1}
CLICK = {"tab": "t1", "role": "button", "name": "Edit Item", "el": "b1",
         "ctx": {"kind": "row", "cells": ["Blue Widget", "SKU-1234"]}, "seq": 2}
DIALOG = {"tab": "t1", "state": "open", "role": "dialog", "name": "Blue Widget", "el": "d1",
          "text": "Price: $24.99", "seq": 3}
MUTATION = {"tab": "t1", "dom": [1200, 14], "recs": [["main", 0, 3, 40, 5, 900]], "busy": 1,
            "seq": 4}
STREAM = (message("nav", NAV) + message("click", CLICK, T + 1) + message("dialog", DIALOG, T + 2)
          + message("mutation", MUTATION, T + 2, {"chunk": "c1"}))


def request(method, target, headers=(), body=b"", version="HTTP/1.1", host="localhost"):
    head = "%s %s %s\r\n" % (method, target, version)
    if host is not None:
        head += "Host: %s\r\n" % host
    head += "".join("%s: %s\r\n" % h for h in headers)
    if body and not any(h[0].lower() in ("content-length", "transfer-encoding") for h in headers):
        head += "Content-Length: %d\r\n" % len(body)
    return head.encode() + b"\r\n" + body


def chunked(body, size=7):
    out = b""
    for i in range(0, len(body), size):
        piece = body[i:i + size]
        out += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\n\r\n"


MSGPACK = (("Content-Type", "application/msgpack"),)
JSON = (("Content-Type", "application/json"),)


def http_seeds():
    ingest = request("POST", "/v1/ingest", MSGPACK, STREAM)
    s = {
        "healthz": request("GET", "/healthz"),
        "metrics": request("GET", "/metrics"),
        "tabs": request("GET", "/v1/tabs"),
        "trace-text": request("GET", "/v1/tabs/t1/trace"),
        "trace-json": request("GET", "/v1/tabs/t1/trace?format=json&limit=5&max_tokens=200&framed=1"),
        "trace-bad-param": request("GET", "/v1/tabs/t1/trace?format=xml&color=1"),
        "trace-escaped-tab": request("GET", "/v1/tabs/t%31%00x/trace"),
        "trace-bad-escape": request("GET", "/v1/tabs/t%3/trace"),
        "trace-long-tab": request("GET", "/v1/tabs/" + "x" * 129 + "/trace"),
        "stable": request("GET", "/v1/tabs/t1/stable?wait_ms=0"),
        "stable-wait": request("GET", "/v1/tabs/t1/stable?wait_ms=50") + request("GET", "/healthz"),
        "stable-bad": request("GET", "/v1/tabs/t1/stable?wait_ms=99999999"),
        "events": request("GET", "/v1/events?tab=*"),
        "events-tab": request("GET", "/v1/events?tab=t%201"),
        "ingest-msgpack": ingest,
        "ingest-chunked": request("POST", "/v1/ingest",
                                  MSGPACK + (("Transfer-Encoding", "chunked"),), chunked(STREAM)),
        "ingest-json": request("POST", "/v1/ingest", JSON, json.dumps(
            [["uitrail.nav", T, NAV], ["uitrail.close", T + 1.5, {"tab": "t2"}]]).encode()),
        "ingest-json-bad": request("POST", "/v1/ingest", JSON, b'["uitrail.nav", 1, {'),
        "ingest-cut": request("POST", "/v1/ingest", MSGPACK, STREAM[:-5]),
        "ingest-garbage": request("POST", "/v1/ingest", MSGPACK, b"\xc1\xc1\xc1"),
        "ingest-nul-tab": request("POST", "/v1/ingest", MSGPACK,
                                  message("alert", {"tab": "a\x00b", "role": "alert", "text": "x"})),
        "ingest-type": request("POST", "/v1/ingest", (("Content-Type", "text/plain"),), b"hello"),
        "ingest-too-large": request("POST", "/v1/ingest",
                                    MSGPACK + (("Content-Length", "999999999"),), b"\x90"),
        "ingest-get": request("GET", "/v1/ingest"),
        "method-not-allowed": request("DELETE", "/v1/tabs"),
        "not-found": request("GET", "/nothing/here?x=1"),
        "pipelined": ingest + request("GET", "/v1/tabs/t1/trace") + request("GET", "/v1/tabs")
        + request("GET", "/metrics"),
        "connection-close": request("GET", "/healthz", (("Connection", "close"),))
        + request("GET", "/v1/tabs"),
        "http10": request("GET", "/healthz", version="HTTP/1.0"),
        "http10-keepalive": request("GET", "/v1/tabs", (("Connection", "keep-alive"),),
                                    version="HTTP/1.0") + request("GET", "/healthz"),
        "upgrade-other": request("GET", "/v1/tabs", (("Connection", "Upgrade"), ("Upgrade", "h2c"))),
        "websocket": request("GET", "/v1/ingest", (
            ("Connection", "Upgrade"), ("Upgrade", "websocket"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Protocol", "uitrail.v1"))) + ws_frame(0x2, message("nav", NAV)),
        "websocket-bad-key": request("GET", "/v1/ingest", (
            ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Key", "short"),
            ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Protocol", "uitrail.v1"))),
        "websocket-version": request("GET", "/v1/ingest", (
            ("Connection", "Upgrade"), ("Upgrade", "websocket"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "8"))),
        "websocket-origin": request("GET", "/v1/ingest", (
            ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Origin", "http://evil.example"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Protocol", "uitrail.v1"))),
        "demo-path": request("GET", "/demo/index.html"),
        "headers-too-long": request("GET", "/healthz", (("X-Pad", "p" * 17000),)),
        "malformed-line": b"GET /healthz HTTP/9.9\r\n\r\n",
        "malformed-garbage": b"\x00\x01\x02\r\n\r\n",
        "malformed-header": b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n",
        "truncated": request("GET", "/v1/tabs/t1/trace")[:20],
        "head": request("HEAD", "/healthz") + request("HEAD", "/v1/events") + request("GET", "/v1/tabs"),
        "expect-continue": request("POST", "/v1/ingest", MSGPACK + (("Expect", "100-continue"),), STREAM),
        "expect-too-large": request("POST", "/v1/ingest", MSGPACK + (
            ("Expect", "100-continue"), ("Content-Length", "999999999")), b"\x90"),
    }
    # The control byte spreads the cut over the input.
    return {name: bytes([(i * 37) % 256]) + data for i, (name, data) in enumerate(sorted(s.items()))}


OWN = "127.0.0.1:7317"  # FUZZ_OWN_ADDRESS
BEARER = (("Authorization", "Bearer fuzz-token"),)  # FUZZ_TOKEN
WS_HEADERS = (("Connection", "Upgrade"), ("Upgrade", "websocket"),
              ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
              ("Sec-WebSocket-Protocol", "uitrail.v1"))


def http_tcp_seeds():
    """fuzz_http_tcp: what a client of --http sends: the demo files with and
    without a Host of ours, the bearer token, WebSocket origins."""
    s = {
        "demo-config": request("GET", "/demo/config.json", host=OWN),
        "demo-config-no-host": request("GET", "/demo/config.json", host=None),
        "demo-config-http10": request("GET", "/demo/config.json", version="HTTP/1.0", host=None),
        "demo-config-empty-host": request("GET", "/demo/config.json", host=""),
        "demo-index-rebinding": request("GET", "/demo/", host="evil.example:7317"),
        "demo-localhost": request("GET", "/demo/index.html", host="localhost:7317"),
        "demo-head": request("HEAD", "/demo/", host=OWN) + request("GET", "/sender/uitrail.js", host=OWN),
        "demo-escape": request("GET", "/demo/../../etc/passwd", host=OWN)
        + request("GET", "/sender/%2e%2e/x", host=OWN),
        "demo-token": request("GET", "/v1/tabs?token=0123", host=OWN)
        + request("GET", "/v1/tabs/t1/trace?token=x&format=json", host=OWN),
        "bearer-tabs": request("GET", "/v1/tabs", BEARER, host=OWN)
        + request("GET", "/metrics", BEARER, host=OWN),
        "bearer-wrong": request("GET", "/v1/tabs", (("Authorization", "Bearer nope"),), host=OWN)
        + request("GET", "/v1/tabs", (("Authorization", "Basic Zm9v"),), host=OWN),
        "no-token": request("GET", "/v1/tabs/t1/trace", host=None),
        "bearer-ingest": request("POST", "/v1/ingest", MSGPACK + BEARER, STREAM, host=OWN)
        + request("GET", "/v1/tabs/t1/trace", BEARER, host=OWN),
        "bearer-events": request("GET", "/v1/events?tab=*", BEARER, host=OWN),
        "expect-continue": request("POST", "/v1/ingest", JSON + BEARER + (("Expect", "100-continue"),),
                                   json.dumps([["uitrail.nav", T, NAV]]).encode(), host=OWN),
        "ws-own-origin": request("GET", "/v1/ingest", WS_HEADERS + (("Origin", "http://" + OWN),),
                                 host=OWN) + ws_frame(0x2, message("nav", NAV)),
        "ws-allowed-origin": request("GET", "/v1/ingest", WS_HEADERS + (("Origin", "http://fuzz.example"),),
                                     host=OWN) + ws_frame(0x2, message("nav", NAV)),
        "ws-foreign-origin": request("GET", "/v1/ingest", WS_HEADERS + (("Origin", "http://evil.example"),),
                                     host=OWN),
        "ws-empty-origin": request("GET", "/v1/ingest", WS_HEADERS + (("Origin", ""),), host=None),
        "ws-no-origin-bearer": request("GET", "/v1/ingest", WS_HEADERS + BEARER, host=OWN)
        + ws_frame(0x2, message("nav", NAV)),
        "ws-no-origin": request("GET", "/v1/ingest", WS_HEADERS, host=None),
    }
    return {name: bytes([(i * 41) % 256]) + data for i, (name, data) in enumerate(sorted(s.items()))}


MASK = b"\x37\xfa\x21\x3d"


def ws_frame(opcode, payload, fin=True, masked=True, rsv=0, length=None):
    """One RFC 6455 frame; `length` overrides the length field (hostile)."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    m = 0x80 if masked else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 65536:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if not masked:
        return head + payload
    return head + MASK + bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))


def ws_seeds():
    one = message("nav", NAV)
    s = {
        "binary-one": ws_frame(0x2, one),
        "binary-stream-ack": ws_frame(0x2, STREAM),
        "binary-two-messages": ws_frame(0x2, one) + ws_frame(0x2, message("close", {"tab": "t1"})),
        "binary-ack-bytes": ws_frame(0x2, message("close", {"tab": "t3"}, option={"chunk": "\x01\xff"})),
        "fragmented": ws_frame(0x2, STREAM[:10], fin=False) + ws_frame(0x0, STREAM[10:40], fin=False)
        + ws_frame(0x0, STREAM[40:]),
        "fragmented-ping": ws_frame(0x2, STREAM[:10], fin=False) + ws_frame(0x9, b"hi")
        + ws_frame(0x0, STREAM[10:]),
        "heartbeat": ws_frame(0x2, b"\xc0"),
        "ping": ws_frame(0x9, b"ping"),
        "pong": ws_frame(0xA, b""),
        "close": ws_frame(0x8, struct.pack(">H", 1000) + b"bye"),
        "close-bad-code": ws_frame(0x8, struct.pack(">H", 999)),
        "events-then-close": ws_frame(0x2, STREAM) + ws_frame(0x8, struct.pack(">H", 1001)),
        "text": ws_frame(0x1, b'["uitrail.nav",1,{}]'),
        "unmasked": ws_frame(0x2, one, masked=False),
        "reserved-bits": ws_frame(0x2, one, rsv=4),
        "unknown-opcode": ws_frame(0x3, b"x"),
        "control-too-long": ws_frame(0x9, b"p" * 126),
        "continuation-first": ws_frame(0x0, one),
        "oversize-16": ws_frame(0x2, b"\x90", length=65535),
        "oversize-64": ws_frame(0x2, b"\x90", length=1 << 40),
        "message-cut": ws_frame(0x2, one[:-3]),
        "message-garbage": ws_frame(0x2, b"\xdd\x10\x00\x00\x00"),
        "bad-record": ws_frame(0x2, message("click", {"tab": "t1", "role": 7})),
        "foreign-tag": ws_frame(0x2, b"\x93\xa7app.log\x01\x81\xa1m\xa1x"),
        "empty-binary": ws_frame(0x2, b""),
        "frame-cut": ws_frame(0x2, one)[:9],
    }
    # Control bytes: every combination of Origin and one write, cuts spread.
    return {name: bytes([(i * 53) % 256]) + data for i, (name, data) in enumerate(sorted(s.items()))}


def write(target, seeds):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


write("fuzz_http", http_seeds())
write("fuzz_ws", ws_seeds())
write("fuzz_http_tcp", http_tcp_seeds())
