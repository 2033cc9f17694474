// The README's commands, run as a newcomer would run them, against a real
// uitraild on a private runtime directory ($XDG_RUNTIME_DIR/uitrail, with
// XDG_RUNTIME_DIR a private directory): the first trace, the prompt
// examples and the MCP host configuration; and GUIDE.md's HTTP API block
// and its `uitrail tune` table.
// Every shell command of the README is either run here or listed in
// NOT_RUN with the reason and what covers it elsewhere, so a command added
// to the README without a test fails this file.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BLUEWIDGET, BLUEWIDGET_TAB, REPO, UITRAIL, run, startDaemon, stopAllDaemons, tempDir } from './lib/daemon.mjs';

after(stopAllDaemons);

/** The fenced blocks of language `lang` ('' for none) of a top-level file, in order. */
function blocks(file, lang) {
  const found = [];
  let open = null;
  for (const line of readFileSync(join(REPO, file), 'utf8').split('\n')) {
    if (open === null && line.startsWith('```')) {
      open = { lang: line.slice(3).trim(), body: '' };
    } else if (open !== null && line === '```') {
      if (open.lang === lang) found.push(open.body);
      open = null;
    } else if (open !== null) {
      open.body += `${line}\n`;
    }
  }
  return found;
}

function blockWith(file, text, lang = 'sh') {
  const found = blocks(file, lang).filter((b) => b.includes(text));
  assert.equal(found.length, 1, `one ${file} ${lang || 'plain'} block holds ${text}`);
  return found[0];
}

/** The commands of a shell block: continuation lines joined, comment lines dropped. */
function commands(block) {
  return block.replace(/\\\n\s*/g, ' ').split('\n').filter((line) => line.trim() && !line.startsWith('#'));
}

// The README's shell commands that this file cannot run, each with why and
// what runs it instead. A command is matched by its start.
const NOT_RUN = [
  ['apt-get install -y git curl',
    'installs packages as root on a bare machine, before the clone: tools/debootstrap-check (before a release) installs git alone, so that the scripts must bring curl themselves'],
  ['tools/run', 'builds and runs the daemon in the foreground: the commands it prints are the first trace\'s, run below; the daemon it starts is the one every test starts'],
  ['tools/test', 'runs the whole suite, this file included'],
  ['tools/deps test', 'installs what the suite needs (esbuild for the importer among it): tools/test runs it first'],
  ['npm ci --prefix tools/import', 'installs the importer\'s pinned npm packages: tests/import/run does it before tests/import/import.test.mjs'],
  ['build/tools/uitrail/uitrail import --out imported fixtures/rrweb/', 'tests/import/import.test.mjs imports the same file and checks its replayed lines against the live trace'],
  ['build/tools/uitrail/uitrail replay imported/', 'tests/import/import.test.mjs replays the imported recording and checks its lines'],
  ['ssh -L 7317:127.0.0.1:7317', 'needs a second machine: a port forward of the loopback listener, which tests/e2e reach directly'],
];

// The README blocks this file runs, by a command each holds.
const RUN = [
  'uitrail send fixtures/sessions/bluewidget.json',
  'tools/examples/prompt.mjs',
];

describe('every shell command of the README', () => {
  it('is run here or listed with what covers it', () => {
    const run = RUN.map((text) => blockWith('README.md', text));
    for (const block of blocks('README.md', 'sh')) {
      if (run.includes(block)) continue;
      for (const line of commands(block)) {
        assert.ok(NOT_RUN.some(([start]) => line.trim().startsWith(start)),
          `README command not run by any test: ${line}`);
      }
    }
    for (const [start] of NOT_RUN) {
      assert.ok(blocks('README.md', 'sh').some((b) => commands(b).some((line) => line.trim().startsWith(start))),
        `NOT_RUN lists a command the README no longer has: ${start}`);
    }
  });

  it('spells out no runtime directory', () => {
    // $XDG_RUNTIME_DIR is unset for root: an example built on it connects
    // to nothing ("Failed to connect to localhost port 80").
    for (const file of ['README.md', 'GUIDE.md']) {
      for (const block of blocks(file, 'sh')) assert.ok(!block.includes('XDG_RUNTIME_DIR'), block);
    }
  });
});

describe('GUIDE.md\'s figures, as printed', () => {
  it('uitrail tune on the labelled sessions prints the rows shown', async () => {
    const shown = blockWith('GUIDE.md', 'ties premature', '');
    const r = await run(UITRAIL, ['tune', 'fixtures/sessions/labelled'], { cwd: REPO });
    assert.equal(r.status, 0, r.stderr);
    const rows = (text) => text.split('\n').filter((line) => /^(default|domquake|recommend) /.test(line));
    assert.equal(rows(shown).length, 3);
    assert.deepEqual(rows(r.stdout), rows(shown));
  });
});

describe('the README\'s and GUIDE.md\'s examples, as written', () => {
  let base;
  let xdg;
  let daemon;
  let env;

  before(async () => {
    base = tempDir('readme');
    xdg = join(base, 'xdg');
    mkdirSync(xdg, { mode: 0o700 });
    daemon = await startDaemon({ runtimeDir: join(xdg, 'uitrail') });
    env = { ...process.env, XDG_RUNTIME_DIR: xdg };
  });
  after(async () => {
    await daemon?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
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

  it('the first trace prints the trace at the top of the README', async () => {
    const results = await runBlock(blockWith('README.md', 'uitrail send fixtures/sessions/bluewidget.json'));
    assert.equal(results.length, 4);
    for (const r of results) assert.equal(r.status, 0, r.line);
    assert.equal(JSON.parse(results[1].stdout).stable, true, 'uitrail wait');
    const shown = blocks('README.md', '')[0];
    assert.match(shown, /^RECENT USER ACTIONS \(newest first\):\n/);
    assert.equal(results[2].stdout, shown, 'uitrail trace');
    assert.equal(results[3].stdout, shown, 'curl');
  });

  it('every HTTP API example of GUIDE.md answers', async () => {
    await daemon.send(BLUEWIDGET); // as the first trace did (a second time is harmless)
    await daemon.settled(); // after the session's last action, not a stable read that may predate it
    const block = blockWith('GUIDE.md', 'curl --unix-socket $S http://localhost/v1/tabs');
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
    const config = JSON.parse(blockWith('README.md', '"mcpServers"', 'json'));
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
    await daemon.settled(); // after the session's last action, not a stable read that may predate it
    const results = await runBlock(blockWith('README.md', 'tools/examples/prompt.mjs'));
    assert.equal(results.length, 2);
    const shown = blockWith('README.md', '=== user ===', '');
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
