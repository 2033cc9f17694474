// `uitrail send` against a real uitraild: records the daemon rejects are
// not "applied". send names each with its reason and exits 1, the events
// that were valid are applied, and the daemon's log says why it rejected.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { UITRAIL, run, sleep, startDaemon, stopAllDaemons, tempDir } from './lib/daemon.mjs';

after(stopAllDaemons);

describe('uitrail send', () => {
  let daemon;
  let dir;
  before(async () => {
    daemon = await startDaemon();
    dir = tempDir('uitrail-send-');
  });

  it('says which records were rejected and why, and exits 1', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([
      ['uitrail.nav', 1718000000, { tab: 'send-t', seq: 1, url: '/a', title: 'A', how: 'load' }],
      ['uitrail.click', 1718000001, { seq: 2, role: 'button', name: 'Go', el: 'go' }],
      ['uitrail.click', 1718000002, { tab: 'send-t', seq: 3, role: 5, name: 'Go', el: 'go' }],
    ]));
    const r = await run(UITRAIL, ['send', '--runtime-dir', daemon.runtimeDir, file]);
    assert.equal(r.status, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /applied them/);
    assert.match(r.stderr, /record rejected \(missing_field\): uitrail\.click: field "tab" is missing/);
    assert.match(r.stderr, /record rejected \(wrong_type\): uitrail\.click: field "role" must be a string/);
    assert.match(r.stderr, /uitraild rejected 2 invalid records \(the warnings above say why\) and applied the rest/);
    // The valid one is applied.
    const trace = await daemon.get('/v1/tabs/send-t/trace');
    assert.equal(trace.status, 200);
    assert.match(trace.body, /navigate \/a "A"/);
    // The daemon's log says why, at its default level.
    for (let i = 0; i < 50 && !/rejected a record: .*field "role"/.test(daemon.log); i++) await sleep(20);
    assert.match(daemon.log, /rejected a record: uitrail\.click: field "tab" is missing/);
    assert.match(daemon.log, /rejected a record: uitrail\.click: field "role" must be a string/);
  });

  it('exits 0 and says "applied" when every record is valid', async () => {
    const file = join(dir, 'good.json');
    writeFileSync(file, JSON.stringify([
      ['uitrail.nav', 1718000000, { tab: 'send-u', seq: 1, url: '/b', title: 'B', how: 'load' }],
    ]));
    const r = await run(UITRAIL, ['send', '--runtime-dir', daemon.runtimeDir, file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /uitraild applied them/);
  });
});
