// The top bar's clock readout and the toolbar: advance the emulated clock, freeze or resume it, reset to
// the fixtures (POST /_emulator/clock, POST /_emulator/reset).

import { call } from '../api.js';
import { $, errorNodes, setResult } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { shortTime } from '../format.js';
import { closeDetail } from './detail.js';

export function renderClock(clock) {
  $('#clock-now').textContent = shortTime(clock.now);
  $('#clock-now').setAttribute('datetime', clock.now);
  const mode = $('#clock-mode');
  mode.textContent = clock.mode;
  mode.className = `chip chip-${clock.mode}`;
  $('#clock-toggle').textContent = clock.mode === 'frozen' ? 'Resume real time' : 'Freeze';
  $('#clock-toggle').dataset.mode = clock.mode;
}

async function clockAction(body, label) {
  const result = $('#toolbar-result');
  setResult(result, 'pending', 'Working…');
  try {
    const response = await call('POST', '/_emulator/clock', body);
    if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
    const jobs = response.body.jobsRun;
    setResult(result, 'ok', `${label}; now ${shortTime(response.body.now)}${jobs !== undefined ? ` (${jobs} scheduled job${jobs === 1 ? '' : 's'} ran)` : ''}.`);
    refreshSoon();
  } catch (error) {
    setResult(result, 'error', `Could not reach the server: ${error.message}`);
  }
}

// Reset asks for a second click instead of a modal dialog.
let resetArmed = null;

async function reset(button) {
  if (!resetArmed) {
    button.textContent = 'Click again to reset';
    resetArmed = setTimeout(() => {
      resetArmed = null;
      button.textContent = 'Reset to fixtures';
    }, 4000);
    return;
  }
  clearTimeout(resetArmed);
  resetArmed = null;
  button.textContent = 'Reset to fixtures';
  const result = $('#toolbar-result');
  const response = await call('POST', '/_emulator/reset');
  if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
  setResult(result, 'ok', `Reset to the fixtures in ${Number(response.body.durationMs).toFixed(1)} ms.`);
  closeDetail();
  refreshSoon();
}

export function initClock() {
  for (const button of document.querySelectorAll('[data-advance-ms]')) {
    button.addEventListener('click', () => void clockAction({ advanceMs: Number(button.dataset.advanceMs) }, `Advanced ${button.textContent}`));
  }

  $('#advance-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const amount = Number($('#advance-amount').value);
    const unit = Number($('#advance-unit').value);
    if (!Number.isFinite(amount) || amount < 0 || $('#advance-amount').value === '') {
      return setResult($('#toolbar-result'), 'error', 'Enter a number of units, 0 or more.');
    }
    const unitLabel = $('#advance-unit').selectedOptions[0].textContent;
    void clockAction({ advanceMs: Math.round(amount * unit) }, `Advanced ${amount} ${unitLabel}`);
  });

  $('#clock-toggle').addEventListener('click', (event) => {
    const frozen = event.currentTarget.dataset.mode === 'frozen';
    const now = $('#clock-now').getAttribute('datetime');
    void clockAction(frozen ? { realtime: true } : { freezeAt: now ?? new Date().toISOString() }, frozen ? 'Clock running in real time' : 'Clock frozen');
  });

  $('#reset-button').addEventListener('click', (event) => void reset(event.currentTarget));
}
