// tools/run, the README's first command, as a newcomer runs it: it starts
// the daemon with the demo and says so once it answers; the demo page
// answers; the Blue Widget commands it prints give the trace the README
// shows; a second tools/run finds the daemon answering and starts nothing;
// Ctrl-C (SIGINT to its process group, as a terminal sends it) and SIGTERM
// stop it cleanly. On a private runtime directory and a free port (its
// extra arguments go to uitraild), with the build of the test
// (UITRAIL_BUILD_DIR): the Debian packages are installed and the build is
// configured, so those steps install and configure nothing. The sender's
// npm package may be missing (a clean clone): tools/run installs it then.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';

import { BLUEWIDGET_LAST_ACTION, BLUEWIDGET_TAB, REPO, UITRAILD, freePort, httpGet, run, tempDir } from './lib/daemon.mjs';

// The build directory of the programs under test; under `--setup valgrind`
// they are shims outside any build, and tools/run would build `build`.
const BUILD = dirname(dirname(dirname(UITRAILD)));
const notABuild = existsSync(join(BUILD, 'build.ninja')) ? false
  : `${UITRAILD} is not in a build directory (valgrind shims): tools/run builds its own`;
const README_TRACE = readFileSync(join(REPO, 'fixtures', 'sessions', 'bluewidget.trace.txt'), 'utf8');

/** Starts tools/run with `args` in its own process group. */
function startRun(args) {
  const child = spawn(join(REPO, 'tools', 'run'), args, {
    cwd: REPO, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, UITRAIL_BUILD_DIR: BUILD },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => { out.stdout += chunk; });
  child.stderr.on('data', (chunk) => { out.stderr += chunk; });
  const exited = once(child, 'exit');
  return { child, out, exited };
}

/** Resolves once tools/run printed its last line (the daemon answers), or
 *  rejects when it exits first. */
async function started(r) {
  for (;;) {
    if (/curl --unix-socket .*\n\n$/.test(r.out.stdout)) return;
    if (r.child.exitCode !== null || r.child.signalCode !== null) {
      throw new Error(`tools/run exited (${r.child.exitCode}) before the daemon answered:\n${r.out.stderr}`);
    }
    await Promise.race([once(r.child.stdout, 'data'), r.exited]);
  }
}

/** The commands tools/run prints for a first look without a browser. */
function printedCommands(stdout) {
  const block = stdout.split('Without a browser, in another terminal:\n')[1];
  assert.ok(block, `no commands in:\n${stdout}`);
  return block.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.trim());
}

const sh = (command) => run('bash', ['-c', command], { cwd: REPO });

describe('tools/run', { skip: notABuild }, () => {
  const base = tempDir('tools-run');
  const runtimeDir = join(base, 'rt');
  let first;
  // A failed first case must not leave its daemon answering for the next.
  afterEach(async () => {
    if (first?.child.exitCode === null && first.child.signalCode === null) {
      process.kill(-first.child.pid, 'SIGKILL');
      await first.exited;
    }
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('starts the demo, prints commands that give the README\'s trace, and stops on Ctrl-C', async () => {
    const port = await freePort();
    first = startRun(['--runtime-dir', runtimeDir, '--http', `127.0.0.1:${port}`]);
    await started(first);
    assert.match(first.out.stderr, /tools\/run: starting uitraild --demo/);
    assert.doesNotMatch(first.out.stderr, /tools\/deps: installing|configuring|reconfiguring/,
      'the packages are present and the build configured: nothing installed or configured');
    assert.ok(first.out.stdout.includes(`open http://127.0.0.1:${port}/demo/ in a browser`), first.out.stdout);
    assert.ok(first.out.stdout.includes(`ssh -L ${port}:127.0.0.1:${port}`), first.out.stdout);

    const demo = await httpGet({ port }, '/demo/');
    assert.equal(demo.status, 200);
    assert.match(demo.body, /<html/i);

    const [send, trace, curl] = printedCommands(first.out.stdout);
    assert.match(send, / send --runtime-dir .* fixtures\/sessions\/bluewidget\.json$/);
    const sent = await sh(send);
    assert.equal(sent.status, 0, sent.stderr);
    // As a reader would, after reading the output: the page has settled.
    const socketPath = join(runtimeDir, 'http.sock');
    const settled = await httpGet({ socketPath }, `/v1/tabs/${BLUEWIDGET_TAB}/stable?wait_ms=10000&after=${BLUEWIDGET_LAST_ACTION}`);
    assert.equal(JSON.parse(settled.body).after, 'settled', settled.body);
    const traced = await sh(trace);
    assert.equal(traced.status, 0, traced.stderr);
    assert.equal(traced.stdout, README_TRACE);
    const curled = await sh(curl);
    assert.equal(curled.status, 0, curled.stderr);
    assert.equal(curled.stdout, (await httpGet({ socketPath }, `/v1/tabs/${BLUEWIDGET_TAB}/trace`)).body);
    assert.ok(curled.stdout.includes('Blue Widget'), curled.stdout);

    // A second tools/run: the daemon answers, nothing starts.
    const second = startRun(['--runtime-dir', runtimeDir, '--http', `127.0.0.1:${port}`]);
    const [code] = await second.exited;
    assert.equal(code, 1, second.out.stderr);
    assert.match(second.out.stderr, /a uitraild already answers on .*http\.sock: stop it first \(or use it\); nothing started/);
    assert.doesNotMatch(second.out.stderr, /starting uitraild/);
    assert.equal((await httpGet({ socketPath }, '/healthz')).status, 200, 'the first daemon still runs');

    process.kill(-first.child.pid, 'SIGINT'); // Ctrl-C: the whole foreground group
    const [status, signal] = await first.exited;
    assert.deepEqual({ status, signal }, { status: 0, signal: null }, first.out.stderr);
    assert.match(first.out.stderr, /shutting down \(SIGINT\)/);
    await assert.rejects(httpGet({ socketPath }, '/healthz'), 'the daemon is gone');
  });

  it('stops the daemon on SIGTERM to itself alone', async () => {
    const r = startRun(['--runtime-dir', runtimeDir, '--http', '127.0.0.1:0']);
    try {
      await started(r);
      process.kill(r.child.pid, 'SIGTERM');
      const [status, signal] = await r.exited;
      assert.deepEqual({ status, signal }, { status: 0, signal: null }, r.out.stderr);
      assert.match(r.out.stderr, /shutting down \(SIGTERM\)/);
      await assert.rejects(httpGet({ socketPath: join(runtimeDir, 'http.sock') }, '/healthz'), 'the daemon is gone');
    } finally {
      if (r.child.exitCode === null) process.kill(-r.child.pid, 'SIGKILL');
    }
  });
});
