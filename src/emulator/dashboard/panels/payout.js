// Action "Make a payout or transfer": a transaction intent previewed (POST /v1/transaction-intents), then
// committed or canceled, as the debit account's user.

import { actAs } from '../api.js';
import { $, chip, errorNodes, h, setResult, summaryRow } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { accountLabel, money, shortTime } from '../format.js';
import { accountGroups, fillSelect, formValues, submitting } from '../forms.js';
import { state } from '../state.js';
import { selectTransaction } from './detail.js';

// Destinations are the user's other accounts (TRANSFER) and its beneficiaries' instruments (WITHDRAWAL).
// Beneficiaries are read (through act-as, so they show in the journal) only while the payout form is open
// and only when the chosen account or the user's accounts change, not on every balance update.
let destinationsRequest = 0;
let destinationsKey = '';

/** The debit accounts, and their destinations when the form is open. */
export function fillPayoutChoices() {
  fillSelect($('#payout-account'), accountGroups(), null);
  refreshPayoutDestinations();
}

/** Re-read the destinations when the chosen account changed, or always with `force` (a new beneficiary). */
export function refreshPayoutDestinations(force = false) {
  if (!$('#payout-details').open) return;
  const entry = state.accounts.get($('#payout-account').value);
  const key = entry ? `${entry.account.id}|${entry.user.accounts.map((account) => account.id).join(',')}` : '';
  if (!force && key === destinationsKey) return;
  destinationsKey = key;
  void fillPayoutDestinations();
}

async function fillPayoutDestinations() {
  const select = $('#payout-destination');
  const entry = state.accounts.get($('#payout-account').value);
  if (!entry) return fillSelect(select, [], 'Pick an account first');
  const ticket = ++destinationsRequest;
  const own = entry.user.accounts
    .filter((account) => account.id !== entry.account.id)
    .map((account) => ({ value: JSON.stringify({ instrumentType: 'ACCOUNT', accountId: account.id }), label: `Own account: ${accountLabel(account)}` }));
  const groups = [{ label: 'Transfer to own account', options: own }];
  fillSelect(select, groups, own.length === 0 ? 'Loading beneficiaries…' : null);
  let beneficiaries = [];
  try {
    const response = await actAs(entry.user.id, 'GET', '/v1/beneficiaries?pageSize=100');
    if (response.ok && Array.isArray(response.body?.data)) beneficiaries = response.body.data;
  } catch {
    // no beneficiaries endpoint or server unreachable: own accounts only
  }
  if (ticket !== destinationsRequest) return;
  const external = [];
  for (const beneficiary of beneficiaries) {
    const name = beneficiaryName(beneficiary);
    for (const instrument of beneficiary.instruments ?? []) {
      const detail = `${instrument.displayName ?? instrument.id} (${[instrument.currency, instrument.network].filter(Boolean).join(' on ')})`;
      external.push({
        value: JSON.stringify({
          instrumentType: instrument.type === 'WALLET' ? 'EXTERNAL_WALLET' : 'BANK_ACCOUNT',
          beneficiaryId: beneficiary.id,
          instrumentId: instrument.id,
        }),
        label: `${name}: ${detail}`,
      });
    }
  }
  if (external.length > 0) groups.push({ label: 'Pay out to a beneficiary', options: external });
  fillSelect(select, groups, own.length + external.length === 0 ? 'No destinations: add a beneficiary' : null);
}

function beneficiaryName(beneficiary) {
  return (
    beneficiary.displayName ??
    beneficiary.businessName ??
    ([beneficiary.firstName, beneficiary.lastName].filter(Boolean).join(' ') || beneficiary.id)
  );
}

function intentSummary(intent) {
  const fees = (intent.fees ?? []).map((fee) => `${fee.label ?? fee.type} ${money(fee.amount, fee.currency)}`).join(', ');
  return h(
    'dl',
    { class: 'summary' },
    summaryRow('Intent', h('code', { text: intent.id })),
    summaryRow('Status', chip(intent.status)),
    summaryRow('Type', intent.type),
    summaryRow('Debit', intent.debitAmount ? money(intent.debitAmount, intent.debitCurrency) : ''),
    summaryRow('Credit', intent.creditAmount ? money(intent.creditAmount, intent.creditCurrency) : ''),
    fees ? summaryRow('Fees', fees) : null,
    intent.exchangeRate ? summaryRow('Rate', intent.exchangeRate) : null,
    intent.expiresAt ? summaryRow('Expires', shortTime(intent.expiresAt)) : null,
    intent.statusReason ? summaryRow('Reason', intent.statusReason) : null,
  );
}

/** The intent preview with Commit (same idempotency key) and Cancel intent. */
function showIntent(result, userId, intent, idempotencyKey) {
  const commit = h('button', { type: 'button', class: 'primary', text: 'Commit' });
  const cancel = h('button', { type: 'button', text: 'Cancel intent' });
  const controls = h('div', { class: 'form-actions' }, commit, cancel);
  const disable = () => {
    commit.disabled = true;
    cancel.disabled = true;
  };
  commit.addEventListener('click', async () => {
    disable();
    const response = await actAs(userId, 'POST', `/v1/transaction-intents/${encodeURIComponent(intent.id)}/commit`, { idempotencyKey });
    if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
    const committed = response.body;
    const nodes = [h('p', { text: committed.status === 'COMMITTED' ? 'Committed.' : `Intent ${committed.status}.` }), intentSummary(committed)];
    if (committed.relatedTransactionId) {
      nodes.push(h('button', { type: 'button', text: 'Show its transaction', on: { click: () => selectTransaction(committed.relatedTransactionId) } }));
    }
    setResult(result, committed.status === 'COMMITTED' ? 'ok' : 'error', ...nodes);
    refreshSoon();
  });
  cancel.addEventListener('click', async () => {
    disable();
    const response = await actAs(userId, 'POST', `/v1/transaction-intents/${encodeURIComponent(intent.id)}/cancel`);
    if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
    setResult(result, 'ok', h('p', { text: 'Intent canceled.' }), intentSummary(response.body));
  });
  setResult(result, 'ok', h('p', { text: 'Preview: nothing moves until you commit.' }), intentSummary(intent), controls);
  commit.focus();
}

export function initPayout() {
  $('#payout-account').addEventListener('change', () => refreshPayoutDestinations());
  $('#payout-details').addEventListener('toggle', () => refreshPayoutDestinations());

  $('#payout-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    void submitting(form, async (result) => {
      const values = formValues(form);
      const entry = state.accounts.get(values.debitAccountId);
      if (!entry) return setResult(result, 'error', 'Pick an account first.');
      if (!values.destination) return setResult(result, 'error', 'Pick a destination (or add a beneficiary first).');
      const idempotencyKey = `dashboard-${crypto.randomUUID()}`;
      const body = { idempotencyKey, debitAccountId: entry.account.id, credit: JSON.parse(values.destination), [values.amountSide]: values.amount };
      if (values.debitMemo) body.debitMemo = values.debitMemo;
      const response = await actAs(entry.user.id, 'POST', '/v1/transaction-intents', body);
      if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
      showIntent(result, entry.user.id, response.body, idempotencyKey);
    });
  });
}
