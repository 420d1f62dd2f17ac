// Panel "Balance over time" (docs/dashboard.md#balance-over-time): an account's `current` and `available` balances as
// two stepped lines over emulated time (uPlot, served from node_modules as published), with the table of the same
// points under it as the chart's text alternative. Data: GET /_emulator/accounts/{id}/balance-history, fetched again
// whenever the feed shows the clock or the account's balances moved. Holds and reversals are the gap between the
// lines: `available` moves when an entry is posted, `current` when its transaction settles.

import { call } from '../api.js';
import { $, h, replace } from '../dom.js';
import { accountLabel, money, shortTime } from '../format.js';
import { accountGroups, fillSelect } from '../forms.js';
import { state } from '../state.js';

const DAY_MS = 86_400_000;
const HEIGHT = 220;

// The chart library is loaded on first use, so a server without it (an install without dependencies) still draws
// the table and the rest of the page.
let uPlotLoading = null;
const loadUPlot = () => (uPlotLoading ??= import('../vendor/uPlot.esm.js').then((module) => module.default).catch(() => null));

let chart = null;
let chartFor = '';
let drawnKey = '';
let fetching = false;
let again = false;
let lastNow = null;

/** Where a played scenario started (docs/dashboard.md#run-a-demo): the start of the `scenario` period. */
let scenarioStartMs = null;

/** Show the scenario's window, from the instant it started, not the fixtures' history; selects that period. */
export function showScenarioWindow(startedAtIso) {
  scenarioStartMs = Date.parse(startedAtIso);
  const option = $('#balance-period option[value="scenario"]');
  option.hidden = false;
  option.disabled = false;
  const select = $('#balance-period');
  if (select.value !== 'scenario') {
    select.value = 'scenario';
    select.dispatchEvent(new Event('change'));
  }
}

/** The period's bounds: the day or week up to the emulated now, the statement period (the calendar month so far), or the scenario's window. */
export function periodBounds(period, nowIso) {
  const to = Date.parse(nowIso);
  if (period === 'scenario' && scenarioStartMs !== null) return { from: Math.min(scenarioStartMs, to - 1000), to };
  if (period === 'day') return { from: to - DAY_MS, to };
  if (period === 'statement') {
    const now = new Date(to);
    const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    return { from: from < to ? from : to - DAY_MS, to };
  }
  return { from: to - 7 * DAY_MS, to };
}

export function fillBalanceChoices() {
  fillSelect($('#balance-account'), accountGroups(), null);
}

/** From the feed: fetch the history again when the clock, the account's balances or the choice changed. */
export function renderBalances(feed) {
  lastNow = feed.clock.now;
  void refresh();
}

async function refresh() {
  if (fetching) {
    again = true;
    return;
  }
  const accountId = $('#balance-account').value;
  const period = $('#balance-period').value;
  const entry = state.accounts.get(accountId);
  if (!entry || !lastNow) return;
  const key = [accountId, period, lastNow, entry.account.balances.current, entry.account.balances.available].join('|');
  if (key === drawnKey) return;
  fetching = true;
  try {
    const { from, to } = periodBounds(period, lastNow);
    const query = new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    const response = await call('GET', `/_emulator/accounts/${encodeURIComponent(accountId)}/balance-history?${query}`);
    if (!response.ok) {
      $('#balance-note').textContent = `Could not read the history: ${response.status} ${response.body?.message ?? ''}`;
    } else {
      drawnKey = key;
      await draw(response.body, entry.account, period);
    }
  } catch (error) {
    $('#balance-note').textContent = `Could not read the history: ${error.message}`;
  } finally {
    fetching = false;
  }
  if (again) {
    again = false;
    void refresh();
  }
}

const PERIOD_NAMES = { day: 'the last day', week: 'the last 7 days', statement: 'the statement period (this month so far)', scenario: 'since the scenario started' };

async function draw(history, account, period) {
  const points = history.points;
  const label = accountLabel(account);
  const first = points[0];
  const last = points[points.length - 1];
  const summary =
    `${label}, ${PERIOD_NAMES[period]}: ${points.length} points from ${shortTime(history.from)} to ${shortTime(history.to)}. ` +
    `Current ${money(first.current, history.currency)} to ${money(last.current, history.currency)}; ` +
    `available ${money(first.available, history.currency)} to ${money(last.available, history.currency)}.` +
    (history.truncated ? ' Only the newest changes are shown.' : '');
  $('#balance-note').textContent = summary;
  drawTable(history);

  const container = $('#balance-chart');
  container.setAttribute('aria-label', `Chart of the balances over time. ${summary} The same points are in the table below.`);
  const uPlot = await loadUPlot();
  if (!uPlot) {
    replace(container, h('p', { class: 'muted', text: 'The chart library is not installed; the table below has the points.' }));
    container.dataset.points = '0';
    return;
  }
  const data = [points.map((point) => Date.parse(point.at) / 1000), points.map((point) => Number(point.current)), points.map((point) => Number(point.available))];
  const target = `${history.accountId}|${period}`;
  if (chart && chartFor === target) {
    chart.setData(data);
  } else {
    chart?.destroy();
    replace(container);
    chartFor = target;
    const text = getComputedStyle(document.body).color;
    const grid = getComputedStyle(document.documentElement).getPropertyValue('--border').trim() || '#ccc';
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    chart = new uPlot(
      {
        width: Math.max(260, container.clientWidth),
        height: HEIGHT,
        scales: { x: { time: true } },
        // emulated time is UTC everywhere on the page
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        axes: [axis, { ...axis, size: 70 }],
        legend: { live: true },
        series: [
          { label: 'Emulated time (UTC)' },
          { label: `current (${history.currency})`, stroke: '#2456c7', width: 2, paths: uPlot.paths.stepped({ align: 1 }), points: { show: true, size: 5 } },
          { label: `available (${history.currency})`, stroke: '#c25e00', width: 2, dash: [6, 4], paths: uPlot.paths.stepped({ align: 1 }), points: { show: true, size: 5 } },
        ],
      },
      data,
      container,
    );
  }
  // read back from the chart itself: what the browser test counts
  container.dataset.points = String(chart.data[0].length);
}

function drawTable(history) {
  replace(
    $('#balance-table'),
    h('caption', { class: 'visually-hidden', text: `Balances of ${history.accountId} over emulated time` }),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Emulated time (UTC)' }), h('th', { scope: 'col', text: 'current' }), h('th', { scope: 'col', text: 'available' }), h('th', { scope: 'col', text: 'held (available − current)' }))),
    h(
      'tbody',
      {},
      history.points.map((point) => {
        const held = (Number(point.available) - Number(point.current)).toFixed(Math.max(decimals(point.current), decimals(point.available)));
        return h(
          'tr',
          {},
          h('td', {}, h('time', { datetime: point.at, text: shortTime(point.at) })),
          h('td', { class: 'num', text: money(point.current, history.currency) }),
          h('td', { class: 'num', text: money(point.available, history.currency) }),
          h('td', { class: 'num', text: held === '0' || Number(held) === 0 ? '' : money(held, history.currency) }),
        );
      }),
    ),
  );
  $('#balance-table-summary').textContent = `Table of the ${history.points.length} points`;
}

const decimals = (amount) => (String(amount).split('.')[1] ?? '').length;

export function initBalances() {
  const redraw = () => {
    drawnKey = '';
    void refresh();
  };
  $('#balance-account').addEventListener('change', redraw);
  $('#balance-period').addEventListener('change', redraw);
  let resizeTimer = null;
  addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => chart?.setSize({ width: Math.max(260, $('#balance-chart').clientWidth), height: HEIGHT }), 150);
  });
}
