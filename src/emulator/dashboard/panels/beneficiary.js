// Action "Add a beneficiary (US bank account)": POST /v1/beneficiaries as the chosen user, so a payout can
// be demoed on a fresh user.

import { actAs } from '../api.js';
import { $, errorNodes, setResult } from '../dom.js';
import { fillSelect, formValues, submitting, userOptions } from '../forms.js';
import { refreshPayoutDestinations } from './payout.js';

export function fillBeneficiaryChoices() {
  fillSelect($('#beneficiary-user'), [{ options: userOptions() }], null);
}

export function initBeneficiary() {
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
}
