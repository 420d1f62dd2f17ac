import t from 'tap';
import { buildTestApp } from '../helper.js';
import { MAX_STREAMS, uiEvents } from '../../src/emulator/dashboard.events.js';

// HEAD on the event-stream routes answers the stream's headers and holds nothing, changes nothing
// (docs/dashboard.md#live-updates, docs/webhooks.md#listen). Before, it never answered, took a dashboard stream slot,
// and on the listen stream connected a listener that rewrote every programme's webhook URL.

t.test('HEAD on the dashboard stream answers headers only and takes no slot', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (let index = 0; index <= MAX_STREAMS; index += 1) {
    const head = await sandbox.app.inject({ method: 'HEAD', url: '/_emulator/ui/events' });
    t.equal(head.statusCode, 200, `HEAD ${index + 1}: 200, not 429`);
    t.match(head.headers['content-type'], /^text\/event-stream/);
    t.equal(head.body, '');
  }
  t.equal(uiEvents(sandbox.ctx).open(), 0, 'no stream held');
});

t.test('HEAD on the listen stream connects nothing and changes no webhook URL', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/endpoint' });
  const head = await sandbox.app.inject({ method: 'HEAD', url: `/_emulator/webhooks/listen/stream?forwardTo=${encodeURIComponent('http://127.0.0.1:9/hooks')}` });
  t.equal(head.statusCode, 200);
  t.match(head.headers['content-type'], /^text\/event-stream/);
  t.equal(head.body, '');
  const after = await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/endpoint' });
  t.same(after.json(), before.json(), 'every programme keeps its webhook URL');
  const relay = await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/listen' });
  t.match(relay.json(), { forwardTo: null, connected: false, listenerId: null });
});
