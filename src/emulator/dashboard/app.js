// service-sandbox dashboard: one small ES module, no framework, no build step.
//
// Every value shown here can be user input (names, references, memos, bodies), so the DOM is built with
// createElement and textContent only; nothing with data goes through innerHTML. The page's Content
// Security Policy also forbids inline script, as a second line of defence.
//
// Data: GET /_emulator/ui/state (overview + clock + newest transactions) once a second; actions on the
// public API go through POST /_emulator/act-as, which signs them server-side for the chosen user.

const POLL_MS = 1000;
const JOURNAL_POLL_MS = 2000;
const TRANSACTIONS_LIMIT = 50;
const REQUEST_TIMEOUT_MS = 30_000;
const TOKEN_KEY = 'service-sandbox-admin-token';

const $ = (selector) => document.querySelector(selector);

// ---------------------------------------------------------------------------------------------- DOM

/** Build an element. Strings and numbers among children become text nodes: never parsed as HTML. */
function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key === 'text') element.textContent = String(value);
    else if (key === 'on') for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key.startsWith('on')) throw new Error('use the "on" property for listeners');
    else if (key in element && typeof value !== 'string') element[key] = value;
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

function chip(value, kind = String(value).toLowerCase()) {
  return h('span', { class: `chip chip-${kind.replace(/[^a-z0-9_-]/gi, '')}`, text: value });
}

/** 1234567.5 -> "1,234,567.5" without turning the decimal string into a float. */
function groupDigits(amount) {
  const [whole, fraction] = String(amount).split('.');
  const negative = whole.startsWith('-');
  const digits = negative ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

const money = (amount, currency) => `${groupDigits(amount)} ${currency}`;
const shortTime = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

/** replaceChildren that skips null/undefined/false (the DOM would print them as text). */
function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

function setResult(container, kind, ...content) {
  replace(container, ...content);
  container.className = `result result-${kind}`;
  container.setAttribute('role', kind === 'error' ? 'alert' : 'status');
}

/** The error body of interface 7.1 as readable nodes: message, then each validation error. */
function errorNodes(status, body) {
  const message = body && typeof body === 'object' && typeof body.message === 'string' ? body.message : typeof body === 'string' && body ? body : 'Request failed';
  const nodes = [h('p', {}, h('strong', { text: `${status}` }), ' ', message)];
  if (body && typeof body === 'object' && body.errorCode) nodes.push(h('p', { class: 'muted', text: `errorCode ${body.errorCode}` }));
  const list = body && typeof body === 'object' && Array.isArray(body.validationErrors) ? body.validationErrors : [];
  if (list.length > 0) {
    nodes.push(
      h(
        'ul',
        { class: 'validation' },
        list.map((item) => h('li', {}, item.fieldRef ? h('code', { text: item.fieldRef }) : null, item.fieldRef ? ' ' : '', `${item.type ?? ''}: ${item.message ?? ''}`)),
      ),
    );
  }
  return nodes;
}

// ---------------------------------------------------------------------------------------------- HTTP

let adminToken = sessionStorage.getItem(TOKEN_KEY);

async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (adminToken) headers['x-admin-token'] = adminToken;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (response.status === 401 && path.startsWith('/_emulator')) showTokenForm();
  return { status: response.status, ok: response.ok, body: parsed };
}

/** Call the public API as a user; the outcome has the status and body of the inner call. */
async function actAs(userId, method, path, body) {
  const outer = await call('POST', '/_emulator/act-as', body === undefined ? { userId, method, path } : { userId, method, path, body });
  if (!outer.ok) return outer;
  return { status: outer.body.status, ok: outer.body.status < 400, body: outer.body.body };
}

function showTokenForm() {
  $('#admin-token').hidden = false;
}

$('#admin-token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  adminToken = $('#admin-token-input').value;
  sessionStorage.setItem(TOKEN_KEY, adminToken);
  $('#admin-token').hidden = true;
  refreshSoon();
});

// ---------------------------------------------------------------------------------------------- state

const state = {
  overview: null,
  overviewKey: '',
  transactions: [],
  /** accountId -> { account, user, programme } */
  accounts: new Map(),
  /** userId -> { user, programme } */
  users: new Map(),
  selectedId: null,
  /** What the detail panel last drew, so an unchanged feed redraws nothing. */
  detailKey: '',
  deliveriesKey: '',
  userFilter: '',
};

let pollTimer = null;
let polling = false;
let pollAgain = false;

