// The webhook deliveries of the selected transaction, inside the detail panel: each event with its status,
// next retry and attempts, its full JSON, and a Replay button (POST /_emulator/webhooks/deliveries/{id}/replay).

import { call } from '../api.js';
import { chip, h, replace, setResult } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { shortTime } from '../format.js';
import { state } from '../state.js';

export function renderDeliveries(container, deliveries, transactionId) {
  if (deliveries.length === 0) {
    replace(container, h('p', { class: 'muted', text: 'No webhook events recorded for this transaction yet.' }));
    return;
  }
  // keep open <details> open across refreshes
  const open = new Set([...container.querySelectorAll('details[open]')].map((details) => details.dataset.id));
  replace(container,
    h(
      'ol',
      { class: 'delivery-list' },
      deliveries.map((delivery) => {
        const attempts = Array.isArray(delivery.attempts) ? delivery.attempts : [];
        const result = h('span', { class: 'result', role: 'status', 'aria-live': 'polite' });
        const replay = h('button', {
          type: 'button',
          class: 'compact',
          text: 'Replay',
          'aria-label': `Replay delivery ${delivery.id}`,
          on: { click: () => void replayDelivery(delivery.id, transactionId, replay, result) },
        });
        return h(
          'li',
          { class: 'delivery', dataset: { deliveryId: delivery.id } },
          h(
            'div',
            { class: 'delivery-head' },
            h('strong', { text: delivery.eventType }),
            chip(delivery.status),
            h('span', { class: 'muted small', text: `${attempts.length} attempt${attempts.length === 1 ? '' : 's'}` }),
            delivery.nextAttemptAt ? h('span', { class: 'muted small', text: `next retry ${shortTime(delivery.nextAttemptAt)}` }) : null,
            delivery.status === 'SKIPPED' ? h('span', { class: 'muted small', text: 'no webhook URL was set' }) : null,
            h('code', { class: 'small', text: delivery.id }),
            replay,
            result,
          ),
          attempts.length > 0
            ? h(
                'ol',
                { class: 'attempts', 'aria-label': 'Attempts' },
                attempts.map((attempt) =>
                  h(
                    'li',
                    {},
                    h('span', { text: `#${attempt.number}` }),
                    attempt.kind === 'REPLAY' ? chip('replay', 'type') : null,
                    h('time', { class: 'small', datetime: attempt.attemptedAt, text: shortTime(attempt.attemptedAt) }),
                    chip(attempt.responseStatus === null || attempt.responseStatus === undefined ? attempt.outcome : `${attempt.responseStatus}`, attempt.outcome === 'SUCCEEDED' ? 'completed' : 'failed'),
                    h('span', { class: 'muted small', text: `${attempt.latencyMs} ms` }),
                    attempt.error ? h('span', { class: 'small', text: attempt.error }) : null,
                  ),
                ),
              )
            : null,
          h(
            'details',
            { dataset: { id: delivery.id }, open: open.has(delivery.id) },
            h('summary', { text: 'Delivery JSON (body, attempts with headers)' }),
            h('pre', { class: 'json', text: JSON.stringify(delivery, null, 2) }),
          ),
        );
      }),
    ),
  );
}

async function replayDelivery(id, transactionId, button, result) {
  button.disabled = true;
  const response = await call('POST', `/_emulator/webhooks/deliveries/${encodeURIComponent(id)}/replay`);
  button.disabled = false;
  if (!response.ok) return setResult(result, 'error', `${response.status} ${response.body?.message ?? 'Replay failed'}`);
  setResult(result, 'ok', 'Replayed.');
  if (state.selectedId === transactionId) refreshSoon();
}
