// Values as the dashboard writes them: amounts, times, account labels and one-line transaction summaries.
// Pure functions of their arguments (no DOM, no state).

/** 1234567.5 -> "1,234,567.5" without turning the decimal string into a float. */
function groupDigits(amount) {
  const [whole, fraction] = String(amount).split('.');
  const negative = whole.startsWith('-');
  const digits = negative ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

export const money = (amount, currency) => `${groupDigits(amount)} ${currency}`;
export const shortTime = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

export const accountLabel = (account) =>
  account.displayName && account.displayName.includes(account.currency) ? account.displayName : `${account.displayName ?? account.id} (${account.currency})`;

export function transactionAmount(txn) {
  return txn.type === 'DEPOSIT' ? money(txn.creditAmount, txn.creditCurrency) : money(txn.debitAmount, txn.debitCurrency);
}

export function transactionNote(txn) {
  const payer = txn.debitParty?.payer?.displayName;
  const beneficiary = txn.creditParty?.beneficiary?.business?.name ?? txn.creditParty?.beneficiary?.person?.name;
  return [payer ? `from ${payer}` : null, beneficiary ? `to ${beneficiary}` : null, txn.debitReference ?? txn.debitMemo ?? null, txn.category]
    .filter(Boolean)
    .join(' · ');
}
