// Playing a scenario (docs/dashboard.md#run-a-demo). The top bar lists the scenarios the server knows
// (GET /_emulator/scenarios: the shipped ones, the guided demo first, and those of --scenarios DIR); "Run a demo"
// creates a fresh session from the chosen one (POST /_emulator/sessions { scenario }: a whole sandbox of its own with
// the scenario's seed, clock and `given`, so nothing the user has is touched) and opens that session's dashboard at
// #demo. There this module plays it: it reads the play (GET /_emulator/scenario: the steps and captions are
// server-side), asks the server to play one step at a time (POST /_emulator/scenario/steps/{n}), shows each step's
// caption prominently (an aria-live region) and its note, and points the journey, the balance chart (the scenario's
// window, from the instant it started) and the transaction story at what the step made. Previous shows an earlier
// step's outcome again (time and data do not go back); Next comes forward again, then plays the next step.
// Auto-advance: a pause of `pace` ms after each step (default 7 s, `#demo&pace=<ms>` in the URL); Pause / Continue,
// Previous, Next step and Skip to the end are buttons.

import { ROOT, call } from '../api.js';
import { $, errorNodes, h, replace, setResult } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { state } from '../state.js';
import { showScenarioWindow } from './balances.js';

const DEFAULT_PACE_MS = 7000;

let play = null;
let pace = DEFAULT_PACE_MS;
let paused = false;
let skipping = false;
let running = false;
let timer = null;
/** The step shown while looking back (Previous); null: the latest. */
let viewing = null;
/** What the last steps asked the views to show, applied once the feed has the user and account. */
const pending = { userId: null, accountId: null };
let views = { select: () => {}, showJourney: () => {} };

/** The demo's options from the URL's hash: `#demo`, `#demo&pace=1500`, `#pace=1500&scenario=name` (the root page). */
function hashOptions() {
  const params = new URLSearchParams(location.hash.slice(1));
  const asked = Number(params.get('pace'));
  return {
    demo: params.has('demo'),
    pace: Number.isFinite(asked) && asked >= 0 && params.has('pace') ? Math.min(asked, 60_000) : null,
    scenario: params.get('scenario'),
  };
}

/** The scenarios to choose from; a broken file is listed disabled, its error as its title. */
async function listScenarios() {
  const select = $('#demo-scenario');
  const response = await call('GET', '/_emulator/scenarios');
  if (!response.ok || !Array.isArray(response.body?.data)) return;
  const wanted = hashOptions().scenario ?? select.value;
  const entries = [...response.body.data].sort((a, b) => (a.name === 'demo' ? -1 : b.name === 'demo' ? 1 : 0));
  replace(
    select,
    entries.map((entry) =>
      h('option', {
        value: entry.name,
        disabled: entry.error !== null,
        title: entry.error ? `${entry.file}${entry.error.line ? `:${entry.error.line}:${entry.error.column}` : ''}: ${entry.error.message}` : (entry.description ?? entry.file),
        text: `${entry.name}${entry.source === 'folder' ? ' (yours)' : ''}${entry.error ? ' (broken)' : ''}`,
        dataset: { source: entry.source, steps: String(entry.steps ?? '') },
      }),
    ),
  );
  if (entries.some((entry) => entry.name === wanted && entry.error === null)) select.value = wanted;
}

async function startInNewSession() {
  const button = $('#demo-start');
  const result = $('#demo-start-result');
  const scenario = $('#demo-scenario').value || 'demo';
  button.disabled = true;
  setResult(result, 'pending', `Creating a fresh session for ${scenario}…`);
  try {
    // the scenario's seed makes every run draw the same ids (docs/sessions.md#ids); label: ended together
    const response = await call('POST', '/_emulator/sessions', { scenario, label: 'demo' });
    if (!response.ok) {
      setResult(result, 'error', `Could not create a session for ${scenario}: `, ...errorNodes(response.status, response.body));
      return;
    }
    const options = hashOptions();
    const hash = options.pace === null ? '#demo' : `#demo&pace=${options.pace}`;
    location.assign(`${ROOT}/_sessions/${encodeURIComponent(response.body.id)}/_emulator/ui${hash}`);
  } catch (error) {
    setResult(result, 'error', `Could not reach the server: ${error.message}`);
  } finally {
    button.disabled = false;
  }
}

