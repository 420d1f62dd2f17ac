// service-sandbox dashboard: the entry module. Native ES modules, no framework, no build step; the server
// serves every .js and .css file of this folder as it is (docs/dashboard.md#how-the-page-is-built).
//
// This file only wires the parts together: each panel's module (panels/) binds its own listeners in its
// init function, and render() below hands each answer of the live feed (feed.js) to the panels that draw it.
// Shared parts: dom.js (safe element building), format.js (amounts, times), api.js (fetch, admin token,
// act-as), state.js (what the panels share), forms.js (what the action forms share).

import { initAdminToken } from './api.js';
import { refreshSoon, startFeed } from './feed.js';
import { indexOverview, state } from './state.js';
import { fillBalanceChoices, initBalances, renderBalances } from './panels/balances.js';
import { fillBeneficiaryChoices, initBeneficiary } from './panels/beneficiary.js';
import { initClock, renderClock } from './panels/clock.js';
import { applyDemoViews, initDemo } from './panels/demo.js';
import { fillDepositChoices, initDeposit } from './panels/deposit.js';
import { initDetail, renderSelected, selectTransaction } from './panels/detail.js';
import { initFaults, renderFaults } from './panels/faults.js';
import { initJournal } from './panels/journal.js';
import { fillJourneyChoices, initJourney, renderJourney, showJourneyOf } from './panels/journey.js';
import { fillPayoutChoices, initPayout } from './panels/payout.js';
import { renderProgrammes } from './panels/programmes.js';
import { initSessionPicker } from './panels/sessions.js';
import { fillTransactionsFilter, initTransactions, renderTransactions } from './panels/transactions.js';

/** Draw one answer of GET /_emulator/ui/state. */
function render(feed) {
  renderClock(feed.clock);

  // The overview changes rarely compared with the poll rate: redraw it (and the form choices) on change only.
  const { now: _now, ...stable } = feed.overview;
  const key = JSON.stringify(stable);
  if (key !== state.overviewKey) {
    state.overviewKey = key;
    indexOverview(feed.overview);
    renderProgrammes(feed.overview);
    fillDepositChoices();
    fillPayoutChoices();
    fillBeneficiaryChoices();
    fillTransactionsFilter();
    fillBalanceChoices();
    fillJourneyChoices();
    applyDemoViews();
  }
  renderBalances(feed);
  renderJourney();
  renderTransactions(feed.transactions);
  renderFaults(feed.faults);

  if (feed.selected && feed.selected.id === state.selectedId) renderSelected(feed.selected);
}

initAdminToken(refreshSoon);
initClock();
initSessionPicker();
initDeposit();
initPayout();
initBeneficiary();
initTransactions({ select: selectTransaction });
initDetail();
initBalances();
initJourney({ select: selectTransaction });
initJournal();
initFaults();
initDemo({ select: selectTransaction, showJourney: showJourneyOf });
startFeed(render);
