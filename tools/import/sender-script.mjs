// The sender (tools/sender, a package of ES modules) as ONE classic script,
// compiled once per import and run in each rebuilt page's realm.
//
// Why not vm.SourceTextModule: Node never frees a context that a
// SourceTextModule was created in (nodejs/node#59118, #63186, open), so
// every page load of a session kept its whole jsdom window alive, ~2.7 MB
// a load, past 256 MB after ~50 loads. A vm.Script compiled once and run
// in each page's context leaves nothing behind when the page closes.
//
// Why this is the same program the browser runs, without a bundler: the
// sender's modules use a small subset of the module syntax (named imports,
// `export` before a declaration, `export { names } [from]`, `export default`
// of an expression), import no module twice in a cycle, and export only
// bindings that are never reassigned (const, function, class). For such a
// graph, evaluating each module once, dependencies first in import order
// (the module evaluation order), in its own strict function scope, with
// its imports bound to the exporters' final values, is what a module
// loader does: a live binding cannot differ from its value when nothing
// reassigns it and no cycle lets a module run before its dependency. Every
// one of these conditions is checked here, and anything else (another
// import form, import(), import.meta, a cycle, an exported let/var, an
// assignment to an exported name) throws at import start instead of
// silently changing the sender's meaning.
//
// The one dependency, @msgpack/msgpack, is loaded from its own classic
// build (dist.umd), which its authors ship for pages without modules.

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const IMPORT_RE = /^import\s*\{([^}]*)\}\s*from\s*'([^']+)'\s*;?/gm;
const EXPORT_FROM_RE = /^export\s*\{([^}]*)\}\s*from\s*'([^']+)'\s*;?/gm;
const EXPORT_LIST_RE = /^export\s*\{([^}]*)\}\s*;?/gm;
const EXPORT_DECL_RE = /^export\s+(?:(async\s+)?function\s*\*?\s*|class\s+|const\s+)([A-Za-z_$][\w$]*)/gm;
const EXPORT_DEFAULT_RE = /^export\s+default\s+/gm;
const IDENT_RE = /^[A-Za-z_$][\w$]*$/;
const PREFIX = '__uitrailModule';

class UnsupportedModule extends Error {
  constructor(file, what) {
    super(`tools/import cannot load the sender as a classic script: ${file}: ${what}`);
  }
}

/** `a, b as c` -> [[a, a], [b, c]] (local or imported name, exported or bound name). */
function specifiers(file, list) {
  return list.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const parts = s.split(/\s+as\s+/);
    if (parts.length > 2 || !parts.every((p) => IDENT_RE.test(p))) throw new UnsupportedModule(file, `specifier "${s}"`);
    return [parts[0], parts[parts.length - 1]];
  });
}

/** The same text with `match` blanked, its line breaks kept (stack traces keep their lines). */
const blank = (match) => match.replace(/[^\n]/g, ' ');

/** Parses one module: its dependencies in import order, its bindings from
 *  each, its exports, and its body with the module syntax taken out. */
function parseModule(file, source, resolveSpecifier) {
  // A module's requests are evaluated in the order its import and
  // export-from declarations appear.
  const deps = [];
  for (const m of source.matchAll(/^(?:import|export)\s*\{[^}]*\}\s*from\s*'([^']+)'/gm)) {
    const target = resolveSpecifier(m[1], file);
    if (!deps.includes(target)) deps.push(target);
  }
  const addDep = (specifier) => resolveSpecifier(specifier, file);
  const imports = []; // [target, [[imported, local]...]]
  const exports = []; // [exported name, expression]
  let body = source.replace(IMPORT_RE, (m, list, spec) => {
    imports.push([addDep(spec), specifiers(file, list)]);
    return blank(m);
  });
  body = body.replace(EXPORT_FROM_RE, (m, list, spec) => {
    const target = addDep(spec);
    for (const [name, as] of specifiers(file, list)) exports.push([as, { from: target, name }]);
    return blank(m);
  });
  body = body.replace(EXPORT_LIST_RE, (m, list) => {
    for (const [local, as] of specifiers(file, list)) exports.push([as, { local }]);
    return blank(m);
  });
  body = body.replace(EXPORT_DECL_RE, (m, _async, name) => {
    exports.push([name, { local: name }]);
    return m.replace(/^export\s+/, '');
  });
  body = body.replace(EXPORT_DEFAULT_RE, (m) => {
    exports.push(['default', { local: `${PREFIX}Default` }]);
    return `const ${PREFIX}Default = `;
  });
  checkBody(file, body, exports);
  return { file, deps, imports, exports, body };
}

