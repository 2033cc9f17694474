#!/usr/bin/env python3
"""Mints a signed per-tab ingest token for uitraild --ingest-secret-file.

As an app's backend does for the page of a signed-in user: a JWT (HS256)
whose claims name the tab, the expiry and optionally the page's origin
(SECURITY.md, "Sockets, tokens and browsers"). Python's standard library only; any JWT
library (PyJWT: jwt.encode(claims, secret, "HS256")) mints the same.

  python3 tools/examples/mint-token.py SECRET_FILE TAB [TTL_SECONDS] [ORIGIN]
"""
import base64, hashlib, hmac, json, sys, time


def mint_token(secret: bytes, tab: str, ttl_seconds: int = 3600, origin: str = None) -> str:
    def b64url(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    claims = {"tab": tab, "exp": int(time.time()) + ttl_seconds, **({"origin": origin} if origin else {})}
    signed = b64url(b'{"alg":"HS256","typ":"JWT"}') + "." + b64url(json.dumps(claims).encode())
    return signed + "." + b64url(hmac.new(secret, signed.encode(), hashlib.sha256).digest())


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python3 mint-token.py SECRET_FILE TAB [TTL_SECONDS] [ORIGIN]")
    with open(sys.argv[1], "rb") as f:
        secret = f.read().rstrip(b"\r\n ")
    ttl = int(sys.argv[3]) if len(sys.argv) > 3 else 3600
    print(mint_token(secret, sys.argv[2], ttl, sys.argv[4] if len(sys.argv) > 4 else None))