function drawSteps() {
  replace(
    $('#demo-steps'),
    play.steps.map((step) =>
      h(
        'li',
        {
          dataset: { number: String(step.number), done: String(step.done), passed: String(step.passed) },
          class: step.passed === false ? 'demo-step demo-step-failed' : step.done ? 'demo-step demo-step-done' : 'demo-step',
        },
        h('span', { class: 'demo-step-caption', text: step.caption ?? `Step ${step.number}` }),
        step.summary ? h('span', { class: 'muted small demo-step-summary', text: ` ${step.summary}` }) : null,
      ),
    ),
  );
  const panel = $('#demo-panel');
  panel.dataset.completed = String(play.completed);
  panel.dataset.finished = String(play.finished);
  panel.dataset.failed = String(play.failed !== null);
  panel.dataset.scenario = play.name;
  $('#demo-title').textContent = play.name === 'demo' ? 'Guided demo' : `Scenario ${play.name}`;
  $('#demo-progress').textContent = play.failed
    ? `stopped at step ${play.failed.step} of ${play.steps.length}`
    : play.finished
      ? `finished: all ${play.steps.length} steps`
      : `${play.completed} of ${play.steps.length} steps done`;
  const looking = viewing !== null;
  $('#demo-pause').disabled = play.finished;
  $('#demo-next').disabled = play.finished && !looking;
  $('#demo-skip').disabled = play.finished;
  $('#demo-previous').disabled = (viewing ?? play.completed) <= 1;
}

function showCaption(text, kind = 'step') {
  const caption = $('#demo-caption');
  caption.textContent = text;
  caption.dataset.kind = kind;
}

function showNote(note) {
  const element = $('#demo-note');
  element.textContent = note ?? '';
  element.hidden = !note;
}

/** Point the journey and the balance chart at the scenario's user and account, once the page knows them. */
export function applyDemoViews() {
  if (pending.userId && state.users.has(pending.userId)) {
    if (state.journeyUser !== pending.userId) views.showJourney(pending.userId);
    pending.userId = null;
  }
  const account = $('#balance-account');
  if (pending.accountId && [...account.options].some((option) => option.value === pending.accountId)) {
    if (account.value !== pending.accountId) {
      account.value = pending.accountId;
      account.dispatchEvent(new Event('change'));
    }
    pending.accountId = null;
  }
}

function followViews(step) {
  if (play.userId) pending.userId = play.userId;
  if (play.accountId) pending.accountId = play.accountId;
  applyDemoViews();
  if (step?.transactionId) views.select(step.transactionId, { focus: false });
}

function showEnd() {
  if (play.failed) {
    const where = play.failed.line ? ` (line ${play.failed.line}, column ${play.failed.column})` : '';
    showCaption(`Stopped at step ${play.failed.step}: ${play.failed.message}${where}`, 'failed');
  } else {
    showCaption(`Done: all ${play.steps.length} steps of ${play.name === 'demo' ? 'the guided demo' : play.name} ran.${play.description ? ` ${play.description}` : ''}`, 'done');
  }
  showNote(null);
}

/** Show step `number` as it ran: its caption, note and outcome (Previous / Next while looking back). */
function showStep(number) {
  const step = play.steps[number - 1];
  const latest = number === play.completed;
  showCaption(`Step ${number} of ${play.steps.length}${latest ? '' : ' (earlier)'}: ${step.caption ?? ''}`, latest ? 'step' : 'earlier');
  showNote(step.note);
  $('#demo-summary').textContent = step.summary ?? '';
  followViews(step);
}

function schedule() {
  clearTimeout(timer);
  timer = null;
  if (!play || play.finished || paused || running || viewing !== null) return;
  timer = setTimeout(() => void runNext(), skipping ? 0 : pace);
}