/** One feed request at a time; a refresh asked for meanwhile runs right after it. */
async function poll() {
  if (polling) {
    pollAgain = true;
    return;
  }
  clearTimeout(pollTimer);
  pollTimer = null;
  if (document.hidden) return;
  polling = true;
  try {
    const query = new URLSearchParams({ limit: String(TRANSACTIONS_LIMIT) });
    if (state.userFilter) query.set('userId', state.userFilter);
    if (state.selectedId) query.set('selected', state.selectedId);
    const response = await call('GET', `/_emulator/ui/state?${query}`);
    if (!response.ok) {
      setConnection('error', `Feed error ${response.status}: ${response.body?.message ?? ''}`);
    } else {
      setConnection('ok', 'Live');
      render(response.body);
    }
  } catch (error) {
    setConnection('error', `Server unreachable (${error.message}); retrying`);
  } finally {
    polling = false;
  }
  if (pollAgain) {
    pollAgain = false;
    return poll();
  }
  pollTimer = setTimeout(poll, POLL_MS);
}

function refreshSoon() {
  void poll();
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refreshSoon();
});

function setConnection(kind, text) {
  const element = $('#connection');
  // a live region: write only on change, or screen readers would repeat it every second
  if (element.textContent === text) return;
  element.textContent = text;
  element.className = `connection connection-${kind}`;
}

function render(feed) {
  $('#clock-now').textContent = shortTime(feed.clock.now);
  $('#clock-now').setAttribute('datetime', feed.clock.now);
  const mode = $('#clock-mode');
  mode.textContent = feed.clock.mode;
  mode.className = `chip chip-${feed.clock.mode}`;
  $('#clock-toggle').textContent = feed.clock.mode === 'frozen' ? 'Resume real time' : 'Freeze';
  $('#clock-toggle').dataset.mode = feed.clock.mode;

  // The overview changes rarely compared with the poll rate: redraw it (and the form choices) on change only.
  const { now: _now, ...stable } = feed.overview;
  const key = JSON.stringify(stable);
  if (key !== state.overviewKey) {
    state.overviewKey = key;
    state.overview = feed.overview;
    indexOverview(feed.overview);
    renderProgrammes(feed.overview);
    renderFormChoices();
  }
  state.transactions = feed.transactions;
  renderTransactions(feed.transactions);

  if (feed.selected && feed.selected.id === state.selectedId) renderSelected(feed.selected);
}

function indexOverview(overview) {
  state.accounts.clear();
  state.users.clear();
  for (const programme of overview.programmes) {
    for (const user of programme.users) {
      state.users.set(user.id, { user, programme });
      for (const account of user.accounts) state.accounts.set(account.id, { account, user, programme });
    }
  }
}

const accountLabel = (account) =>
  account.displayName && account.displayName.includes(account.currency) ? account.displayName : `${account.displayName ?? account.id} (${account.currency})`;

// ---------------------------------------------------------------------------------------------- overview

function renderProgrammes(overview) {
  const container = $('#programmes');
  if (overview.programmes.length === 0) {
    replace(container, h('p', { class: 'muted', text: 'No programmes in the fixtures.' }));
    return;
  }
  replace(container,
    ...overview.programmes.map((programme) =>
      h(
        'article',
        { class: 'programme' },
        h('h3', {}, programme.name, ' ', h('code', { text: programme.id })),
        h('p', { class: 'muted small', text: programme.webhookUrl ? `Webhooks to ${programme.webhookUrl}` : 'No webhook URL set' }),
        programme.users.length === 0 ? h('p', { class: 'muted', text: 'No users.' }) : null,
        programme.users.map(renderUser),
      ),
    ),
  );
}

function renderUser(user) {
  return h(
    'section',
    { class: 'user', dataset: { userId: user.id } },
    h(
      'div',
      { class: 'user-head' },
      h('h4', { class: 'user-name', text: user.name }),
      chip(user.type, 'type'),
      chip(user.enrollmentStatus),
      user.enrollmentStatusReason ? chip(user.enrollmentStatusReason, 'reason') : null,
    ),
    h(
      'p',
      { class: 'muted small' },
      h('code', { text: user.id }),
      ` · external id ${user.externalId}`,
      user.enrollmentStarted ? '' : ' · enrollment not started (not in GET /v1/users yet)',
    ),
    user.accounts.length === 0
      ? h('p', { class: 'muted small', text: 'No accounts.' })
      : h('ul', { class: 'accounts' }, user.accounts.map(renderAccount)),
  );
}

