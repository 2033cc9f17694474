// `uitrail --version` / `-V`, `uitrail paths`, and the README's shell
// examples run as written against a real uitraild: the Quick start's reads,
// the HTTP API block and the prompt examples. The daemon runs where a
// desktop user's would ($XDG_RUNTIME_DIR/uitrail, with XDG_RUNTIME_DIR a
// private directory); for root (XDG_RUNTIME_DIR unset) the test checks that
// `uitrail paths` names /tmp/uitrail-UID, where uitraild puts its sockets
// then, without starting a daemon in that shared place.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BLUEWIDGET, BLUEWIDGET_TAB, REPO, UITRAIL, UITRAILD, daemonJson, run, startDaemon, stopAllDaemons, tempDir } from './lib/daemon.mjs';

after(stopAllDaemons);

const README = readFileSync(join(REPO, 'README.md'), 'utf8');

function envWith(changes) {
  const env = { ...process.env, ...changes };
  for (const [k, v] of Object.entries(changes)) if (v === undefined) delete env[k];
  return env;
}

/** The README's fenced blocks of language `lang` ('' for none), in order. */
function readmeBlocks(lang) {
  const blocks = [];
  let open = null;
  for (const line of README.split('\n')) {
    if (open === null && line.startsWith('```')) {
      open = { lang: line.slice(3).trim(), body: '' };
    } else if (open !== null && line === '```') {
      if (open.lang === lang) blocks.push(open.body);
      open = null;
    } else if (open !== null) {
      open.body += `${line}\n`;
    }
  }
  return blocks;
}

function readmeBlockWith(text, lang = 'sh') {
  const found = readmeBlocks(lang).filter((b) => b.includes(text));
  assert.equal(found.length, 1, `one README ${lang || 'plain'} block holds ${text}`);
  return found[0];
}

/** The commands of a shell block: continuation lines joined, comment lines dropped. */
function commands(block) {
  return block.replace(/\\\n\s*/g, ' ').split('\n').filter((line) => line.trim() && !line.startsWith('#'));
}

describe('uitrail --version and uitrail paths', () => {
  it('-V and --version print the version, as uitraild does', async () => {
    const long = await run(UITRAIL, ['--version']);
    const short = await run(UITRAIL, ['-V']);
    assert.equal(long.status, 0);
    assert.equal(short.status, 0);
    assert.match(long.stdout, /^uitrail \d+\.\d+\.\d+\n$/);
    assert.equal(short.stdout, long.stdout);
    const daemon = await run(UITRAILD, ['--version']);
    assert.equal(daemon.stdout.replace('uitraild', 'uitrail'), long.stdout);
    assert.match((await run(UITRAIL, ['--help'])).stdout, /--version \(or -V\)/);
  });

  it('names the runtime directory as the daemon finds it', async () => {
    const uid = process.getuid();
    const cases = [
      [{ XDG_RUNTIME_DIR: '/run/user/4242' }, [], '/run/user/4242/uitrail'],
      [{ XDG_RUNTIME_DIR: undefined }, [], `/tmp/uitrail-${uid}`],
      [{ XDG_RUNTIME_DIR: 'relative/dir' }, [], `/tmp/uitrail-${uid}`],
      [{ XDG_RUNTIME_DIR: '/run/user/4242' }, ['--runtime-dir', '/srv/ut'], '/srv/ut'],
    ];
    for (const [env, extra, dir] of cases) {
      const e = envWith(env);
      for (const [name, file] of [['runtime-dir', ''], ['http-socket', '/http.sock'],
        ['ingest-socket', '/ingest.sock'], ['token', '/token']]) {
        const r = await run(UITRAIL, ['paths', name, ...extra], { env: e });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout, `${dir}${file}\n`, `${JSON.stringify(env)} ${name}`);
      }
      const all = await run(UITRAIL, ['paths', ...extra], { env: e });
      assert.equal(all.status, 0);
      assert.match(all.stdout, new RegExp(`^runtime-dir +${dir}\\b`));
      assert.match(all.stdout, new RegExp(`^http-socket +${dir}/http.sock {2}\\(not there now\\)$`, 'm'));
      assert.match(all.stderr, new RegExp(`no uitraild runs in ${dir} now \\(start it with \\\`uitraild\\\``));
    }
    const bad = await run(UITRAIL, ['paths', 'socket']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /no path named 'socket': use runtime-dir, http-socket, ingest-socket or token/);
  });
});

