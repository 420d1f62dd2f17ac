// The session picker in the top bar: the root sandbox and every live session (GET /_emulator/sessions on the
// root); choosing one opens that sandbox's own dashboard (docs/sessions.md#the-dashboard).

import { BASE, ROOT, call } from '../api.js';
import { $, h } from '../dom.js';

const REFRESH_MS = 5000;

async function fillSessions() {
  const picker = $('#session-picker');
  const response = await call('GET', '/_emulator/sessions').catch(() => null);
  if (!response?.ok) return;
  const current = BASE === ROOT ? '' : BASE.slice(ROOT.length + '/_sessions/'.length);
  const ids = response.body.data.map((session) => session.id);
  if (current && !ids.includes(current)) ids.unshift(current); // ended: still say where the page is
  const wanted = ['', ...ids].join(',');
  if (picker.dataset.ids === wanted) return;
  picker.dataset.ids = wanted;
  picker.replaceChildren(
    h('option', { value: '' }, 'Default (root)'),
    ...ids.map((id) => h('option', { value: id }, `Session ${id}`)),
  );
  picker.value = current;
}

export function initSessionPicker() {
  const picker = $('#session-picker');
  picker.addEventListener('change', () => {
    location.assign(picker.value ? `${ROOT}/_sessions/${picker.value}/_emulator/ui` : `${ROOT}/_emulator/ui`);
  });
  void fillSessions();
  setInterval(() => void fillSessions(), REFRESH_MS);
}
