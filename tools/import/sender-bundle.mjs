// The sender (tools/sender, a package of ES modules) bundled by esbuild
// into ONE classic script, built when the importer starts and run in each
// rebuilt page's realm.
//
// Why one classic script and not vm.SourceTextModule: Node never frees a
// context that a SourceTextModule was created in (nodejs/node#59118,
// #63186, open), so every page load of a session kept its whole jsdom
// window alive, ~2.7 MB a load, past 256 MB after ~50 loads. A vm.Script
// compiled once and run in each page's context leaves nothing behind when
// the page closes.
//
// Why esbuild: turning a module graph into one script that means the same
// (evaluation order, live bindings, renaming what collides) is a bundler's
// job, and esbuild is Debian's (package esbuild, tools/deps). It runs once
// per importer process, never at each page, and its output is not checked
// in: the importer always runs the sender as it is in the tree.
//
// The sender's one dependency, @msgpack/msgpack, is the importer's own
// pinned copy (tools/import/package-lock.json): tools/sender's packages
// need not be installed. esbuild resolves an alias's target in its working
// directory, so it runs in this directory.

import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const GLOBAL_NAME = 'uitrailSender';

/**
 * Returns the text of a classic script whose completion value is the
 * namespace of `senderDir`/uitrail.js (the sender's entry module): its
 * exports, as getters, in the order a module namespace lists them. Throws
 * with esbuild's own message when esbuild is missing or cannot bundle.
 */
export function senderScriptSource(senderDir) {
  let bundle;
  try {
    bundle = execFileSync('esbuild', [
      join(senderDir, 'uitrail.js'),
      '--bundle',
      '--format=iife',
      `--global-name=${GLOBAL_NAME}`,
      '--platform=browser',
      '--alias:@msgpack/msgpack=./node_modules/@msgpack/msgpack',
      '--log-level=warning',
    ], { cwd: HERE, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    if (error.code === 'ENOENT') {
      throw new Error('tools/import needs esbuild to load the sender (Debian package esbuild: tools/deps test)');
    }
    throw new Error(`esbuild could not bundle the sender (${senderDir}): ${String(error.stderr || error.message).trim()}`);
  }
  // An IIFE bundle of modules does not say "use strict" (esbuild leaves it
  // to the format), but module code is strict: the function says it, and
  // keeps the bundle's global name out of the page's window.
  return `(function () {\n'use strict';\n${bundle}\nreturn ${GLOBAL_NAME};\n})()`;
}
