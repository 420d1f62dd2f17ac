// The live feed: GET /_emulator/ui/state (overview, clock, newest transactions and the selected
// transaction with its deliveries), drawn by the entry's render(). The server pushes a "changed" notice over
// GET /_emulator/ui/events (server-sent events) whenever the sandbox's database or clock changes, and the feed
// is fetched at once; without the stream (no EventSource, an admin token, a proxy that buffers) it is polled once
// a second while the tab is visible (docs/dashboard.md#live-updates).

import { BASE, call } from './api.js';
import { $ } from './dom.js';
import { state } from './state.js';

const POLL_MS = 1000;
// With the stream open the poll is only a safety net.
const PUSHED_POLL_MS = 15_000;
const TRANSACTIONS_LIMIT = 50;

let render = () => {};
let pollTimer = null;
let polling = false;
let pollAgain = false;
/** The event stream, while it is open. */
let pushed = false;
let feedRequests = 0;

/** What tests and curious presenters can read: is the push channel open, how many feed requests were made. */
export const feedStatus = () => ({ pushed, feedRequests });

/** One feed request at a time; a refresh asked for meanwhile runs right after it. */
async function poll() {
  if (polling) {
    pollAgain = true;
    return;
  }
  clearTimeout(pollTimer);
  pollTimer = null;
  if (document.hidden) return;
  polling = true;
  try {
    const query = new URLSearchParams({ limit: String(TRANSACTIONS_LIMIT) });
    if (state.userFilter) query.set('userId', state.userFilter);
    if (state.selectedId) query.set('selected', state.selectedId);
    feedRequests += 1;
    const response = await call('GET', `/_emulator/ui/state?${query}`);
    if (!response.ok) {
      setConnection('error', `Feed error ${response.status}: ${response.body?.message ?? ''}`);
    } else {
      setConnection('ok', pushed ? 'Live (push)' : 'Live (polling)');
      render(response.body);
    }
  } catch (error) {
    setConnection('error', `Server unreachable (${error.message}); retrying`);
  } finally {
    polling = false;
  }
  if (pollAgain) {
    pollAgain = false;
    return poll();
  }
  pollTimer = setTimeout(poll, pushed ? PUSHED_POLL_MS : POLL_MS);
}

/** Fetch the feed now (after an action), instead of at the next tick. */
export function refreshSoon() {
  void poll();
}

function setConnection(kind, text) {
  const element = $('#connection');
  // a live region: write only on change, or screen readers would repeat it every second
  if (element.textContent === text) return;
  element.textContent = text;
  element.className = `connection connection-${kind}`;
}

/**
 * The push channel. EventSource reconnects by itself after a dropped connection (the server's `retry`); a stream the
 * server refused (401 with an admin token, which EventSource cannot send; 429; 404 on an older server) is closed for
 * good and the page keeps polling. Each notice fetches the feed once (one request at a time, see poll()).
 */
function startEvents() {
  if (typeof EventSource !== 'function') return;
  const source = new EventSource(`${BASE}/_emulator/ui/events`);
  const onNotice = () => {
    if (!pushed) {
      pushed = true;
      setConnection('ok', 'Live (push)');
    }
    refreshSoon();
  };
  source.addEventListener('ready', onNotice);
  source.addEventListener('changed', onNotice);
  source.addEventListener('error', () => {
    const wasPushed = pushed;
    pushed = false;
    if (source.readyState === EventSource.CLOSED) source.close();
    // back to polling at once rather than at the end of a 15 s wait
    if (wasPushed) refreshSoon();
  });
  addEventListener('pagehide', () => source.close());
}

/** Start the feed; `draw(feed)` gets every successful answer. A hidden tab pauses until it is shown again. */
export function startFeed(draw) {
  render = draw;
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refreshSoon();
  });
  startEvents();
  refreshSoon();
}
