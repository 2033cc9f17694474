// The page's own account of its transitions, for tests/e2e/stability.test.mjs
// and tools/bench-stability.mjs: window.truth('changing' | 'stable') at the
// moment the page starts or finishes a change, on the sender's clock.
window.__truth = [];
window.truth = (state) => window.__truth.push({ t: performance.timeOrigin + performance.now(), state });
// When the sender started (uitrail-setup.js announces it right after
// start()): a page that never changes is settled from then at the earliest.
window.addEventListener('uitrail-ready', () => { window.__senderReady = performance.timeOrigin + performance.now(); }, { once: true });