describe('the README\'s examples, as written', () => {
  let base;
  let xdg;
  let daemon;
  let env;

  before(async () => {
    base = tempDir('readme');
    xdg = join(base, 'xdg');
    mkdirSync(xdg, { mode: 0o700 });
    daemon = await startDaemon({ runtimeDir: join(xdg, 'uitrail') });
    env = envWith({ XDG_RUNTIME_DIR: xdg });
  });
  after(async () => {
    await daemon?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('no shell example spells out the runtime directory', () => {
    // $XDG_RUNTIME_DIR is unset for root: an example built on it connects
    // to nothing ("Failed to connect to localhost port 80").
    for (const block of readmeBlocks('sh')) assert.ok(!block.includes('XDG_RUNTIME_DIR'), block);
  });

  /** Runs the block's commands in one shell, in the repository, output by command. */
  async function runBlock(block) {
    const lines = commands(block)
      .filter((line) => !line.includes('curl -N')) // an event stream never ends
      .map((line) => line.replaceAll('build/tools/uitrail/uitrail', UITRAIL)
        .replaceAll('127.0.0.1:7317', `127.0.0.1:${daemon.port}`));
    const script = lines.map((line, i) => `${line}\necho "@@ ${i} $?"`).join('\n');
    const r = await run('bash', ['-c', script], { env, cwd: REPO });
    assert.equal(r.status, 0, r.stderr);
    const outputs = r.stdout.split(/^@@ \d+ \d+$\n?/m);
    const statuses = [...r.stdout.matchAll(/^@@ (\d+) (\d+)$/gm)].map((m) => Number(m[2]));
    return lines.map((line, i) => ({ line, status: statuses[i], stdout: outputs[i] }));
  }

  it('the Quick start reads the Blue Widget trace', async () => {
    const results = await runBlock(readmeBlockWith('uitrail send fixtures/sessions/bluewidget.json'));
    assert.equal(results.length, 3);
    for (const r of results) assert.equal(r.status, 0, r.line);
    assert.match(results[1].stdout, /^RECENT USER ACTIONS \(newest first\):\n/);
    assert.match(results[2].stdout, /^RECENT USER ACTIONS \(newest first\):\n/);
    assert.equal(results[2].stdout, (await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/trace`)).body);
  });

  it('every HTTP API example answers', async () => {
    await daemon.send(BLUEWIDGET); // as the Quick start did (a second time is harmless)
    await daemonJson(daemon, `/v1/tabs/${BLUEWIDGET_TAB}/stable?wait_ms=10000`);
    const block = readmeBlockWith('curl --unix-socket $S http://localhost/v1/tabs');
    const results = await runBlock(block);
    const by = (pattern) => {
      const r = results.find((x) => pattern.test(x.line));
      assert.ok(r, `an example for ${pattern}`);
      assert.equal(r.status, 0, r.line);
      return r.stdout;
    };
    assert.equal(results[0].line.startsWith('S=$('), true);
    const tabs = JSON.parse(by(/\/v1\/tabs$/));
    assert.ok(tabs.some((t) => t.tab === BLUEWIDGET_TAB));
    assert.match(by(/trace\?format=text/), /^--- Recent User Activity ---\n/);
    const stable = JSON.parse(by(/stable\?wait_ms/));
    const shown = JSON.parse(/^#\s+(\{"stable".*\})$/m.exec(block)[1]);
    assert.deepEqual(Object.keys(stable), Object.keys(shown));
    assert.equal(stable.stable, true);
    const ingest = by(/v1\/ingest/).trim();
    assert.equal(ingest, /^#\s+202 (\{"accepted".*?\})/m.exec(block)[1], 'the ingest answer shown');
    assert.match(by(/\/metrics/), /^uitrail_connections \d+$/m);
    assert.equal(by(/healthz/), 'ok\n');
    assert.deepEqual(JSON.parse(by(/Authorization: Bearer/)), JSON.parse((await daemon.getTcp('/v1/tabs')).body));
  });

  it('the MCP host configuration starts a server that answers', async () => {
    const config = JSON.parse(readmeBlockWith('"mcpServers"', 'json'));
    const { command, args } = config.mcpServers.uitrail;
    assert.match(command, /\/build\/tools\/uitrail\/uitrail$/);
    assert.deepEqual(args.slice(0, 2), ['mcp', '--runtime-dir']);
    // The host's own environment: none of the test's (XDG_RUNTIME_DIR included).
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_tabs', arguments: {} } },
    ];
    const r = await run(UITRAIL, [...args.slice(0, 2), daemon.runtimeDir, ...args.slice(3)], {
      env: { PATH: process.env.PATH }, input: messages.map((m) => `${JSON.stringify(m)}\n`).join(''),
    });
    assert.equal(r.status, 0, r.stderr);
    const answers = r.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(answers.length, 2);
    assert.deepEqual(answers[1].result.structuredContent.tabs, JSON.parse((await daemon.get('/v1/tabs')).body));
  });

  it('the prompt examples print what the README shows', async () => {
    await daemonJson(daemon, `/v1/tabs/${BLUEWIDGET_TAB}/stable?wait_ms=10000`);
    const results = await runBlock(readmeBlockWith('tools/examples/prompt.mjs'));
    assert.equal(results.length, 2);
    const shown = readmeBlockWith('=== user ===', '');
    // "…" in the README stands for lines left out.
    const escape = (line) => line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const lines = shown.replace(/\n$/, '').split('\n');
    const pattern = new RegExp(`^${lines.map((line) => (line === '…' ? '(?:.*\\n)*?' : `${escape(line)}\\n`)).join('')}$`);
    for (const r of results) {
      assert.equal(r.status, 0, r.line);
      assert.match(r.stdout, pattern, r.line);
    }
    assert.equal(results[0].stdout, results[1].stdout);
  });
});
