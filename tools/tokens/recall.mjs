#!/usr/bin/env node
// Fact recall of uitrail traces under a token budget, before and after.
// For each session (fixtures/sessions/NAME.json with NAME.facts.json: the
// facts a question needs, each a regular expression), it replays the
// session with each uitrail binary given, at each budget, and counts the
// o200k_base tokens (gpt-tokenizer) of the trace and the facts it still
// holds. Usage:
//   node tools/tokens/recall.mjs --before OLD_UITRAIL --after NEW_UITRAIL
//        [--budgets 150,200,300,400] [--framed] SESSION...
// --framed measures the trace as a prompt carries it (framed=1).
// tools/tokens/recall builds both binaries and runs this.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

function parseArgs(argv) {
  const a = { budgets: [150, 200, 300, 400], sessions: [], framed: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--before') a.before = argv[++i];
    else if (argv[i] === '--after') a.after = argv[++i];
    else if (argv[i] === '--budgets') a.budgets = argv[++i].split(',').map(Number);
    else if (argv[i] === '--framed') a.framed = true;
    else a.sessions.push(argv[i]);
  }
  if (!a.before || !a.after || a.sessions.length === 0) {
    console.error('usage: recall.mjs --before UITRAIL --after UITRAIL [--budgets 150,200] SESSION.json...');
    process.exit(2);
  }
  return a;
}

function trace(uitrail, session, budget) {
  const args = ['replay', session];
  if (framed) args.push('--framed');
  if (budget) args.push('--max-tokens', String(budget));
  return execFileSync(uitrail, args, { encoding: 'utf8' });
}

const entryLines = (text) => text.split('\n').filter((l) => l.startsWith('- ')).length;

// Ring entries behind a trace: its JSON form has one event per entry.
function entries(uitrail, session) {
  const all = JSON.parse(execFileSync(uitrail, ['replay', session, '--format', 'json'], { encoding: 'utf8' }));
  return Object.values(all).reduce((n, t) => n + t.events.length, 0);
}

function measure(uitrail, session, facts, budget) {
  const text = trace(uitrail, session, budget);
  const found = facts.filter((f) => new RegExp(f.match).test(text)).length;
  return { tokens: countTokens(text), lines: entryLines(text), found };
}

const args = parseArgs(process.argv.slice(2));
const framed = args.framed;
const pct = (n, d) => `${Math.round((100 * n) / d)} %`;
const rows = [];
const totals = { before: {}, after: {}, facts: 0 };
for (const session of args.sessions) {
  const spec = JSON.parse(readFileSync(session.replace(/\.json$/, '.facts.json'), 'utf8'));
  const name = session.replace(/^.*\//, '').replace(/\.json$/, '');
  const nf = spec.facts.length;
  totals.facts += nf;
  const whole = {};
  for (const side of ['before', 'after']) whole[side] = measure(args[side], session, spec.facts, 0);
  const n = entries(args.after, session);
  const per = (m) => `${m.tokens} (${m.lines} lines; ${(m.tokens / m.lines).toFixed(1)}/line, ${(m.tokens / n).toFixed(1)}/entry)`;
  rows.push(`| ${name} (${n} entries, ${nf} facts) | none | ${whole.before.found}/${nf} | ${whole.after.found}/${nf} | ` +
    `${per(whole.before)} | ${per(whole.after)} |`);
  for (const budget of args.budgets) {
    const m = {};
    for (const side of ['before', 'after']) {
      m[side] = measure(args[side], session, spec.facts, budget);
      totals[side][budget] = (totals[side][budget] || 0) + m[side].found;
    }
    rows.push(`| | ${budget} | ${m.before.found}/${nf} | ${m.after.found}/${nf} | ` +
      `${m.before.tokens} (${m.before.lines} lines) | ${m.after.tokens} (${m.after.lines} lines) |`);
  }
}
console.log('| session | max_tokens | facts before | facts after | o200k tokens before | o200k tokens after |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(r);
console.log('');
console.log('| max_tokens | recall before | recall after |');
console.log('|---:|---:|---:|');
for (const budget of args.budgets) {
  console.log(`| ${budget} | ${pct(totals.before[budget], totals.facts)} | ${pct(totals.after[budget], totals.facts)} |`);
}
