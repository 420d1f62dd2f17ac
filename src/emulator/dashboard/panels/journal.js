// Panel "Request journal": the newest 100 entries of GET /_emulator/requests, read every 2 s while the
// panel is open, filterable by path prefix, with a button to clear the journal.

import { call } from '../api.js';
import { $, chip, errorNodes, h, replace } from '../dom.js';
import { shortTime } from '../format.js';

const JOURNAL_POLL_MS = 2000;

/** seq -> <li> of each entry on screen. */
const journalItems = new Map();
let journalTimer = null;

async function loadJournal() {
  clearTimeout(journalTimer);
  const panel = $('#journal-panel');
  if (!panel.open) return;
  const query = new URLSearchParams({ limit: '100' });
  const prefix = $('#journal-prefix').value.trim();
  if (prefix.startsWith('/')) query.set('pathPrefix', prefix);
  let response;
  try {
    response = await call('GET', `/_emulator/requests?${query}`);
  } catch (error) {
    response = { status: 0, ok: false, body: { message: error.message } };
  }
  const note = $('#journal-note');
  if (response.status === 404) {
    note.textContent = 'This server has no request journal (GET /_emulator/requests).';
    clearList();
    return;
  }
  if (!response.ok) {
    replace(note, ...errorNodes(response.status, response.body));
  } else {
    const entries = [...(response.body.data ?? [])].reverse();
    note.textContent = `${entries.length} newest request${entries.length === 1 ? '' : 's'} shown (journal keeps ${response.body.capacity ?? '?'}). The dashboard's own polling is not recorded.`;
    renderJournal(entries);
  }
  if (!document.hidden) journalTimer = setTimeout(() => void loadJournal(), JOURNAL_POLL_MS);
}

function renderJournal(entries) {
  const list = $('#journal');
  const seen = new Set();
  let cursor = list.firstChild;
  for (const entry of entries) {
    const key = String(entry.seq);
    seen.add(key);
    let item = journalItems.get(key);
    if (!item) {
      item = journalItem(entry);
      journalItems.set(key, item);
    }
    if (item === cursor) cursor = cursor.nextSibling;
    else list.insertBefore(item, cursor);
  }
  for (const [key, item] of journalItems) {
    if (!seen.has(key)) {
      item.remove();
      journalItems.delete(key);
    }
  }
}

function journalItem(entry) {
  const statusKind = entry.status === 0 || entry.status >= 500 ? 'failed' : entry.status >= 400 ? 'warning' : 'completed';
  const faults = entry.faults ?? [];
  return h(
    'li',
    {},
    h(
      'details',
      {},
      h(
        'summary',
        { class: 'journal-line' },
        h('span', { class: 'journal-method', text: entry.method }),
        h('span', { class: 'journal-path', text: entry.query ? `${entry.path}?${entry.query}` : entry.path }),
        chip(entry.status === 0 ? 'no answer' : String(entry.status), statusKind),
        faults.length > 0 ? chip(`fault ${faults.map((fault) => fault.ruleId).join(', ')}`, 'warning') : null,
        h('span', { class: 'muted small', text: `${Number(entry.latencyMs).toFixed(1)} ms` }),
        h('span', { class: 'muted small', text: [entry.userId, entry.authMode].filter(Boolean).join(' · ') }),
        h('time', { class: 'muted small', datetime: entry.at, text: shortTime(entry.at) }),
      ),
      faults.length > 0 ? h('h4', { text: 'Faults' }) : null,
      faults.length > 0 ? h('ul', { class: 'journal-faults' }, faults.map((fault) => h('li', { text: `${fault.ruleId} (${fault.type}): ${fault.detail}` }))) : null,
      h('h4', { text: 'Request headers' }),
      h('pre', { class: 'json', text: JSON.stringify(entry.requestHeaders ?? {}, null, 2) }),
      h('h4', { text: 'Request body' }),
      h('pre', { class: 'json', text: entry.requestBody === null ? '(none)' : JSON.stringify(entry.requestBody, null, 2) }),
      h('h4', { text: 'Response body' }),
      h('pre', { class: 'json', text: entry.responseBody === null ? '(none)' : JSON.stringify(entry.responseBody, null, 2) }),
    ),
  );
}

function clearList() {
  $('#journal').replaceChildren();
  journalItems.clear();
}

export function initJournal() {
  $('#journal-panel').addEventListener('toggle', () => void loadJournal());
  $('#journal-link').addEventListener('click', () => {
    $('#journal-panel').open = true;
  });
  $('#journal-prefix').addEventListener('input', () => {
    clearList();
    void loadJournal();
  });
  $('#journal-clear').addEventListener('click', async () => {
    const response = await call('DELETE', '/_emulator/requests');
    if (!response.ok) {
      replace($('#journal-note'), ...errorNodes(response.status, response.body));
      return;
    }
    clearList();
    void loadJournal();
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) void loadJournal();
  });
}
