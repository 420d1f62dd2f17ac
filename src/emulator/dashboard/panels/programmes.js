// Panel "Programmes, users and accounts": every programme with its users, their top-level accounts with
// balances, and each account's deposit instructions.

import { $, chip, h, replace } from '../dom.js';
import { money } from '../format.js';

export function renderProgrammes(overview) {
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
