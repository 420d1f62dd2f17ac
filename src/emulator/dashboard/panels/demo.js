// The guided demo (docs/dashboard.md#run-a-demo). "Run a demo" in the top bar creates a fresh session
// (POST /_emulator/sessions on the root: a whole sandbox of its own, so nothing the user has is touched) and opens that
// session's dashboard at #demo. There this module runs the demo: it reads the script (GET /_emulator/demo: the steps
// and their captions are server-side data), then asks the server to run one step at a time
// (POST /_emulator/demo/steps/{n}), shows each step's caption prominently (an aria-live region), and points the
// journey, the balance chart and the transaction story at what the step made. The other panels update through the
// live feed as usual. Auto-advance: a pause of `pace` ms after each step (default 7 s, `#demo&pace=<ms>` in the URL);
// Pause / Continue, Next step and Skip to the end are buttons.

import { ROOT, call } from '../api.js';
import { $, errorNodes, h, replace, setResult } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { state } from '../state.js';

const DEFAULT_PACE_MS = 7000;

let script = null;
let pace = DEFAULT_PACE_MS;
let paused = false;
let skipping = false;
let running = false;
let timer = null;
/** What the last steps asked the views to show, applied once the feed has the user and account. */
const pending = { userId: null, accountId: null };
let views = { select: () => {}, showJourney: () => {} };

/** The demo's options from the URL's hash: `#demo`, `#demo&pace=1500`. */
function hashOptions() {
  const params = new URLSearchParams(location.hash.slice(1));
  const asked = Number(params.get('pace'));
  return { demo: params.has('demo'), pace: Number.isFinite(asked) && asked >= 0 && params.has('pace') ? Math.min(asked, 60_000) : null };
}

async function startInNewSession() {
  const button = $('#demo-start');
  const result = $('#demo-start-result');
  button.disabled = true;
  setResult(result, 'pending', 'Creating a fresh session for the demo…');
  try {
    // seed: every demo session draws the same ids (docs/dashboard.md#run-a-demo, docs/sessions.md#ids); label: ended together
    const response = await call('POST', '/_emulator/sessions', { seed: 'demo', label: 'demo' });
    if (!response.ok) {
      setResult(result, 'error', 'Could not create a session for the demo: ', ...errorNodes(response.status, response.body));
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
    script.steps.map((step) =>
      h(
        'li',
        { dataset: { number: String(step.number), done: String(step.done) }, class: step.done ? 'demo-step demo-step-done' : 'demo-step' },
        h('span', { class: 'demo-step-caption', text: step.caption }),
        step.summary ? h('span', { class: 'muted small demo-step-summary', text: ` ${step.summary}` }) : null,
      ),
    ),
  );
  const panel = $('#demo-panel');
  panel.dataset.completed = String(script.completed);
  panel.dataset.finished = String(script.finished);
  $('#demo-progress').textContent = script.finished ? `finished: all ${script.steps.length} steps` : `${script.completed} of ${script.steps.length} steps done`;
  $('#demo-pause').disabled = script.finished;
  $('#demo-next').disabled = script.finished;
  $('#demo-skip').disabled = script.finished;
}

function showCaption(text, kind = 'step') {
  const caption = $('#demo-caption');
  caption.textContent = text;
  caption.dataset.kind = kind;
}

/** Point the journey and the balance chart at the demo's business and account, once the page knows them. */
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

function schedule() {
  clearTimeout(timer);
  timer = null;
  if (!script || script.finished || paused || running) return;
  timer = setTimeout(() => void runNext(), skipping ? 0 : pace);
}

async function runNext() {
  if (!script || script.finished || running) return;
  clearTimeout(timer);
  timer = null;
  running = true;
  const number = script.next;
  const step = script.steps[number - 1];
  showCaption(`Step ${number} of ${script.steps.length}: ${step.caption}`);
  $('#demo-summary').textContent = 'Running…';
  try {
    const response = await call('POST', `/_emulator/demo/steps/${number}`);
    if (!response.ok) {
      paused = true;
      $('#demo-pause').textContent = 'Continue';
      setResult($('#demo-error'), 'error', ...errorNodes(response.status, response.body));
      $('#demo-summary').textContent = 'The demo is paused; press Continue or Next step to try this step again.';
      // the server's progress is the truth: read it again (another tab may have run the step)
      const fresh = await call('GET', '/_emulator/demo');
      if (fresh.ok) {
        script = fresh.body;
        drawSteps();
      }
      return;
    }
    setResult($('#demo-error'), 'idle');
    script = response.body.demo;
    drawSteps();
    $('#demo-summary').textContent = response.body.step.summary ?? '';
    if (script.userId) pending.userId = script.userId;
    if (script.accountId) pending.accountId = script.accountId;
    applyDemoViews();
    if (response.body.step.transactionId) views.select(response.body.step.transactionId, { focus: false });
    refreshSoon();
    if (script.finished) {
      skipping = false;
      showCaption('Done: Northwind Traders was onboarded, got paid, paid its supplier by pacs.008, saw a payout fail and refunded a customer. Open any item of its journey for the story.', 'done');
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

async function openDemo() {
  const options = hashOptions();
  if (!options.demo) return;
  if (options.pace !== null) pace = options.pace;
  $('#demo-panel').hidden = false;
  showCaption('Preparing the demo…', 'intro');
  const response = await call('GET', '/_emulator/demo');
  if (!response.ok) {
    setResult($('#demo-error'), 'error', ...errorNodes(response.status, response.body));
    return;
  }
  script = response.body;
  drawSteps();
  if (script.finished) {
    showCaption('This sandbox has run the whole demo. Reset it, or press "Run a demo" for a fresh session.', 'done');
    return;
  }
  showCaption(`A ${script.steps.length}-step tour: ${script.steps[0].caption}…`, 'intro');
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
      void runNext();
    }
  });
  $('#demo-next').addEventListener('click', () => void runNext());
  $('#demo-skip').addEventListener('click', () => {
    skipping = true;
    paused = false;
    $('#demo-pause').textContent = 'Pause';
    void runNext();
  });
  void openDemo();
}