function renderAccount(account) {
  return h(
    'li',
    { class: 'account', dataset: { accountId: account.id } },
    h(
      'div',
      { class: 'account-head' },
      h('span', { class: 'account-name', text: account.displayName ?? account.id }),
      h('code', { class: 'small', text: account.id }),
      account.providerReady ? null : chip('provider not ready', 'warning'),
    ),
    h(
      'dl',
      { class: 'balances' },
      h('div', {}, h('dt', { text: 'Current' }), h('dd', { class: 'amount', dataset: { balance: 'current' }, text: money(account.balances.current, account.currency) })),
      h('div', {}, h('dt', { text: 'Available' }), h('dd', { class: 'amount', dataset: { balance: 'available' }, text: money(account.balances.available, account.currency) })),
    ),
    account.depositInstructions.length === 0
      ? h('p', { class: 'muted small', text: 'No deposit instructions.' })
      : h(
          'ul',
          { class: 'instructions', 'aria-label': 'Deposit instructions' },
          account.depositInstructions.map((instruction) =>
            h('li', {}, h('span', { text: instruction.rail.label }), ' ', chip(instruction.status), ' ', h('code', { class: 'small', text: instruction.id })),
          ),
        ),
  );
}

// ---------------------------------------------------------------------------------------------- forms

/** Replace a select's options, keeping the current choice when it still exists. */
function fillSelect(select, groups, placeholder) {
  const previous = select.value;
  const nodes = [];
  if (placeholder) nodes.push(h('option', { value: '', text: placeholder, disabled: true }));
  for (const group of groups) {
    const options = group.options.map((option) => h('option', { value: option.value, text: option.label, disabled: option.disabled }));
    nodes.push(group.label ? h('optgroup', { label: group.label }, options) : options);
  }
  select.replaceChildren(...nodes.flat());
  const values = [...select.options].filter((option) => !option.disabled).map((option) => option.value);
  select.value = values.includes(previous) ? previous : (values[0] ?? '');
}

function accountGroups(filter = () => true) {
  const groups = [];
  for (const { user, programme } of state.users.values()) {
    const options = user.accounts.filter(filter).map((account) => ({ value: account.id, label: accountLabel(account) }));
    if (options.length > 0) groups.push({ label: `${user.name} · ${programme.id}`, options });
  }
  return groups;
}

function renderFormChoices() {
  fillSelect($('#deposit-account'), accountGroups((account) => account.depositInstructions.length > 0), null);
  fillDepositInstructions();
  fillSelect($('#payout-account'), accountGroups(), null);
  refreshPayoutDestinations();
  const users = [...state.users.values()].map(({ user, programme }) => ({ value: user.id, label: `${user.name} (${user.type}) · ${programme.id}` }));
  fillSelect($('#beneficiary-user'), [{ options: users }], null);
  const filter = $('#transactions-filter');
  fillSelect(filter, [{ options: [{ value: '', label: 'all users' }, ...users] }], null);
  filter.value = state.userFilter;
}

function fillDepositInstructions() {
  const entry = state.accounts.get($('#deposit-account').value);
  const instructions = entry ? entry.account.depositInstructions : [];
  fillSelect(
    $('#deposit-instruction'),
    [{ options: instructions.map((instruction) => ({ value: instruction.id, label: `${instruction.rail.label} · ${instruction.name} · ${instruction.status}` })) }],
    instructions.length === 0 ? 'No instructions on this account' : null,
  );
}

$('#deposit-account').addEventListener('change', fillDepositInstructions);

function formValues(form) {
  const values = {};
  for (const [name, value] of new FormData(form)) values[name] = typeof value === 'string' ? value.trim() : value;
  return values;
}

/** Run an action with the form's button disabled; show what came back. */
async function submitting(form, action) {
  const button = form.querySelector('button[type="submit"]');
  const result = form.querySelector('[data-result]');
  button.disabled = true;
  setResult(result, 'pending', 'Working…');
  try {
    await action(result);
  } catch (error) {
    setResult(result, 'error', `Could not reach the server: ${error.message}`);
  } finally {
    button.disabled = false;
  }
}

