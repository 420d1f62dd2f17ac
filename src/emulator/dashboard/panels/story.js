// The story of the selected transaction, inside the detail panel (docs/dashboard.md#the-story-of-a-transaction): its
// status steps, the ledger entries it posted and every attempt of its webhook deliveries, in order on one axis of
// emulated time. Each item carries its offset from the creation (T+) and a marker placed on that axis. Data: the
// feed's selected.story (steps, ledgerEntries, final) and selected.deliveries (attempts, replays, chaos).

import { chip, h, replace } from '../dom.js';
import { money, shortTime } from '../format.js';

const ms = (iso) => Date.parse(iso);

/** "+1.2 s", "+3 min 5 s", "+2 h 4 min" from a number of milliseconds. */
export function offsetLabel(deltaMs) {
  if (deltaMs < 1000) return `+${deltaMs} ms`;
  const seconds = deltaMs / 1000;
  if (seconds < 60) return `+${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `+${minutes} min${seconds % 60 >= 1 ? ` ${Math.floor(seconds % 60)} s` : ''}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `+${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `+${Math.floor(hours / 24)} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

/** What webhook chaos did to an attempt (its `chaos` list of { type, detail }, docs/faults.md#webhook-chaos), as chips. */
function chaosChips(attempt) {
  if (!Array.isArray(attempt.chaos)) return [];
  return attempt.chaos.map((item) => {
    const label = typeof item === 'string' ? item : (item?.type ?? JSON.stringify(item));
    const detail = typeof item === 'object' && item?.detail ? ` (${item.detail})` : '';
    return chip(`chaos: ${label}${detail}`, 'warning');
  });
}

/** Every item of the story, oldest first (ties: steps, then entries, then attempts, as they happen). */
export function storyItems(story, deliveries) {
  const items = [];
  for (const step of story.steps) {
    items.push({ at: step.at, order: 0, kind: 'status', step });
  }
  for (const entry of story.ledgerEntries) items.push({ at: entry.postedAt, order: 1, kind: 'ledger', entry });
  for (const delivery of deliveries) {
    for (const attempt of Array.isArray(delivery.attempts) ? delivery.attempts : []) {
      items.push({ at: attempt.attemptedAt, order: 2, kind: 'attempt', delivery, attempt });
    }
    if (delivery.status === 'RETRYING' && delivery.nextAttemptAt) items.push({ at: delivery.nextAttemptAt, order: 3, kind: 'next', delivery });
  }
  return items.sort((a, b) => ms(a.at) - ms(b.at) || a.order - b.order);
}

function itemBody(item, isLastStep, final) {
  if (item.kind === 'status') {
    const { step } = item;
    return [
      h('span', { class: 'story-what', text: step.kind === 'CREATED' ? 'Created' : 'Status' }),
      chip(step.status),
      step.statusCode ? h('code', { class: 'small', text: step.statusCode }) : null,
      isLastStep && final ? h('strong', { class: 'small', text: 'final' }) : null,
    ];
  }
  if (item.kind === 'ledger') {
    const { entry } = item;
    return [
      h('span', { class: 'story-what', text: entry.fee ? 'Fee entry' : entry.kind === 'REVERSAL' ? 'Reversal' : 'Ledger entry' }),
      h('span', { class: `amount ${entry.amount.startsWith('-') ? 'debit' : 'credit'}`, text: money(entry.amount, entry.currency) }),
      h('span', { class: 'muted small', text: `on ${entry.accountId}` }),
      h('span', { class: 'muted small', text: entry.description }),
    ];
  }
  if (item.kind === 'next') {
    return [h('span', { class: 'story-what', text: 'Next retry' }), h('span', { class: 'small', text: item.delivery.eventType }), chip('RETRYING')];
  }
  const { delivery, attempt } = item;
  const status = attempt.responseStatus === null || attempt.responseStatus === undefined ? attempt.outcome : `${attempt.responseStatus}`;
  return [
    h('span', { class: 'story-what', text: `Webhook #${attempt.number}` }),
    h('span', { class: 'small', text: delivery.eventType }),
    attempt.kind === 'REPLAY' ? chip('replay', 'type') : attempt.kind === 'DUPLICATE' ? chip('duplicate', 'warning') : attempt.number > 1 ? chip('retry', 'retrying') : null,
    chip(status, attempt.outcome === 'SUCCEEDED' ? 'completed' : 'failed'),
    h('span', { class: 'muted small', text: `${attempt.latencyMs} ms` }),
    ...chaosChips(attempt),
    attempt.error ? h('span', { class: 'small', text: attempt.error }) : null,
  ];
}

/** Draw the story into `container`; `story` null: the transaction is gone. */
export function renderStory(container, story, deliveries) {
  if (!story) {
    replace(container, h('p', { class: 'muted', text: 'No story: the transaction no longer exists.' }));
    return;
  }
  const items = storyItems(story, deliveries);
  const start = ms(story.steps[0]?.at ?? items[0]?.at);
  const end = Math.max(start, ...items.map((item) => ms(item.at)));
  const span = end - start;
  const lastStep = story.steps[story.steps.length - 1];
  const attempts = items.filter((item) => item.kind === 'attempt').length;
  replace(
    container,
    h(
      'p',
      { class: 'muted small story-caption' },
      `${story.steps.length} status step${story.steps.length === 1 ? '' : 's'}, ${story.ledgerEntries.length} ledger entr${story.ledgerEntries.length === 1 ? 'y' : 'ies'}, ` +
        `${attempts} webhook attempt${attempts === 1 ? '' : 's'} over ${offsetLabel(span).slice(1)} of emulated time${story.final ? '; final' : '; still moving'}.`,
    ),
    h(
      'ol',
      { class: 'story', 'aria-label': 'Story on the emulated clock, oldest first' },
      items.map((item) => {
        const marker = h('span', { class: `story-marker story-marker-${item.kind}`, 'aria-hidden': 'true' });
        // CSSOM, not a style attribute: allowed under the page's Content Security Policy.
        marker.style.setProperty('--at', span > 0 ? String(((ms(item.at) - start) / span) * 100) : '0');
        return h(
          'li',
          { class: `story-item story-${item.kind}`, dataset: { kind: item.kind, ...(item.kind === 'status' ? { status: item.step.status } : {}) } },
          h('span', { class: 'story-axis', 'aria-hidden': 'true' }, marker),
          h('span', { class: 'story-when' }, h('span', { class: 'story-offset', text: offsetLabel(ms(item.at) - start) }), ' ', h('time', { class: 'muted small', datetime: item.at, title: shortTime(item.at), text: shortTime(item.at).slice(11) })),
          h('span', { class: 'story-body' }, itemBody(item, item.kind === 'status' && item.step === lastStep, story.final)),
        );
      }),
    ),
  );
}