/** What this loader does not translate must not be there. */
function checkBody(file, body, exports) {
  const left = body.match(/^\s*(import|export)\b.*$/m);
  if (left) throw new UnsupportedModule(file, `module syntax "${left[0].trim()}"`);
  if (/\bimport\s*(\(|\.\s*meta\b)/.test(body)) throw new UnsupportedModule(file, 'import() or import.meta');
  if (/^const\s+__uitrailModuleDefault\s*=\s*(async\s+)?(function|class)\b/m.test(body)) {
    throw new UnsupportedModule(file, 'export default of a declaration');
  }
  if (body.includes(PREFIX) && !body.includes(`const ${PREFIX}Default = `)) throw new UnsupportedModule(file, `the name ${PREFIX}`);
  for (const [, binding] of exports) {
    if (!binding.local) continue;
    const name = binding.local.replace(/\$/g, '\\$');
    // An exported binding that the module reassigns would be live in a
    // module and a copy here.
    if (new RegExp(`(^|[^\\w$.])(let|var)\\s+${name}\\b`, 'm').test(body)
      || new RegExp(`(^|[^\\w$.])${name}\\s*([-+*/%&|^]|\\*\\*|<<|>>>?|&&|\\|\\||\\?\\?)?=(?!=|>)`, 'm').test(body.replace(
        new RegExp(`(const|function\\s*\\*?|class)\\s+${name}\\b\\s*=?`, 'g'), ''))
      || new RegExp(`(\\+\\+|--)\\s*${name}\\b|\\b${name}\\s*(\\+\\+|--)`).test(body)) {
      throw new UnsupportedModule(file, `the exported binding ${binding.local} may be reassigned`);
    }
  }
}

/** The modules reachable from `entry`, dependencies first, each once;
 *  throws on a cycle. */
function evaluationOrder(entry, load) {
  const order = [];
  const state = new Map(); // file -> 'visiting' | 'done'
  const visit = (file, from) => {
    const seen = state.get(file);
    if (seen === 'done') return;
    if (seen === 'visiting') throw new UnsupportedModule(from, `an import cycle through ${file}`);
    state.set(file, 'visiting');
    const module = load(file);
    for (const dep of module.deps) if (dep !== MSGPACK) visit(dep, file);
    state.set(file, 'done');
    order.push(module);
  };
  visit(entry, entry);
  return order;
}

const MSGPACK = '@msgpack/msgpack';

/**
 * Returns the text of a classic script that evaluates to a function of one
 * argument, msgpack's namespace object, which evaluates the sender's
 * modules and returns the entry module's namespace.
 */
export function senderScriptSource(senderDir) {
  const parsed = new Map();
  const resolveSpecifier = (specifier, from) => {
    if (specifier === MSGPACK) return MSGPACK;
    if (specifier.startsWith('.')) return resolve(dirname(from), specifier);
    throw new UnsupportedModule(from, `it imports ${specifier}, which the importer does not provide`);
  };
  const load = (file) => {
    let module = parsed.get(file);
    if (!module) {
      module = parseModule(file, readFileSync(file, 'utf8'), resolveSpecifier);
      parsed.set(file, module);
    }
    return module;
  };
  const order = evaluationOrder(join(senderDir, 'uitrail.js'), load);
  const names = new Map(order.map((m, i) => [m.file, `${PREFIX}${i}`]));
  names.set(MSGPACK, `${PREFIX}Msgpack`);
  // msgpack's classic build must have every name the sender imports from it.
  const fromMsgpack = order.flatMap((m) => m.imports.filter(([t]) => t === MSGPACK).flatMap(([, list]) => list.map(([n]) => n)));
  const parts = [`(function (${PREFIX}Msgpack) {\n'use strict';\n`,
    `for (const name of ${JSON.stringify(fromMsgpack)}) if (!(name in ${PREFIX}Msgpack)) throw new Error('@msgpack/msgpack has no ' + name);\n`];
  for (const module of order) {
    const bindings = module.imports.map(([target, list]) => {
      const names_ = list.map(([imported, local]) => (imported === local ? local : `${imported}: ${local}`));
      return `const { ${names_.join(', ')} } = ${names.get(target)};`;
    }).join(' ');
    const missing = module.imports.flatMap(([target, list]) => (target === MSGPACK ? [] : list.map(([imported]) => [target, imported])))
      .filter(([target, imported]) => !parsed.get(target).exports.some(([name]) => name === imported));
    if (missing.length) throw new UnsupportedModule(module.file, `${missing[0][1]} is not exported by ${missing[0][0]}`);
    // A module namespace lists its names in code unit order.
    const namespace = [...module.exports].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, b]) => `${JSON.stringify(name)}: ${b.local || `${names.get(b.from)}.${b.name}`}`);
    parts.push(`// ${relative(senderDir, module.file)}\nconst ${names.get(module.file)} = (function () { ${bindings}\n`,
      module.body,
      `\nreturn Object.freeze({ __proto__: null, ${namespace.join(', ')} });\n})();\n`);
  }
  parts.push(`return ${names.get(order[order.length - 1].file)};\n})`);
  return parts.join('');
}

/** A classic script evaluating to msgpack's namespace, from its UMD build. */
export function msgpackScriptSource(umdFile) {
  return `(() => { const module = { exports: {} }; const exports = module.exports;\n${readFileSync(umdFile, 'utf8')}\n;return module.exports; })()`;
}
