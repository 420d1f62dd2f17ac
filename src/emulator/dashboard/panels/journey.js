// Panel "Journey of a user" (docs/dashboard.md#the-journey-of-a-user): pick a user and read, oldest first, its onboarding
// steps (information request states, review, enrollment), accounts and deposit instructions, and its money in and out,
// each with its emulated time; an item of a transaction opens that transaction's story in the detail panel. Data:
// GET /_emulator/users/{id}/journey, fetched again on every answer of the live feed (so on every push notice) and
// redrawn only when it changed.

import { call } from '../api.js';
import { $, chip, h, replace } from '../dom.js';
import { money, shortTime } from '../format.js';
import { fillSelect, userOptions } from '../forms.js';
import { state } from '../state.js';
import { offsetLabel } from './story.js';

const PHASE_NAMES = { ONBOARDING: 'Onboarding', ACCOUNTS: 'Accounts', MONEY: 'Money' };

let onSelectTransaction = () => {};
let drawnKey = '';
let fetching = false;
let again = false;

export function fillJourneyChoices() {
  const select = $('#journey-user');
  fillSelect(select, [{ options: userOptions() }], null);
  if (state.journeyUser && [...select.options].some((option) => option.value === state.journeyUser)) select.value = state.journeyUser;
  state.journeyUser = select.value;
}

/** Show one user's journey (the guided demo calls this for the business it onboards). */
export function showJourneyOf(userId) {
  state.journeyUser = userId;
  const select = $('#journey-user');
  if ([...select.options].some((option) => option.value === userId)) select.value = userId;
  drawnKey = '';
  void refresh();
}

/** From the feed: fetch the journey again (the feed answers after every change and clock move). */
export function renderJourney() {
  void refresh();
}

async function refresh() {
  if (fetching) {
    again = true;
    return;
  }
  const userId = state.journeyUser;
  if (!userId) return;
  fetching = true;
  try {
    const response = await call('GET', `/_emulator/users/${encodeURIComponent(userId)}/journey`);
    if (!response.ok) {
      if (response.status === 404) {
        drawnKey = '';
        replace($('#journey'));
        $('#journey-note').textContent = `User ${userId} is not in this sandbox (it may have been reset).`;
      } else {
        $('#journey-note').textContent = `Could not read the journey: ${response.status} ${response.body?.message ?? ''}`;
      }
    } else if (userId === state.journeyUser) {
      const { now: _now, ...stable } = response.body;
      const key = JSON.stringify(stable);
      if (key !== drawnKey) {
        drawnKey = key;
        draw(response.body);
      }
    }
  } catch (error) {
    $('#journey-note').textContent = `Could not read the journey: ${error.message}`;
  } finally {
    fetching = false;
  }
  if (again) {
    again = false;
    void refresh();
  }
}

function itemAmount(item) {
  if (item.amount === null) return null;
  const sign = item.kind === 'MONEY_OUT' ? '−' : '+';
  return h('span', { class: `amount ${item.kind === 'MONEY_OUT' ? 'debit' : 'credit'}`, text: `${sign}${money(item.amount, item.currency)}` });
}

function feesText(item) {
  if (!Array.isArray(item.fees) || item.fees.length === 0) return null;
  return `fee ${item.fees.map((fee) => money(fee.amount, fee.currency)).join(' + ')}`;
}

function draw(journey) {
  const start = journey.items.length > 0 ? Date.parse(journey.items[0].at) : 0;
  $('#journey-note').textContent =
    `${journey.name} (${journey.type}), enrollment ${journey.enrollmentStatus}${journey.enrollmentStatusReason ? ` (${journey.enrollmentStatusReason})` : ''}: ` +
    `${journey.items.length} step${journey.items.length === 1 ? '' : 's'}, oldest first` +
    (journey.truncated ? '; only the newest are listed.' : '.');
  replace(
    $('#journey'),
    journey.items.map((item, index) => {
      const previous = journey.items[index - 1];
      const newPhase = !previous || previous.phase !== item.phase;
      return h(
        'li',
        { class: `journey-item journey-${item.phase.toLowerCase()}`, dataset: { kind: item.kind, status: item.status ?? '', phase: item.phase } },
        h(
          'span',
          { class: 'journey-when' },
          h('time', { datetime: item.at, text: shortTime(item.at) }),
          h('span', { class: 'muted small journey-offset', text: ` T${offsetLabel(Date.parse(item.at) - start)}` }),
        ),
        h(
          'span',
          { class: 'journey-what' },
          newPhase ? h('strong', { class: 'journey-phase', text: `${PHASE_NAMES[item.phase] ?? item.phase}: ` }) : null,
          h('span', { class: 'journey-title', text: item.title }),
        ),
        h(
          'span',
          { class: 'journey-facts' },
          item.status ? chip(item.status) : null,
          item.statusCode ? h('code', { class: 'small', text: item.statusCode }) : null,
          itemAmount(item),
          feesText(item) ? h('span', { class: 'muted small', text: feesText(item) }) : null,
          item.detail ? h('span', { class: 'muted small journey-detail', text: item.detail }) : null,
          item.transactionId
            ? h('button', { type: 'button', class: 'link journey-story', dataset: { id: item.transactionId }, text: `Story of ${item.transactionId}`, on: { click: () => onSelectTransaction(item.transactionId) } })
            : null,
        ),
      );
    }),
  );
  $('#journey').dataset.user = journey.userId;
}

/** `selectTransaction(id)` opens a transaction's story (the detail panel). */
export function initJourney({ select }) {
  onSelectTransaction = select;
  $('#journey-user').addEventListener('change', (event) => showJourneyOf(event.currentTarget.value));
}
