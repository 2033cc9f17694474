// `uitrail --version` / `-V` and `uitrail paths`: where the runtime
// directory is for a desktop user ($XDG_RUNTIME_DIR/uitrail) and for root
// (XDG_RUNTIME_DIR unset: /tmp/uitrail-UID), checked without starting a
// daemon in that shared place. The README's commands are run by
// readme.test.mjs.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { UITRAIL, UITRAILD, run, stopAllDaemons } from './lib/daemon.mjs';

after(stopAllDaemons);

function envWith(changes) {
  const env = { ...process.env, ...changes };
  for (const [k, v] of Object.entries(changes)) if (v === undefined) delete env[k];
  return env;
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
