// The client examples of tools/examples (prompt.mjs for Node, prompt.py for
// Python, standard libraries only) against a real uitraild: each fetches
// a tab's framed trace over the Unix socket and over TCP with the token
// and assembles the prompt: the system instructions of system-prompt.txt,
// then a user message of the framed trace the daemon serves followed by
// the question. Both must print the same bytes.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { BLUEWIDGET, BLUEWIDGET_TAB, REPO, run, startDaemon, stopAllDaemons, tempDir } from './lib/daemon.mjs';

after(stopAllDaemons);

const EXAMPLES = join(REPO, 'tools', 'examples');
const SYSTEM_PROMPT = readFileSync(join(EXAMPLES, 'system-prompt.txt'), 'utf8').replace(/\n+$/, '');
const QUESTION = "what's wrong with this item?";
const DEFAULT_MAX_TOKENS = 500;

const scripts = {
  node: (args, env) => run(process.execPath, [join(EXAMPLES, 'prompt.mjs'), ...args], { env }),
  python: (args, env) => run('python3', [join(EXAMPLES, 'prompt.py'), ...args], { env }),
};

/** Both scripts with the same arguments: their one output, once they agree. */
async function both(args, env) {
  const [a, b] = [await scripts.node(args, env), await scripts.python(args, env)];
  assert.equal(a.status, b.status, `exit status: node ${a.stderr} / python ${b.stderr}`);
  assert.equal(a.stdout, b.stdout, 'the Node and Python examples print the same prompt');
  return a;
}

function expectedText(trace, question) {
  return `=== system ===\n${SYSTEM_PROMPT}\n\n=== user ===\n${trace.replace(/\n+$/, '')}\n\n${question}\n`;
}

describe('the prompt examples (tools/examples)', () => {
  let daemon;
  let base;
  let framed;

  before(async () => {
    daemon = await startDaemon();
    base = tempDir('examples');
    await daemon.send(BLUEWIDGET);
    await daemon.settled();
    framed = (await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/trace?format=text&framed=1&max_tokens=${DEFAULT_MAX_TOKENS}`)).body;
    assert.match(framed, /^--- Recent User Activity ---\n/);
  });
  after(async () => {
    await daemon?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('assemble system instructions, the framed trace and the question, over the Unix socket', async () => {
    const r = await both([BLUEWIDGET_TAB, QUESTION, '--runtime-dir', daemon.runtimeDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, expectedText(framed, QUESTION));
    // The page's text is in the user's message, inside its frame, before the question.
    const user = r.stdout.slice(r.stdout.indexOf('=== user ===\n'));
    assert.ok(user.indexOf('click link "Blue Widget"') < user.indexOf('</user_activity>'));
    assert.ok(user.endsWith(`</user_activity>\n\n${QUESTION}\n`));
    assert.ok(!r.stdout.slice(0, r.stdout.indexOf('=== user ===')).includes('Blue Widget'), 'no page text in the system part');
  });

  it('print chat messages with --json', async () => {
    const r = await both([BLUEWIDGET_TAB, QUESTION, '--json', '--runtime-dir', daemon.runtimeDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: `${framed.replace(/\n+$/, '')}\n\n${QUESTION}` },
      ],
    });
  });

  it('pass the token budget to the daemon', async () => {
    const budget = (await daemon.get(`/v1/tabs/${BLUEWIDGET_TAB}/trace?format=text&framed=1&max_tokens=80`)).body;
    assert.ok(budget.split('\n').length < framed.split('\n').length, 'the budget drops lines');
    const r = await both([BLUEWIDGET_TAB, QUESTION, '--max-tokens', '80', '--runtime-dir', daemon.runtimeDir]);
    assert.equal(r.stdout, expectedText(budget, QUESTION));
  });

  it('find the daemon through XDG_RUNTIME_DIR as uitraild does', async () => {
    const xdg = join(base, 'xdg');
    mkdirSync(xdg, { mode: 0o700 });
    const local = await startDaemon({ runtimeDir: join(xdg, 'uitrail') });
    try {
      await local.send(BLUEWIDGET);
      await local.settled();
      const env = { ...process.env, XDG_RUNTIME_DIR: xdg };
      const r = await both([BLUEWIDGET_TAB, QUESTION], env);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, expectedText(framed, QUESTION));
      const tcp = await both([BLUEWIDGET_TAB, QUESTION, '--http', `127.0.0.1:${local.port}`], env);
      assert.equal(tcp.stdout, r.stdout, 'the token from the runtime directory');
    } finally {
      await local.stop();
    }
  });

  it('give the same prompt over TCP with the bearer token', async () => {
    const tcp = ['--http', `127.0.0.1:${daemon.port}`];
    const r = await both([BLUEWIDGET_TAB, QUESTION, ...tcp, '--runtime-dir', daemon.runtimeDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, expectedText(framed, QUESTION));
    const explicit = await both([BLUEWIDGET_TAB, QUESTION, ...tcp, '--token-file', daemon.tokenFile]);
    assert.equal(explicit.stdout, r.stdout);
  });

  it('say what went wrong and what to do', async () => {
    const wrong = join(base, 'wrong-token');
    writeFileSync(wrong, 'not-the-token\n', { mode: 0o600 });
    const tcp = ['--http', `127.0.0.1:${daemon.port}`];
    const cases = [
      [['tab-nobody-opened', QUESTION, '--runtime-dir', daemon.runtimeDir], 1, /unknown tab 'tab-nobody-opened'.*uitrail tabs/],
      [[BLUEWIDGET_TAB, QUESTION, '--runtime-dir', join(base, 'none')], 1,
        /cannot reach uitraild at .*none\/http.sock \(ENOENT\): is it running\? Start it with `uitraild`/],
      [[BLUEWIDGET_TAB, QUESTION, ...tcp, '--token-file', wrong], 1, /refused the request \(401: .*the token must be the running daemon's/],
      [[BLUEWIDGET_TAB, QUESTION, ...tcp, '--token-file', join(base, 'missing')], 1, /cannot read uitraild's token file .*missing \(ENOENT\)/],
      [[BLUEWIDGET_TAB, QUESTION, '--http', '127.0.0.1:1', '--token-file', daemon.tokenFile], 1, /cannot reach uitraild at 127.0.0.1:1 \(ECONNREFUSED\)/],
      [[BLUEWIDGET_TAB], 2, /.+/],
      [[BLUEWIDGET_TAB, QUESTION, '--max-tokens', 'lots'], 2, /--max-tokens lots/],
      [[BLUEWIDGET_TAB, QUESTION, '--token-file', wrong], 2, /--token-file goes with --http/],
    ];
    for (const [args, status, pattern] of cases) {
      for (const [name, script] of Object.entries(scripts)) {
        const r = await script(args);
        assert.equal(r.status, status, `${name} ${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, pattern, `${name} ${args.join(' ')}`);
        assert.equal(r.stdout, '', 'no prompt on a failure');
      }
    }
  });
});
