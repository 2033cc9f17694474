// Gestures: the earliest view of what the user does, and whose action a
// click or change is.
//
// The sender must see a user's input before the page does: a library that
// opens a dialog in its own click handler (a CSS framework's delegated
// capture handler on `document`) would otherwise change the page before
// the sender knew there was a click, and the change would read as older
// than its cause. So the input listeners go on `window`, in the capture
// phase (which runs before any listener on `document` or below), and they
// are added when this module loads, before start() and before most of
// the page's own scripts. They forward to the trackers that subscribed.
//
// Whose action: a click or change the browser dispatched for the user
// (`isTrusted`) is the user's; one a script dispatched is the user's too
// when it runs in answer to the user's input (a custom select setting its
// hidden native select and dispatching `change` from its click handler):
// during the task of a trusted input event (its handlers and the
// microtasks after them), while the page holds the user's activation
// (navigator.userActivation). A time window would be wrong both ways: an
// assistant's executor acting a few milliseconds after the user's click
// would pass for the user. Anything else a script dispatched is the
// page's own ("script"), unless the
// assistant's executor declared it (`tracker.actor('assistant', fn)`, or
// the element or an ancestor carrying data-uitrail-actor="assistant").

export const INPUT_TYPES = ['pointerdown', 'pointerup', 'pointercancel', 'click', 'keydown', 'change', 'input'];
export const ACTOR_ATTRIBUTE = 'data-uitrail-actor';
export const ACTORS = Object.freeze(['user', 'script', 'assistant']);

const sinks = new Set();
let inUserTask = false;          // a trusted input's task is still running
let assistantDepth = 0;          // open tracker.actor('assistant', fn) scopes

const endUserTask = new MessageChannel();
endUserTask.port1.onmessage = () => { inUserTask = false; };

function noteUserInput(event) {
  if (!event.isTrusted || event.type === 'pointercancel') return;
  if (!inUserTask) {
    inUserTask = true;
    endUserTask.port2.postMessage(null);
  }
}

function forward(event) {
  noteUserInput(event);
  for (const sink of sinks) sink(event);
}

/** Listens to the input events of a window in the capture phase; returns
 *  a function that stops. The top window's listeners were added when this
 *  module loaded; a same-origin frame's window gets its own. */
export function listenInputs(view, sink) {
  if (view === window) {
    sinks.add(sink);
    return () => sinks.delete(sink);
  }
  const handler = (event) => { noteUserInput(event); sink(event); };
  for (const type of INPUT_TYPES) view.addEventListener(type, handler, true);
  return () => { for (const type of INPUT_TYPES) view.removeEventListener(type, handler, true); };
}

/** True while the user's input is still being answered (see the top). */
export function userIsActing() {
  if (!inUserTask) return false;
  const activation = typeof navigator !== 'undefined' && navigator.userActivation;
  return !activation || activation.isActive;
}

/** Whose action an event on `el` is: "assistant", "user" or "script". */
export function actorOf(event, el) {
  if (assistantDepth > 0) return 'assistant';
  const declared = el && el.closest && el.closest(`[${ACTOR_ATTRIBUTE}]`);
  if (declared && declared.getAttribute(ACTOR_ATTRIBUTE) === 'assistant') return 'assistant';
  if (event.isTrusted || userIsActing()) return 'user';
  return 'script';
}

/** Runs fn as `actor`'s (only "assistant" is declared this way): every
 *  click and change until fn returns, or until the promise it returns
 *  settles, is that actor's. Returns what fn returns. */
export function runAs(actor, fn) {
  if (actor !== 'assistant') {
    throw new TypeError(`uitrail actor: the actor must be "assistant", not ${JSON.stringify(actor)}`);
  }
  if (typeof fn !== 'function') throw new TypeError('uitrail actor: the second argument must be a function');
  assistantDepth++;
  let result;
  try {
    result = fn();
  } catch (error) {
    assistantDepth--;
    throw error;
  }
  if (result && typeof result.then === 'function') {
    return Promise.resolve(result).finally(() => { assistantDepth--; });
  }
  assistantDepth--;
  return result;
}

if (typeof window !== 'undefined') {
  for (const type of INPUT_TYPES) window.addEventListener(type, forward, true);
}
