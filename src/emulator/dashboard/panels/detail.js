// Panel "Transaction detail": the selected transaction's summary and full JSON, a form to force its status
// (POST /_emulator/transactions/{id}/status), and its webhook deliveries (deliveries.js). The feed brings
// the selected transaction along (GET /_emulator/ui/state?selected=).

import { call } from '../api.js';
import { $, chip, errorNodes, h, replace, setResult, summaryRow } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { accountLabel, money, shortTime, transactionNote } from '../format.js';
import { formValues, submitting } from '../forms.js';
import { state } from '../state.js';
import { renderDeliveries } from './deliveries.js';
import { renderStory } from './story.js';
import { focusTransaction, markSelected } from './transactions.js';

/** Open a transaction's detail and story; `focus: false` (the guided demo) leaves the focus and the scroll alone. */
export function selectTransaction(id, { focus = true } = {}) {
  state.selectedId = id;
  state.detailKey = '';
  state.deliveriesKey = '';
  state.storyKey = '';
  markSelected(id);
  const panel = $('#detail');
  panel.hidden = false;
  $('#detail-heading').textContent = `Transaction ${id}`;
  replace($('#detail-summary'), summaryRow('Loading', '…'));
  replace($('#deliveries'));
  replace($('#story'));
  $('#detail-json').textContent = '';
  setResult($('#status-form [data-result]'), 'idle');
  refreshSoon();
  if (!focus) return;
  panel.scrollIntoView({ block: 'nearest', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  $('#detail-heading').focus({ preventScroll: true });
}

export function closeDetail() {
  state.selectedId = null;
  $('#detail').hidden = true;
  markSelected(null);
}

/** The selected transaction's detail and deliveries, from the feed; redrawn only when they changed. */
export function renderSelected(selected) {
  const detail = selected.detail;
  // names in the summary come from the overview, so a renamed user or account redraws it too
  const detailKey = detail
    ? [detail.transaction.id, detail.transaction.updatedAt, state.users.get(detail.userId)?.user.name, state.accounts.get(detail.accountId)?.account.displayName].join('|')
    : `missing|${selected.id}`;
  if (detailKey !== state.detailKey) {
    state.detailKey = detailKey;
    renderDetail(selected.id, detail);
  }
  const deliveriesKey = JSON.stringify(selected.deliveries);
  if (deliveriesKey !== state.deliveriesKey) {
    state.deliveriesKey = deliveriesKey;
    renderDeliveries($('#deliveries'), selected.deliveries, selected.id);
  }
  const storyKey = JSON.stringify([selected.story, selected.deliveries.map((delivery) => [delivery.status, delivery.nextAttemptAt, delivery.attempts])]);
  if (storyKey !== state.storyKey) {
    state.storyKey = storyKey;
    renderStory($('#story'), selected.story ?? null, selected.deliveries);
  }
}

function renderDetail(id, detail) {
  if (!detail) {
    replace($('#detail-summary'), summaryRow('Not found', `No transaction ${id} (the emulator may have been reset).`));
    $('#detail-json').textContent = '';
    return;
  }
  const { transaction: txn, userId, programmeId, accountId } = detail;
  const owner = state.users.get(userId);
  const account = state.accounts.get(accountId);
  replace(
    $('#detail-summary'),
    summaryRow('Status', chip(txn.status), txn.statusCode ? ` ${txn.statusCode}` : '', txn.statusReason ? ` · ${txn.statusReason}` : ''),
    summaryRow('Type', txn.type, txn.category ? ` · ${txn.category}` : ''),
    summaryRow('Debit', money(txn.debitAmount, txn.debitCurrency), txn.debitRail ? ` via ${txn.debitRail}` : ''),
    summaryRow('Credit', money(txn.creditAmount, txn.creditCurrency), txn.creditRail ? ` via ${txn.creditRail}` : ''),
    txn.fees.length > 0 ? summaryRow('Fees', txn.fees.map((fee) => `${fee.label} ${money(fee.amount, fee.currency)}`).join(', ')) : null,
    transactionNote(txn) ? summaryRow('Details', transactionNote(txn)) : null,
    summaryRow('User', owner ? owner.user.name : userId, ' ', h('code', { text: userId }), ` · ${programmeId}`),
    summaryRow('Account', account ? accountLabel(account.account) : accountId, ' ', h('code', { text: accountId })),
    summaryRow('Reference', h('code', { text: txn.referenceNumber })),
    summaryRow('Created', shortTime(txn.createdAt)),
    summaryRow('Updated', shortTime(txn.updatedAt)),
    txn.completedAt ? summaryRow('Completed', shortTime(txn.completedAt)) : null,
    txn.relatedTransactionId
      ? summaryRow('Related', h('button', { type: 'button', class: 'link', text: txn.relatedTransactionId, on: { click: () => selectTransaction(txn.relatedTransactionId) } }))
      : null,
  );
  $('#detail-json').textContent = JSON.stringify(detail, null, 2);
}

export function initDetail() {
  $('#detail-close').addEventListener('click', () => {
    const id = state.selectedId;
    closeDetail();
    focusTransaction(id);
  });

  $('#status-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const id = state.selectedId;
    if (!id) return;
    void submitting(form, async (result) => {
      const values = formValues(form);
      const body = { status: values.status };
      if (values.statusCode) body.statusCode = values.statusCode;
      const response = await call('POST', `/_emulator/transactions/${encodeURIComponent(id)}/status`, body);
      if (response.status === 404 && response.body?.message?.startsWith('No route')) {
        return setResult(result, 'error', 'This server has no status endpoint (POST /_emulator/transactions/{id}/status).');
      }
      if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
      setResult(result, 'ok', `Status forced to ${values.status}.`);
      refreshSoon();
    });
  });
}
