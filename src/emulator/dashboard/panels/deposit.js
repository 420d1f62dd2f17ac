// Action "Simulate a deposit": POST /v1/sandbox/accounts/{accountId}/deposits as the account's user.

import { actAs } from '../api.js';
import { $, errorNodes, setResult } from '../dom.js';
import { refreshSoon } from '../feed.js';
import { accountLabel, money } from '../format.js';
import { accountGroups, fillSelect, formValues, submitting } from '../forms.js';
import { state } from '../state.js';

/** The accounts that have deposit instructions, and the chosen account's instructions. */
export function fillDepositChoices() {
  fillSelect($('#deposit-account'), accountGroups((account) => account.depositInstructions.length > 0), null);
  fillDepositInstructions();
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

export function initDeposit() {
  $('#deposit-account').addEventListener('change', fillDepositInstructions);

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
}
