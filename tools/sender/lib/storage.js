// The tab id and its last seq, kept in sessionStorage: a reload, a link to
// another page of the origin, a form post and a back/forward restore all
// continue the same tab and its sequence.

import { STORAGE_KEY, TAB_ID_BYTES } from './limits.js';

export function randomId(bytes = TAB_ID_BYTES) {
  const random = new Uint8Array(bytes);
  crypto.getRandomValues(random);
  let binary = '';
  for (const byte of random) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function readSavedTab() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || 'null');
    if (saved && typeof saved.tab === 'string' && Number.isSafeInteger(saved.seq)) return saved;
  } catch {
    // Storage can be disabled or full; the tab id then lives in memory only.
  }
  return null;
}

export function writeSavedTab(tab, seq) {
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ tab, seq }));
  } catch {
    // As above: without storage a reload starts a new tab id.
  }
}
