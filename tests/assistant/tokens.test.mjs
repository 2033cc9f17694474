// Signed per-tab ingest (uitraild --ingest-secret-file) with the tokens an
// app's backend mints: the examples of tools/examples (mint-token.mjs,
// mint-token.py, standard libraries only) and `uitrail token`. Each
// token opens a real WebSocket (the `ws` package, as a server-side client
// would) to a real daemon, writes its own tab, and cannot write another.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { encode } from '@msgpack/msgpack';
import WebSocket from 'ws';

import { REPO, UITRAIL, run, startDaemon, stopAllDaemons, tempDir } from './lib/daemon.mjs';

after(stopAllDaemons);

const EXAMPLES = join(REPO, 'tools', 'examples');
const SECRET = 'a3f1c9e27b4d8a6e0f5c1b9d7e3a2c4f6b8d0e1f3a5c7e9b2d4f6a8c0e1b3d5f';

const minters = {
  node: (secretFile, tab) => run(process.execPath, [join(EXAMPLES, 'mint-token.mjs'), secretFile, tab, '600']),
  python: (secretFile, tab) => run('python3', [join(EXAMPLES, 'mint-token.py'), secretFile, tab, '600']),
  'uitrail token': (secretFile, tab) => run(UITRAIL, ['token', '--secret-file', secretFile, '--tab', tab, '--ttl', '600']),
};

/** Opens the ingest WebSocket offering `token`; resolves once open. */
function openIngest(port, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ingest`, ['uitrail.v1', `uitrail.token.${token}`]);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (req, res) => reject(new Error(`refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Sends Forward entries for `tag` with an ack chunk; resolves with the ack. */
function sendWithAck(ws, tag, entries, chunk) {
  return new Promise((resolve, reject) => {
    ws.on('message', function onMessage(data, binary) {
      if (binary) return;
      const ack = JSON.parse(data.toString());
      if (ack.ack === chunk) {
        ws.off('message', onMessage);
        resolve(ack);
      }
    });
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason}`)));
    ws.send(encode([tag, entries, { chunk }]));
  });
}

describe('signed per-tab ingest tokens minted by the examples and `uitrail token`', () => {
  let daemon;
  let secretFile;

  before(async () => {
    const dir = tempDir('tokens');
    secretFile = join(dir, 'ingest-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    daemon = await startDaemon({ extraArgs: ['--ingest-secret-file', secretFile, '--reorder-ms', '0'] });
  });
  after(async () => { await daemon?.stop(); });

  for (const [name, mint] of Object.entries(minters)) {
    it(`${name}: a token writes its tab, and only its tab`, async () => {
      const tab = `tab-${name.replace(/ /g, '-')}`;
      const minted = await mint(secretFile, tab);
      assert.equal(minted.status, 0, minted.stderr);
      const token = minted.stdout.trim();
      assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      const checked = await run(UITRAIL, ['token', '--secret-file', secretFile, '--verify', token]);
      assert.equal(checked.status, 0, checked.stderr);
      // Minted with a 600 s lifetime: what is left depends on how long the
      // minting and checking took (minutes under valgrind), never more.
      const left = checked.stdout.match(new RegExp(`^valid: tab "${tab}", expires in (\\d+) s`));
      assert.ok(left, checked.stdout);
      assert.ok(Number(left[1]) > 0 && Number(left[1]) <= 600, checked.stdout);

      const ws = await openIngest(daemon.port, token);
      const now = Date.now() / 1000;
      const nav = (t) => [now, { tab: t, seq: 1, url: 'https://shop.example.com/orders', title: 'Orders', how: 'load' }];
      await sendWithAck(ws, 'uitrail.nav', [nav(tab), nav(`${tab}-other`)], 'c1');
      ws.close();
      const trace = await daemon.get(`/v1/tabs/${encodeURIComponent(tab)}/trace`);
      assert.equal(trace.status, 200);
      assert.match(trace.body, /navigate \/orders "Orders"/);
      assert.equal((await daemon.get(`/v1/tabs/${encodeURIComponent(`${tab}-other`)}/trace`)).status, 404);
    });
  }

  it('count what the bindings refused', async () => {
    const metrics = (await daemon.get('/metrics')).body;
    assert.match(metrics, /^uitrail_ingest_unbound_total\{reason="other_tab"\} 3$/m);
  });

  it('refuse a token minted with another secret, and no token at all', async () => {
    const otherFile = join(tempDir('tokens-other'), 'secret');
    writeFileSync(otherFile, `${SECRET.replace(/a/g, 'b')}\n`);
    const minted = await minters.node(otherFile, 'tab-x');
    await assert.rejects(openIngest(daemon.port, minted.stdout.trim()), /refused: 401/);
    await assert.rejects(new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${daemon.port}/v1/ingest`, ['uitrail.v1'], {
        headers: { Origin: `http://127.0.0.1:${daemon.port}` },
      });
      ws.once('open', resolve);
      ws.once('unexpected-response', (req, res) => reject(new Error(`refused: ${res.statusCode}`)));
    }), /refused: 401/);
    assert.match(daemon.log, /ingest: signed mode/);
  });
});
