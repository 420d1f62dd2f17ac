// Panel "Faults": the sandbox's fault rules and webhook chaos from the live feed (feed.faults), a form to add a
// rule, a button per rule to remove it and one to clear them all, a form to turn a chaos kind on, a button per
// kind to turn it off and one to clear chaos; the top bar's indicator says what is on, so a demo never forgets
// that faults are on (docs/dashboard.md#faults, docs/faults.md).

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

/** The chaos kinds in the order the panel lists them, with their labels. */
const CHAOS_KINDS = {
  duplicate: 'Duplicate deliveries',
  reorder: 'Reorder a transaction\'s events',
  delay: 'Delay deliveries',
  staleTimestamp: 'Stale timestamp',
  futureTimestamp: 'Future timestamp',
  badSignature: 'Bad signature',
  burst: 'Burst',
};

let shownKey = '';
/** The chaos settings on screen, to build the next PUT from. */
let chaos = null;

/** Draw feed.faults: the rules, the chaos settings and the top bar's indicator (only on change). */
export function renderFaults(faults) {
  const rules = faults?.rules ?? [];
  const key = JSON.stringify(faults ?? null);
  if (key === shownKey) return;
  shownKey = key;
  chaos = faults?.chaos ?? null;
  const activeRules = rules.filter((rule) => rule.active).length;
  const chaosOn = chaosKindsOn(chaos);
  const indicator = $('#faults-indicator');
  const parts = [];
  if (activeRules > 0) parts.push(`${activeRules} fault rule${activeRules === 1 ? '' : 's'} active`);
  if (chaosOn.length > 0) parts.push(`webhook chaos on`);
  indicator.hidden = parts.length === 0;
  indicator.textContent = parts.join(' · ');
  $('#faults-empty').hidden = rules.length > 0;
  $('#faults-clear').disabled = rules.length === 0;
  replace($('#fault-rules'), ...rules.map(ruleItem));
  $('#chaos-empty').hidden = chaosOn.length > 0;
  $('#chaos-clear').disabled = chaosOn.length === 0;
  replace($('#chaos-kinds'), ...chaosOn.map((kind) => chaosItem(kind, chaos[kind])));
  $('#chaos-seed').textContent = chaos ? `seed ${chaos.seed}${chaos.heldNow > 0 ? ` · ${chaos.heldNow} held now` : ''}` : '';
}

function chaosKindsOn(view) {
  return view ? Object.keys(CHAOS_KINDS).filter((kind) => view[kind]) : [];
}

function chaosItem(kind, setting) {
  const mode = [setting.times !== null ? `next ${setting.times}` : null, setting.probability !== null ? `p ${setting.probability}` : null].filter(Boolean).join(', ') || 'every delivery';
  const counters = `fired ${setting.fired}${setting.remaining === null ? '' : `, ${setting.remaining} left`}`;
  return h(
    'li',
    { class: 'fault-rule', dataset: { chaosKind: kind } },
    h('span', { class: 'fault-id', text: kind }),
    chip(setting.remaining === 0 ? 'spent' : 'on', setting.remaining === 0 ? 'inactive' : 'warning'),
    h('span', { class: 'fault-text', text: `${CHAOS_KINDS[kind]}: ${mode}${kind === 'delay' ? ` (${setting.ms ?? `${setting.minMs}-${setting.maxMs}`} ms)` : ''}` }),
    h('span', { class: 'muted small', text: counters }),
    h('button', { type: 'button', class: 'compact', 'aria-label': `Turn off ${CHAOS_KINDS[kind]}`, text: 'Turn off', on: { click: () => void putChaos(kind, undefined) } }),
  );
}

/** A kind's view back as the body's setting: counters dropped, absent values left out. */
function settingOf(kind, view) {
  const { fired: _fired, remaining: _remaining, ...rest } = view;
  const out = {};
  for (const [field, value] of Object.entries(rest)) if (value !== null) out[field] = value;
  if (kind === 'delay' && out.ms !== undefined) {
    delete out.minMs;
    delete out.maxMs;
  }
  return out;
}

/** PUT the settings on screen with one kind changed (undefined: turned off); other kinds keep theirs. */
async function putChaos(kind, setting) {
  const body = chaos ? { seed: chaos.seed } : {};
  for (const other of chaosKindsOn(chaos)) if (other !== kind) body[other] = settingOf(other, chaos[other]);
  if (setting) body[kind] = setting;
  const response = await call('PUT', '/_emulator/webhooks/chaos', body);
  if (!response.ok) replace($('#chaos-note'), ...errorNodes(response.status, response.body));
  else $('#chaos-note').textContent = '';
  refreshSoon();
  return response;
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
  const chaosForm = $('#chaos-form');
  const syncDelay = () => {
    $('#chaos-delay-row').hidden = chaosForm.elements.kind.value !== 'delay';
  };
  chaosForm.elements.kind.addEventListener('change', syncDelay);
  syncDelay();
  chaosForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(chaosForm, async (result) => {
      const values = formValues(chaosForm);
      const setting = {};
      if (values.times !== '') setting.times = Number(values.times);
      if (values.probability !== '') setting.probability = Number(values.probability);
      if (values.kind === 'delay') setting.ms = values.delayMs === '' ? undefined : Number(values.delayMs);
      const response = await putChaos(values.kind, setting);
      if (!response.ok) setResult(result, 'error', ...errorNodes(response.status, response.body));
      else setResult(result, 'ok', `${CHAOS_KINDS[values.kind]} on`);
    });
  });
  $('#chaos-clear').addEventListener('click', async () => {
    const response = await call('DELETE', '/_emulator/webhooks/chaos');
    if (!response.ok) replace($('#chaos-note'), ...errorNodes(response.status, response.body));
    else $('#chaos-note').textContent = 'Webhook chaos off.';
    refreshSoon();
  });
  for (const link of ['#faults-indicator', '#faults-link']) {
    $(link).addEventListener('click', () => {
      $('#faults-panel').open = true;
    });
  }
}