$('#deposit-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  void submitting(form, async (result) => {
    const values = formValues(form);
    const entry = state.accounts.get(values.accountId);
    if (!entry) return setResult(result, 'error', 'Pick an account first.');
    const body = { depositInstructionId: values.depositInstructionId, amount: values.amount };
    if (values.reference) body.reference = values.reference;
    if (values.counterpartyName) body.counterpartyName = values.counterpartyName;
    const response = await actAs(entry.user.id, 'POST', `/v1/sandbox/accounts/${encodeURIComponent(entry.account.id)}/deposits`, body);
    if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
    setResult(
      result,
      'ok',
      `Accepted (${response.status}): ${money(values.amount, entry.account.currency)} into ${accountLabel(entry.account)}. `,
      response.body?.message ? `${response.body.message.replace(/\.?$/, '.')} ` : '',
      'Advance the clock to settle it.',
    );
    refreshSoon();
  });
});

// Payout: destinations are the user's other accounts (TRANSFER) and its beneficiaries' instruments (WITHDRAWAL).
// Beneficiaries are read (through act-as, so they show in the journal) only while the payout form is open
// and only when the chosen account or the user's accounts change, not on every balance update.
let destinationsRequest = 0;
let destinationsKey = '';

function refreshPayoutDestinations(force = false) {
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

$('#beneficiary-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  void submitting(form, async (result) => {
    const values = formValues(form);
    if (!values.userId) return setResult(result, 'error', 'Pick a user first.');
    const names = values.name.split(/\s+/);
    const body =
      values.type === 'BUSINESS'
        ? { type: 'BUSINESS', businessName: values.name }
        : { type: 'PERSON', firstName: names[0] ?? '', lastName: names.slice(1).join(' ') };
    body.instruments = [
      { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: values.name, accountNumber: values.accountNumber, routingNumber: values.routingNumber },
    ];
    const response = await actAs(values.userId, 'POST', '/v1/beneficiaries', body);
    if (!response.ok) return setResult(result, 'error', ...errorNodes(response.status, response.body));
    setResult(result, 'ok', `Beneficiary ${response.body?.id ?? ''} added; it is now a payout destination for this user.`);
    refreshPayoutDestinations(true);
  });
});

// ---------------------------------------------------------------------------------------------- clock

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

// Reset asks for a second click instead of a modal dialog.
let resetArmed = null;
$('#reset-button').addEventListener('click', async (event) => {
  const button = event.currentTarget;
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
});

// ---------------------------------------------------------------------------------------------- transactions

const transactionItems = new Map();

function transactionAmount(txn) {
  return txn.type === 'DEPOSIT' ? money(txn.creditAmount, txn.creditCurrency) : money(txn.debitAmount, txn.debitCurrency);
}

function transactionNote(txn) {
  const payer = txn.debitParty?.payer?.displayName;
  const beneficiary = txn.creditParty?.beneficiary?.business?.name ?? txn.creditParty?.beneficiary?.person?.name;
  return [payer ? `from ${payer}` : null, beneficiary ? `to ${beneficiary}` : null, txn.debitReference ?? txn.debitMemo ?? null, txn.category]
    .filter(Boolean)
    .join(' · ');
}

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
    { type: 'button', class: 'txn', dataset: { id: txn.id }, on: { click: () => selectTransaction(txn.id) } },
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
  entry.button.setAttribute('aria-label', `${txn.type} ${transactionAmount(txn)} ${txn.status}, ${shortTime(txn.createdAt)}`);
}

