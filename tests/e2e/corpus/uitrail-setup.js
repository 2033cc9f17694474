// The app's uitrail setup, as a team adds it to every page: the sender
// from the daemon's /sender/ path (here the app's own server serves it),
// the daemon's address from the app's configuration.
import uitrail from '/sender/uitrail.js';

// The configuration comes with the page when the test harness put it there
// (as an app's build inlines it), else from the server.
const config = window.uitrailCorpusConfig || await (await fetch('/corpus/config.json')).json();
const setup = window.uitrailSetup || {};
window.tracker = uitrail.start({ url: config.daemon, ...setup });
window.dispatchEvent(new Event('uitrail-ready'));
