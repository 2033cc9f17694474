#!/usr/bin/env node
// Prints the user events of a JSON fixture (every kind but mutation) as
// pretty JSON: what an assistant would be given without uitrail. With
// --last N, only the last N of them.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
let last = 0;
const i = args.indexOf('--last');
if (i >= 0) {
  last = Number(args[i + 1]);
  args.splice(i, 2);
}
if (args.length !== 1) {
  console.error('usage: events-json.mjs FIXTURE.json [--last N]');
  process.exit(2);
}
let events = JSON.parse(readFileSync(args[0], 'utf8'))
  .filter(([tag]) => tag !== 'uitrail.mutation')
  .map(([tag, time, record]) => ({ kind: tag.slice('uitrail.'.length), time, ...record }));
if (last > 0) events = events.slice(-last);
console.log(JSON.stringify(events, null, 2));