function renderTransactions(transactions) {
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

$('#transactions-filter').addEventListener('change', (event) => {
  state.userFilter = event.currentTarget.value;
  refreshSoon();
});

// ---------------------------------------------------------------------------------------------- detail

function selectTransaction(id) {
  state.selectedId = id;
  state.detailKey = '';
  state.deliveriesKey = '';
  for (const entry of transactionItems.values()) entry.button.setAttribute('aria-pressed', String(entry.button.dataset.id === id));
  const panel = $('#detail');
  panel.hidden = false;
  $('#detail-heading').textContent = `Transaction ${id}`;
  replace($('#detail-summary'), summaryRow('Loading', '…'));
  replace($('#deliveries'));
  $('#detail-json').textContent = '';
  setResult($('#status-form [data-result]'), 'idle');
  refreshSoon();
  panel.scrollIntoView({ block: 'nearest', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  $('#detail-heading').focus({ preventScroll: true });
}

function closeDetail() {
  state.selectedId = null;
  $('#detail').hidden = true;
  for (const entry of transactionItems.values()) entry.button.setAttribute('aria-pressed', 'false');
}

$('#detail-close').addEventListener('click', () => {
  const id = state.selectedId;
  closeDetail();
  transactionItems.get(id)?.button.focus();
});

function summaryRow(label, ...value) {
  return h('div', {}, h('dt', { text: label }), h('dd', {}, ...value));
}

/** The selected transaction's detail and deliveries, from the feed; redrawn only when they changed. */
function renderSelected(selected) {
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

// ---------------------------------------------------------------------------------------------- deliveries

function renderDeliveries(container, deliveries, transactionId) {
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

// ---------------------------------------------------------------------------------------------- journal

const journalItems = new Map();
let journalTimer = null;

async function loadJournal() {
  clearTimeout(journalTimer);
  const panel = $('#journal-panel');
  if (!panel.open) return;
  const query = new URLSearchParams({ limit: '100' });
  const prefix = $('#journal-prefix').value.trim();
  if (prefix.startsWith('/')) query.set('pathPrefix', prefix);
  let response;
  try {
    response = await call('GET', `/_emulator/requests?${query}`);
  } catch (error) {
    response = { status: 0, ok: false, body: { message: error.message } };
  }
  const note = $('#journal-note');
  if (response.status === 404) {
    note.textContent = 'This server has no request journal (GET /_emulator/requests).';
    $('#journal').replaceChildren();
    journalItems.clear();
    return;
  }
  if (!response.ok) {
    replace(note, ...errorNodes(response.status, response.body));
  } else {
    const entries = [...(response.body.data ?? [])].reverse();
    note.textContent = `${entries.length} newest request${entries.length === 1 ? '' : 's'} shown (journal keeps ${response.body.capacity ?? '?'}). The dashboard's own polling is not recorded.`;
    renderJournal(entries);
  }
  if (!document.hidden) journalTimer = setTimeout(() => void loadJournal(), JOURNAL_POLL_MS);
}

function renderJournal(entries) {
  const list = $('#journal');
  const seen = new Set();
  let cursor = list.firstChild;
  for (const entry of entries) {
    const key = String(entry.seq);
    seen.add(key);
    let item = journalItems.get(key);
    if (!item) {
      item = journalItem(entry);
      journalItems.set(key, item);
    }
    if (item === cursor) cursor = cursor.nextSibling;
    else list.insertBefore(item, cursor);
  }
  for (const [key, item] of journalItems) {
    if (!seen.has(key)) {
      item.remove();
      journalItems.delete(key);
    }
  }
}

function journalItem(entry) {
  const statusKind = entry.status >= 500 ? 'failed' : entry.status >= 400 ? 'warning' : 'completed';
  return h(
    'li',
    {},
    h(
      'details',
      {},
      h(
        'summary',
        { class: 'journal-line' },
        h('span', { class: 'journal-method', text: entry.method }),
        h('span', { class: 'journal-path', text: entry.query ? `${entry.path}?${entry.query}` : entry.path }),
        chip(String(entry.status), statusKind),
        h('span', { class: 'muted small', text: `${Number(entry.latencyMs).toFixed(1)} ms` }),
        h('span', { class: 'muted small', text: [entry.userId, entry.authMode].filter(Boolean).join(' · ') }),
        h('time', { class: 'muted small', datetime: entry.at, text: shortTime(entry.at) }),
      ),
      h('h4', { text: 'Request headers' }),
      h('pre', { class: 'json', text: JSON.stringify(entry.requestHeaders ?? {}, null, 2) }),
      h('h4', { text: 'Request body' }),
      h('pre', { class: 'json', text: entry.requestBody === null ? '(none)' : JSON.stringify(entry.requestBody, null, 2) }),
      h('h4', { text: 'Response body' }),
      h('pre', { class: 'json', text: entry.responseBody === null ? '(none)' : JSON.stringify(entry.responseBody, null, 2) }),
    ),
  );
}

$('#journal-panel').addEventListener('toggle', () => void loadJournal());
$('#journal-link').addEventListener('click', () => {
  $('#journal-panel').open = true;
});
$('#journal-prefix').addEventListener('input', () => {
  $('#journal').replaceChildren();
  journalItems.clear();
  void loadJournal();
});
$('#journal-clear').addEventListener('click', async () => {
  const response = await call('DELETE', '/_emulator/requests');
  if (!response.ok) {
    replace($('#journal-note'), ...errorNodes(response.status, response.body));
    return;
  }
  $('#journal').replaceChildren();
  journalItems.clear();
  void loadJournal();
});

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) void loadJournal();
});

// ---------------------------------------------------------------------------------------------- start

void poll();
