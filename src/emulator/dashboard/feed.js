// The live feed: GET /_emulator/ui/state (overview, clock, newest transactions and the selected
// transaction with its deliveries) once a second while the tab is visible, drawn by the entry's render().

import { call } from './api.js';
import { $ } from './dom.js';
import { state } from './state.js';

const POLL_MS = 1000;
const TRANSACTIONS_LIMIT = 50;

let render = () => {};
let pollTimer = null;
let polling = false;
let pollAgain = false;

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
    const response = await call('GET', `/_emulator/ui/state?${query}`);
    if (!response.ok) {
      setConnection('error', `Feed error ${response.status}: ${response.body?.message ?? ''}`);
    } else {
      setConnection('ok', 'Live');
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
  pollTimer = setTimeout(poll, POLL_MS);
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

/** Start polling; `draw(feed)` gets every successful answer. A hidden tab pauses until it is shown again. */
export function startFeed(draw) {
  render = draw;
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refreshSoon();
  });
  refreshSoon();
}
