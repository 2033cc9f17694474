// A team's typed use of the sender: compiled by tsc --noEmit in
// types.test.mjs against the package's uitrail.d.ts. The last five calls
// are marked as expected errors: they check that the types refuse what the
// sender refuses.
import uitrail, { LIMITS, start, type Tracker, type StartOptions } from '@uitrail/sender';

const options: StartOptions = { url: 'https://uitrail.example.com', rowContext: 'always', dom: true };
const tracker: Tracker = start(options);
tracker.emit('order.refund_failed', { text: 'Refund exceeds captured amount', level: 'error', data: { order: 4411, retry: false } });
tracker.flush();
tracker.stop({ close: true });
const second = uitrail.start({ transport: 'http', onRecord: (tag, record) => console.log(tag, record.seq) });
const max: number = LIMITS.APP_DATA_MAX;
console.log(second.tab?.length, max);
// A signed per-tab token from the app's backend, fresh for each connection.
start({ tab: 'tab-42', token: async (tab) => (await fetch(`/uitrail-token?tab=${tab}`)).text() });
start({ token: 'shared-ingest-token' });

// @ts-expect-error: rowContext has three values.
start({ rowContext: 'sometimes' });
// @ts-expect-error: a level is error, warning or info.
tracker.emit('x', { level: 'fatal' });
// @ts-expect-error: data values are text, numbers or booleans.
tracker.emit('x', { data: { nested: { a: 1 } } });
// @ts-expect-error: dom is a boolean.
start({ dom: 'off' });
// @ts-expect-error: a token is a string or a function that gives one.
start({ token: 42 });
