// The sender's TypeScript types (tools/sender/uitrail.d.ts) compile a
// team's typed usage (types/usage.ts) with tsc --noEmit, and refuse what
// the sender refuses (its @ts-expect-error lines).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { REPO } from './lib/harness.mjs';

const TSC = join(REPO, 'tests', 'e2e', 'node_modules', 'typescript', 'bin', 'tsc');

test('test_sender_types_compile', { skip: existsSync(TSC) ? false : 'typescript is not installed: npm ci --prefix tests/e2e' }, () => {
  let output = '';
  try {
    output = execFileSync(process.execPath, [TSC, '--noEmit', '-p', join(REPO, 'tests', 'e2e', 'types', 'tsconfig.json')],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    assert.fail(`tsc found errors:\n${error.stdout}${error.stderr}`);
  }
  assert.equal(output.trim(), '');
});
