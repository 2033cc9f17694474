#!/usr/bin/env python3
"""Assembles an assistant's prompt from what the user just did in a tab.

The way the README recommends ("How an assistant uses it"): the
system instructions (system-prompt.txt, next to this file), then a user
message holding the framed trace (GET /v1/tabs/TAB/trace?framed=1,
protocol section 4) and after it the user's question. Python's standard
library only; the Node twin, prompt.mjs, prints the same bytes.

  python3 tools/examples/prompt.py TAB QUESTION [--max-tokens N] [--json]
          [--runtime-dir DIR | --http ADDR:PORT [--token-file FILE]]

Over the Unix socket (the default) it finds uitraild where the daemon puts
it: $XDG_RUNTIME_DIR/uitrail, else /tmp/uitrail-UID (`uitrail paths`
prints it). Over TCP it sends the bearer token from the daemon's token
file. It prints the prompt as text, or with --json as chat messages
({"messages": [{"role": "system", ...}, {"role": "user", ...}]}) to hand to
a chat-completion API.
"""

import argparse
import errno
import http.client
import json
import os
import re
import socket
import sys
import urllib.parse

DEFAULT_MAX_TOKENS = 500
TIMEOUT_S = 10
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "system-prompt.txt"), encoding="utf-8") as f:
    SYSTEM_PROMPT = f.read().rstrip("\n")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix stream socket (uitraild's http.sock)."""

    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.unix_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def fail(message):
    sys.stderr.write(f"prompt.py: {message}\n")
    sys.exit(1)


def default_runtime_dir():
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    return os.path.join(xdg, "uitrail") if xdg.startswith("/") else f"/tmp/uitrail-{os.getuid()}"


def error_name(error):
    code = getattr(error, "errno", None)
    return errno.errorcode.get(code, str(error)) if code else str(error) or type(error).__name__


def get(where, path):
    """GETs `path` from uitraild: (status, body), or fail() with what to do."""
    headers = {"Connection": "close"}
    if "socket_path" in where:
        conn = UnixHTTPConnection(where["socket_path"], TIMEOUT_S)
    else:
        try:
            with open(where["token_file"], encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            fail(
                f"cannot read uitraild's token file {where['token_file']} ({error_name(e)}): "
                "is uitraild running? It writes the token when it starts; give --token-file "
                "if it lives elsewhere."
            )
        headers["Authorization"] = f"Bearer {token}"
        conn = http.client.HTTPConnection(where["host"], where["port"], timeout=TIMEOUT_S)
    try:
        conn.request("GET", path, headers=headers)
        res = conn.getresponse()
        return res.status, res.read().decode("utf-8")
    except (OSError, http.client.HTTPException) as e:
        fail(
            f"cannot reach uitraild at {where['text']} ({error_name(e)}): is it running? "
            "Start it with `uitraild` (or tools/run); `uitrail paths` prints where it listens."
        )
    finally:
        conn.close()


def reason(body):
    try:
        return json.loads(body).get("error", body)
    except (ValueError, AttributeError):
        return body


def main():
    parser = argparse.ArgumentParser(prog="prompt.py", description=__doc__.splitlines()[0])
    parser.add_argument("tab")
    parser.add_argument("question")
    parser.add_argument("--max-tokens", default=str(DEFAULT_MAX_TOKENS))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runtime-dir")
    parser.add_argument("--http")
    parser.add_argument("--token-file")
    args = parser.parse_args()
    if not re.fullmatch(r"\d+", args.max_tokens):
        parser.error(f"--max-tokens {args.max_tokens}: a number of tokens (0: no budget)")
    if args.token_file and not args.http:
        parser.error("--token-file goes with --http")

    runtime_dir = args.runtime_dir or default_runtime_dir()
    if args.http:
        m = re.fullmatch(r"(.+):(\d+)", args.http)
        if not m:
            parser.error(f"--http {args.http}: use ADDR:PORT, e.g. 127.0.0.1:7317")
        where = {
            "host": re.sub(r"^\[(.*)\]$", r"\1", m.group(1)),
            "port": int(m.group(2)),
            "text": args.http,
            "token_file": args.token_file or os.path.join(runtime_dir, "token"),
        }
    else:
        socket_path = os.path.join(runtime_dir, "http.sock")
        where = {"socket_path": socket_path, "text": socket_path}

    path = (
        f"/v1/tabs/{urllib.parse.quote(args.tab, safe='')}/trace"
        f"?format=text&framed=1&max_tokens={args.max_tokens}"
    )
    status, body = get(where, path)
    if status == 404:
        fail(f"unknown tab '{args.tab}': uitraild has no events for it (`uitrail tabs` lists the tabs it knows)")
    if status == 401:
        fail(f"uitraild refused the request (401: {reason(body)}): over TCP, the token must be the running daemon's")
    if status != 200:
        fail(f"uitraild answered {status}: {reason(body)}")

    # The trace is page text: it goes in the user's message, inside its
    # <user_activity> frame, never in the system prompt.
    trace = body.rstrip("\n")
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{trace}\n\n{args.question}"},
    ]
    if args.json:
        sys.stdout.write(json.dumps({"messages": messages}, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("\n".join(f"=== {m['role']} ===\n{m['content']}\n" for m in messages))


if __name__ == "__main__":
    main()
