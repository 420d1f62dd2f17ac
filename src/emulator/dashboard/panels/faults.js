// Panel "Faults": the sandbox's fault rules from the live feed (feed.faults), a form to add one, a button per
// rule to remove it and one to clear them all; the top bar's indicator says how many are active, so a demo
// never forgets that faults are on (docs/dashboard.md#faults, docs/faults.md#fault-rules).

import { call } from '../api.js';
import { refreshSoon } from '../feed.js';
import { $, chip, errorNodes, h, replace, setResult } from '../dom.js';
import { formValues, submitting } from '../forms.js';

/** The effect choices of the form: what each option sends as `effect`. */
const EFFECTS = {
  'status-503': { type: 'status', status: 503 },
  'status-429': { type: 'status', status: 429 },
  'status-500': { type: 'status', status: 500 },
  'status-502': { type: 'status', status: 502 },
  'status-504': { type: 'status', status: 504 },
  latency: { type: 'latency' },
  drop: { type: 'drop' },
  'ambiguous-502': { type: 'ambiguous', status: 502 },
  'ambiguous-drop': { type: 'ambiguous' },
};

let shownKey = '';

/** Draw feed.faults: the rule list and the top bar's indicator (only on change). */
export function renderFaults(faults) {
  const rules = faults?.rules ?? [];
  const key = JSON.stringify(rules);
  if (key === shownKey) return;
  shownKey = key;
  const active = rules.filter((rule) => rule.active).length;
  const indicator = $('#faults-indicator');
  indicator.hidden = active === 0;
  indicator.textContent = `${active} fault rule${active === 1 ? '' : 's'} active`;
  $('#faults-empty').hidden = rules.length > 0;
  $('#faults-clear').disabled = rules.length === 0;
  replace($('#fault-rules'), ...rules.map(ruleItem));
}

function ruleItem(rule) {
  const counters = `matched ${rule.matched}, fired ${rule.fired}${rule.remaining === null ? '' : `, ${rule.remaining} left`}`;
  return h(
    'li',
    { class: 'fault-rule', dataset: { ruleId: rule.id } },
    h('span', { class: 'fault-id', text: rule.id }),
    chip(rule.active ? 'active' : 'spent', rule.active ? 'warning' : 'inactive'),
    h('span', { class: 'fault-text', text: `${describeMatch(rule.match)} → ${describeEffect(rule.effect)}${rule.probability === null ? '' : ` (p ${rule.probability})`}` }),
    h('span', { class: 'muted small', text: counters }),
    h('button', { type: 'button', class: 'compact', 'aria-label': `Remove fault rule ${rule.id}`, text: 'Remove', on: { click: () => removeRule(rule.id) } }),
  );
}

function describeMatch(match) {
  const parts = [match.method ?? 'any method', match.path ?? 'any path'];
  if (match.userId) parts.push(`user ${match.userId}`);
  if (match.body) parts.push(`body ${JSON.stringify(match.body)}`);
  if (match.bodyContains) parts.push(`body contains "${match.bodyContains}"`);
  return parts.join(' ');
}

function describeEffect(effect) {
  switch (effect.type) {
    case 'status':
      return `answer ${effect.status}`;
    case 'latency':
      return effect.ms !== undefined ? `+${effect.ms} ms` : `+${effect.minMs}-${effect.maxMs} ms`;
    case 'drop':
      return 'drop the connection';
    case 'ambiguous':
      return effect.status === undefined ? 'commit, then drop the connection' : `commit, then answer ${effect.status}`;
    default:
      return effect.type;
  }
}

async function removeRule(id) {
  const response = await call('DELETE', `/_emulator/faults/${encodeURIComponent(id)}`);
  if (!response.ok) replace($('#faults-note'), ...errorNodes(response.status, response.body));
  refreshSoon();
}

/** The form's values as the body of POST /_emulator/faults. */
function ruleBody(values) {
  const match = {};
  if (values.method) match.method = values.method;
  if (values.path) match.path = values.path;
  const effect = { ...EFFECTS[values.effect] };
  if (effect.type === 'latency') effect.ms = values.latencyMs === '' ? undefined : Number(values.latencyMs);
  const body = { match, effect };
  if (values.times !== '') body.times = Number(values.times);
  if (values.probability !== '') body.probability = Number(values.probability);
  return body;
}

export function initFaults() {
  const form = $('#fault-form');
  const syncLatency = () => {
    $('#fault-latency-row').hidden = form.elements.effect.value !== 'latency';
  };
  form.elements.effect.addEventListener('change', syncLatency);
  syncLatency();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, async (result) => {
      const response = await call('POST', '/_emulator/faults', ruleBody(formValues(form)));
      if (!response.ok) {
        setResult(result, 'error', ...errorNodes(response.status, response.body));
        return;
      }
      setResult(result, 'ok', `Added ${response.body.id}: ${describeMatch(response.body.match)} → ${describeEffect(response.body.effect)}`);
      refreshSoon();
    });
  });
  $('#faults-clear').addEventListener('click', async () => {
    const response = await call('DELETE', '/_emulator/faults');
    if (!response.ok) replace($('#faults-note'), ...errorNodes(response.status, response.body));
    else $('#faults-note').textContent = 'Every fault rule removed.';
    refreshSoon();
  });
  for (const link of ['#faults-indicator', '#faults-link']) {
    $(link).addEventListener('click', () => {
      $('#faults-panel').open = true;
    });
  }
}
