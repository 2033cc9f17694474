#!/usr/bin/env node
// Mints a signed per-tab ingest token for uitraild --ingest-secret-file, as
// an app's backend does for the page of a signed-in user: a JWT (HS256)
// whose claims name the tab, the expiry and optionally the page's origin
// (SECURITY.md, "Sockets, tokens and browsers"). Node's standard library only; any JWT
// library mints the same. The page hands it to the sender's `token` option.
//
//   node tools/examples/mint-token.mjs SECRET_FILE TAB [TTL_SECONDS] [ORIGIN]
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export function mintToken(secret, tab, ttlSeconds = 3600, origin = undefined) {
  const b64url = (data) => Buffer.from(data).toString('base64url');
  const claims = { tab, exp: Math.floor(Date.now() / 1000) + ttlSeconds, ...(origin ? { origin } : {}) };
  const signed = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [secretFile, tab, ttl, origin] = process.argv.slice(2);
  if (!secretFile || !tab) {
    process.stderr.write('usage: node mint-token.mjs SECRET_FILE TAB [TTL_SECONDS] [ORIGIN]\n');
    process.exit(2);
  }
  const secret = readFileSync(secretFile, 'utf8').replace(/[\r\n ]+$/, '');
  process.stdout.write(`${mintToken(secret, tab, ttl ? Number(ttl) : 3600, origin)}\n`);
}
