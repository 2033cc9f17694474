#!/usr/bin/env node
// Counts the o200k_base tokens (gpt-tokenizer) of each file named on the
// command line, or of standard input with "-", and prints "TOKENS  FILE".
// Usage: node tools/tokens/count.mjs FILE... (tools/tokens/run installs the
// package first).
import { readFileSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

const files = process.argv.slice(2);
if (files.length === 0 || files.includes('--help')) {
  console.error('usage: count.mjs FILE... ("-" reads standard input)\n' +
                'Prints the o200k_base token count of each file.');
  process.exit(files.length === 0 ? 2 : 0);
}
for (const f of files) {
  const text = readFileSync(f === '-' ? 0 : f, 'utf8');
  console.log(`${String(countTokens(text)).padStart(6)}  ${f}`);
}
