// Panel "Transactions": the newest transactions of every programme (optionally of one user), newest first.
// Rows are kept and updated in place, so a focused row keeps its focus and a status change can flash.

import { $, h } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { shortTime, transactionAmount, transactionNote } from '../format.js';
import { fillSelect, userOptions } from '../forms.js';
import { state } from '../state.js';

/** transactionId -> { item, button, parts, status } of each row on screen. */
const transactionItems = new Map();
let onSelect = () => {};

function createTransactionItem(txn) {
  const parts = {
    time: h('time', { class: 'txn-time' }),
    type: h('span', { class: 'txn-type' }),
    amount: h('span', { class: 'txn-amount amount' }),
    status: h('span', { class: 'chip' }),
    who: h('span', { class: 'txn-who' }),
    note: h('span', { class: 'txn-note' }),
    id: h('code', { class: 'txn-id' }),
  };
  const button = h(
    'button',
    { type: 'button', class: 'txn', dataset: { id: txn.id }, on: { click: () => onSelect(txn.id) } },
    parts.time,
    parts.type,
    parts.amount,
    parts.status,
    parts.who,
    parts.note,
    parts.id,
  );
  const item = h('li', { dataset: { id: txn.id } }, button);
  return { item, button, parts, status: null };
}

function updateTransactionItem(entry, txn) {
  const owner = state.users.get(txn.userId);
  const account = state.accounts.get(txn.accountId);
  entry.parts.time.textContent = shortTime(txn.createdAt);
  entry.parts.time.setAttribute('datetime', txn.createdAt);
  entry.parts.type.textContent = txn.type;
  entry.parts.amount.textContent = transactionAmount(txn);
  entry.parts.who.textContent = [owner?.user.name ?? txn.userId, account ? account.account.displayName ?? account.account.id : txn.accountId].join(' · ');
  entry.parts.note.textContent = transactionNote(txn);
  entry.parts.id.textContent = txn.id;
  if (entry.status !== txn.status) {
    entry.parts.status.textContent = txn.status;
    entry.parts.status.className = `chip chip-${txn.status.toLowerCase()}`;
    entry.item.dataset.status = txn.status;
    // a short highlight when a row changes status under the user's eyes (not on first draw)
    if (entry.status !== null) {
      entry.item.classList.remove('changed');
      void entry.item.offsetWidth;
      entry.item.classList.add('changed');
    }
    entry.status = txn.status;
  }
  entry.button.setAttribute('aria-pressed', String(txn.id === state.selectedId));
  // No aria-label: the row's visible text is its accessible name, so what is read is what is seen (docs/dashboard.md#accessibility).
}

export function renderTransactions(transactions) {
  const list = $('#transactions');
  const seen = new Set();
  // Reuse each row and move only rows that are out of place, so a focused row keeps its focus.
  let cursor = list.firstChild;
  for (const txn of transactions) {
    seen.add(txn.id);
    let entry = transactionItems.get(txn.id);
    if (!entry) {
      entry = createTransactionItem(txn);
      transactionItems.set(txn.id, entry);
    }
    updateTransactionItem(entry, txn);
    if (entry.item === cursor) cursor = cursor.nextSibling;
    else list.insertBefore(entry.item, cursor);
  }
  for (const [id, entry] of transactionItems) {
    if (!seen.has(id)) {
      entry.item.remove();
      transactionItems.delete(id);
    }
  }
  $('#transactions-empty').hidden = transactions.length > 0;
}

/** Mark the row of the selected transaction as pressed (none when `id` is null). */
export function markSelected(id) {
  for (const entry of transactionItems.values()) entry.button.setAttribute('aria-pressed', String(entry.button.dataset.id === id));
}

/** Give the focus back to a transaction's row, when it is still on screen. */
export function focusTransaction(id) {
  transactionItems.get(id)?.button.focus();
}

/** The "Show" filter: all users or one. */
export function fillTransactionsFilter() {
  const filter = $('#transactions-filter');
  fillSelect(filter, [{ options: [{ value: '', label: 'all users' }, ...userOptions()] }], null);
  filter.value = state.userFilter;
}

/** `select(id)` opens a transaction's detail when its row is clicked. */
export function initTransactions({ select }) {
  onSelect = select;
  $('#transactions-filter').addEventListener('change', (event) => {
    state.userFilter = event.currentTarget.value;
    refreshSoon();
  });
}
