// What the action forms share: filling a select from the overview, reading a form, and running an action
// with its button disabled and its outcome shown in the form's result area.

import { h, setResult } from './dom.js';
import { accountLabel } from './format.js';
import { state } from './state.js';

/** Replace a select's options, keeping the current choice when it still exists. */
export function fillSelect(select, groups, placeholder) {
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

/** Every user's accounts (those `filter` keeps), one option group per user. */
export function accountGroups(filter = () => true) {
  const groups = [];
  for (const { user, programme } of state.users.values()) {
    const options = user.accounts.filter(filter).map((account) => ({ value: account.id, label: accountLabel(account) }));
    if (options.length > 0) groups.push({ label: `${user.name} · ${programme.id}`, options });
  }
  return groups;
}

/** Every user of every programme as select options. */
export function userOptions() {
  return [...state.users.values()].map(({ user, programme }) => ({ value: user.id, label: `${user.name} (${user.type}) · ${programme.id}` }));
}

export function formValues(form) {
  const values = {};
  for (const [name, value] of new FormData(form)) values[name] = typeof value === 'string' ? value.trim() : value;
  return values;
}

/** Run an action with the form's button disabled; show what came back. */
export async function submitting(form, action) {
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
