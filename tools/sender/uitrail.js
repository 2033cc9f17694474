// uitrail sender: runs inside a web page, turns what the user does into the
// semantic records of the protocol (click, change, nav, dialog, alert,
// invalid, mutation, unload, app, close) and streams them to uitraild as Forward
// Message-mode msgpack entries over a WebSocket or, as a fallback, HTTP POST.
//
// This is the package's entry module; the work is done by the modules of
// lib/, one job each:
//   lib/transport.js    queue, seq, batches, acks, reconnects, last send
//   lib/observation.js  mutations (page, open shadow roots, same-origin
//                       frames), element counts, loading indicators
//   lib/interaction.js  clicks and changes
//   lib/naming.js       roles, accessible names, row and landmark context,
//                       click state, dialog snapshots, sensitivity
//   lib/ephemera.js     dialogs, menus, tooltips; alerts and live regions
//   lib/validation.js   form validation messages an action made appear
//   lib/navigation.js   navigations, titles, unload and back/forward cache
//   lib/loading.js      the document loaded with nothing pending
//   lib/frames.js       one tracker per tab: frames hand off to the top one
//   lib/app-events.js   host events (tracker.emit)
//   lib/dom.js          text, the composed tree, the ignore rule
//   lib/limits.js, lib/encoding.js, lib/storage.js, lib/tracker.js
//
// Usage, without a build step (the page maps "@msgpack/msgpack" to the
// package's ESM build with an import map, see README.md):
//
//   import uitrail from '/sender/uitrail.js';
//   const tracker = uitrail.start({ url: 'http://127.0.0.1:7317' });
//   tracker.emit('order.refund_failed', { text: 'Refund exceeds captured amount', level: 'error' });
//   tracker.stop();
//
// Privacy rules that every code path keeps: an input's value is never read
// as a name; typed text is never sent (only its length), except for choice
// controls and fields the page opted in with data-track-value; a sensitive
// element (password field, [data-sensitive] subtree, card number, one-time
// code) yields a record with `sens: true` and neither name nor context;
// subtrees under [data-no-track] and [data-uitrail-ignore] are not reported.

import { LIMITS } from './lib/limits.js';
import { start } from './lib/tracker.js';

export { LIMITS, start };
export { EventTime, decodeEntries, extensionCodec } from './lib/encoding.js';
export { accessibleName, contextOf, roleOf, snapshotText } from './lib/naming.js';
export default { start, LIMITS };