async function runNext() {
  if (!play || running) return;
  if (viewing !== null) {
    // looking back: Next comes forward one step first
    viewing = viewing + 1 >= play.completed ? null : viewing + 1;
    showStep(viewing ?? play.completed);
    if (viewing === null && play.finished) showEnd();
    drawSteps();
    return;
  }
  if (play.finished) return;
  clearTimeout(timer);
  timer = null;
  running = true;
  const number = play.next;
  const step = play.steps[number - 1];
  showCaption(`Step ${number} of ${play.steps.length}: ${step.caption ?? ''}`);
  showNote(step.note);
  $('#demo-summary').textContent = 'Running…';
  try {
    const response = await call('POST', `/_emulator/scenario/steps/${number}`);
    if (!response.ok) {
      paused = true;
      $('#demo-pause').textContent = 'Continue';
      setResult($('#demo-error'), 'error', ...errorNodes(response.status, response.body));
      $('#demo-summary').textContent = 'Paused; press Continue or Next step to try this step again.';
      // the server's progress is the truth: read it again (another tab may have run the step)
      const fresh = await call('GET', '/_emulator/scenario');
      if (fresh.ok) {
        play = fresh.body;
        drawSteps();
      }
      return;
    }
    setResult($('#demo-error'), 'idle');
    play = response.body.scenario;
    drawSteps();
    $('#demo-summary').textContent = response.body.step.summary ?? '';
    followViews(response.body.step);
    refreshSoon();
    if (play.finished) {
      skipping = false;
      showEnd();
    }
  } catch (error) {
    paused = true;
    $('#demo-pause').textContent = 'Continue';
    setResult($('#demo-error'), 'error', `Could not reach the server: ${error.message}`);
  } finally {
    running = false;
  }
  schedule();
}

function previous() {
  if (!play || running) return;
  const from = viewing ?? play.completed;
  if (from <= 1) return;
  paused = true;
  $('#demo-pause').textContent = 'Continue';
  clearTimeout(timer);
  viewing = from - 1;
  showStep(viewing);
  drawSteps();
}

async function openDemo() {
  const options = hashOptions();
  if (!options.demo) return;
  if (options.pace !== null) pace = options.pace;
  $('#demo-panel').hidden = false;
  showCaption('Preparing the scenario…', 'intro');
  const response = await call('GET', '/_emulator/scenario');
  if (!response.ok) {
    setResult($('#demo-error'), 'error', ...errorNodes(response.status, response.body));
    return;
  }
  play = response.body;
  drawSteps();
  showScenarioWindow(play.startedAt);
  followViews(null);
  if (play.finished) {
    showEnd();
    if (!play.failed) showCaption(`This sandbox has played the whole of ${play.name}. Reset it, or press "Run a demo" for a fresh session.`, 'done');
    return;
  }
  showCaption(`A ${play.steps.length}-step ${play.name === 'demo' ? 'tour' : `scenario, ${play.name}`}: ${play.steps[0].caption ?? play.description ?? ''}…`, 'intro');
  void runNext();
}

/** `select(id, { focus })` opens a transaction's story; `showJourney(userId)` shows a user's journey. */
export function initDemo({ select, showJourney }) {
  views = { select, showJourney };
  $('#demo-start').addEventListener('click', () => void startInNewSession());
  $('#demo-pause').addEventListener('click', (event) => {
    paused = !paused;
    event.currentTarget.textContent = paused ? 'Continue' : 'Pause';
    if (paused) {
      clearTimeout(timer);
      timer = null;
    } else {
      if (viewing !== null) {
        viewing = null;
        showStep(play.completed);
        drawSteps();
      }
      void runNext();
    }
  });
  $('#demo-previous').addEventListener('click', previous);
  $('#demo-next').addEventListener('click', () => void runNext());
  $('#demo-skip').addEventListener('click', () => {
    skipping = true;
    paused = false;
    viewing = null;
    $('#demo-pause').textContent = 'Pause';
    void runNext();
  });
  void listScenarios();
  void openDemo();
}
