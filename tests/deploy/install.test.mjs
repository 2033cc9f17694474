// `meson install` into a DESTDIR, and the installed uitraild run from
// there with --demo: it finds the demo and the sender where the install
// put them (share/uitrail), the example configuration starts it, and the
// man pages, the systemd unit and the LICENSE are in their usual places.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { REPO, UITRAILD, haveDaemon, httpGet, startDaemon } from '../interop/lib/uitraild.mjs';

// The build directory the daemon under test comes from (build/src/daemon/uitraild).
const BUILD = dirname(dirname(dirname(UITRAILD)));
const PREFIX = '/usr/local'; // meson's default, which tools/test builds with

describe('meson install', { skip: !haveDaemon() && 'uitraild is not built' }, () => {
  let destdir, root;

  before(() => {
    destdir = mkdtempSync(join(tmpdir(), 'uitrail-install-'));
    execFileSync('meson', ['install', '-C', BUILD, '--destdir', destdir, '--no-rebuild', '--quiet'], { stdio: 'pipe' });
    root = join(destdir, PREFIX);
  });

  after(() => {
    if (destdir) rmSync(destdir, { recursive: true, force: true });
  });

  test('puts every file in its usual place', () => {
    for (const file of [
      'bin/uitraild', 'bin/uitrail',
      'share/man/man8/uitraild.8', 'share/man/man1/uitrail.1',
      'share/uitrail/demo/index.html', 'share/uitrail/sender/uitrail.js',
      'share/uitrail/sender/lib/tracker.js', 'share/uitrail/sender/uitrail.d.ts',
      'share/uitrail/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs',
      'share/uitrail/sender/node_modules/@msgpack/msgpack/LICENSE',
      'etc/uitrail/uitraild.conf', 'lib/systemd/system/uitraild.service',
      'share/doc/uitrail/LICENSE', 'share/doc/uitrail/examples/haproxy.cfg',
      'share/doc/uitrail/examples/haproxy-fleet.cfg',
    ]) {
      assert.ok(existsSync(join(root, file)), `${file} is not installed`);
    }
    const man8 = readFileSync(join(root, 'share/man/man8/uitraild.8'), 'utf8');
    assert.match(man8, /^\.TH UITRAILD "8"/m);
    assert.match(man8, /\\-\\-reorder\\-ms/);
    assert.match(readFileSync(join(root, 'share/man/man1/uitrail.1'), 'utf8'), /^\.TH UITRAIL "1"/m);
    assert.equal(readFileSync(join(root, 'share/doc/uitrail/LICENSE'), 'utf8'), readFileSync(join(REPO, 'LICENSE'), 'utf8'));
    assert.match(readFileSync(join(REPO, 'LICENSE'), 'utf8'), /^MIT License/);

    const unit = readFileSync(join(root, 'lib/systemd/system/uitraild.service'), 'utf8');
    assert.match(unit, new RegExp(`^ExecStart=${PREFIX}/bin/uitraild --config ${PREFIX}/etc/uitrail/uitraild.conf --runtime-dir /run/uitrail$`, 'm'));
    for (const line of ['DynamicUser=yes', 'RuntimeDirectory=uitrail', 'RuntimeDirectoryMode=0700', 'ProtectSystem=strict',
      'ProtectHome=yes', 'NoNewPrivileges=yes', 'PrivateTmp=yes', 'CapabilityBoundingSet=',
      'IPAddressDeny=any', 'IPAddressAllow=localhost']) {
      assert.match(unit, new RegExp(`^${line}$`, 'm'), `the unit lacks ${line}`);
    }
    // MemoryMax is tied to --max-memory: the tabs' budget of the installed
    // configuration plus 512 MiB for everything else.
    const memoryMax = unit.match(/^MemoryMax=(\d+)M$/m);
    assert.ok(memoryMax, 'the unit sets MemoryMax in MiB');
    const conf = readFileSync(join(root, 'etc/uitrail/uitraild.conf'), 'utf8');
    const maxMemory = conf.match(/^(?:# )?max-memory = (\d+)$/m);
    assert.ok(maxMemory, 'the installed configuration names max-memory');
    assert.ok(Number(memoryMax[1]) * 1048576 >= Number(maxMemory[1]) + 512 * 1048576,
      `MemoryMax=${memoryMax[1]}M leaves less than 512 MiB above max-memory = ${maxMemory[1]}`);
  });

  test('the installed uitraild --demo serves the installed demo and sender', async () => {
    const d = await startDaemon(['--demo'], { bin: join(root, 'bin/uitraild') });
    try {
      const page = await httpGet(d.http, '/demo/', { host: `127.0.0.1:${d.http}` });
      assert.equal(page.status, 200, page.body);
      assert.equal(page.body, readFileSync(join(REPO, 'fixtures/demo/index.html'), 'utf8'));
      const sender = await httpGet(d.http, '/sender/uitrail.js', { host: `127.0.0.1:${d.http}` });
      assert.equal(sender.status, 200);
      assert.equal(sender.body, readFileSync(join(REPO, 'tools/sender/uitrail.js'), 'utf8'));
      const module = await httpGet(d.http, '/sender/lib/tracker.js', { host: `127.0.0.1:${d.http}` });
      assert.equal(module.status, 200, "the sender's modules are installed and served");
      assert.equal(module.body, readFileSync(join(REPO, 'tools/sender/lib/tracker.js'), 'utf8'));
      const msgpack = await httpGet(d.http, '/sender/node_modules/@msgpack/msgpack/dist.esm/index.mjs', { host: `127.0.0.1:${d.http}` });
      assert.equal(msgpack.status, 200);
      assert.match(d.log(), new RegExp(`${root.replace(/[.]/g, '\\.')}/share/uitrail`), 'the demo files come from the install');
    } finally {
      await d.stop();
    }
  });

  test('the installed example configuration starts the installed daemon', async () => {
    const d = await startDaemon(['--config', join(root, 'etc/uitrail/uitraild.conf'), '--http', '127.0.0.1:0'],
      { bin: join(root, 'bin/uitraild') });
    try {
      assert.equal((await d.get('/healthz')).body.trim(), 'ok');
      const help = execFileSync(join(root, 'bin/uitraild'), ['--help'], { encoding: 'utf8' });
      assert.match(help, /--reorder-ms MS/);
    } finally {
      await d.stop();
    }
  });
});
