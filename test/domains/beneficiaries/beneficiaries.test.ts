import t from 'tap';
import { AS_JANE, AS_OTHER, buildTestApp, json, type TestApp } from '../../helper.js';

// Beneficiaries (docs/money-out.md#beneficiaries; interface 2.12, 4.14, 4.15).

const US_BANK = {
  type: 'BANK_ACCOUNT',
  currency: 'USD',
  country: 'US',
  accountHolderName: 'Initech LLC',
  accountNumber: '987654321012',
  routingNumber: '021000021',
};
const DE_BANK = {
  type: 'BANK_ACCOUNT',
  currency: 'EUR',
  country: 'DE',
  accountHolderName: 'Beispiel GmbH',
  iban: 'DE75 5121 0800 1245 1261 99',
  bic: 'DEUTDEFF',
};
const ADDRESS = { line1: 'Hauptstrasse 1', city: 'Berlin', postalCode: '10115', country: 'DE' };

function business(overrides: Record<string, unknown> = {}) {
  return { type: 'BUSINESS', businessName: 'Initech LLC', instruments: [US_BANK], ...overrides };
}

async function countBeneficiaries(sandbox: TestApp): Promise<number> {
  return json(await sandbox.request('GET', '/v1/beneficiaries')).totalRecords;
}

t.test('fixture beneficiaries: list, paging, detail, instruments, masking', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const list = await sandbox.request('GET', '/v1/beneficiaries');
  t.equal(list.statusCode, 200);
  const body = json(list);
  t.same(body.data.map((b: { id: string }) => b.id), ['ben_globex', 'ben_mueller', 'ben_nakamoto'], 'createdAt ascending, only the caller\'s');
  t.equal(body.totalRecords, 3);
  t.equal(body.pageIndex, 0);
  t.equal(body.pageSize, 25);

  const page = json(await sandbox.request('GET', '/v1/beneficiaries?pageIndex=1&pageSize=2'));
  t.same(page.data.map((b: { id: string }) => b.id), ['ben_nakamoto']);
  t.equal((await sandbox.request('GET', '/v1/beneficiaries?pageSize=101')).statusCode, 400);

  const jane = json(await sandbox.request('GET', '/v1/beneficiaries', undefined, AS_JANE));
  t.same(jane.data.map((b: { id: string }) => b.id), ['ben_john']);
  t.equal(jane.data[0].type, 'PERSON');
  t.equal(jane.data[0].firstName, 'John');
  t.notOk('businessName' in jane.data[0], 'a person has no business fields');

  const globex = await sandbox.request('GET', '/v1/beneficiaries/ben_globex');
  t.equal(globex.statusCode, 200);
  t.match(json(globex), {
    id: 'ben_globex',
    counterpartyId: 'cp_globex',
    type: 'BUSINESS',
    businessName: 'Globex Corporation',
    registrationNumber: '87-1234567',
    firstName: null,
    lastName: null,
    dateOfBirth: null,
    address: { line1: '1 Market Street', line2: 'Suite 300', city: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' },
    relationshipToUser: 'THIRD_PARTY',
    instruments: [{ id: 'bi_globex_usd', type: 'BANK_ACCOUNT', mask: '6789', accountNumberType: 'ACCOUNT_NUMBER', routingNumber: '021000021' }],
  });
  t.notMatch(globex.body, /000123456789/, 'the full account number never leaves the emulator');

  const instruments = await sandbox.request('GET', '/v1/beneficiaries/ben_mueller/instruments');
  t.equal(instruments.statusCode, 200);
  t.match(json(instruments), { instruments: [{ id: 'bi_mueller_eur', type: 'BANK_ACCOUNT', mask: '2051', accountNumberType: 'IBAN', bic: 'BYLADEM1001' }] });
  t.notMatch(instruments.body, /DE02120300000000202051/, 'the IBAN is masked too');

  const wallets = json(await sandbox.request('GET', '/v1/beneficiaries/ben_nakamoto/instruments'));
  t.same(
    wallets.instruments.map((i: { id: string; network: string }) => [i.id, i.network]),
    [
      ['bi_nakamoto_eth', 'ETHEREUM'],
      ['bi_nakamoto_base', 'BASE'],
    ],
  );
});

t.test('ownership: another user 403, another programme or unknown 404', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (const url of ['/v1/beneficiaries/ben_globex', '/v1/beneficiaries/ben_globex/instruments']) {
    const otherUser = await sandbox.request('GET', url, undefined, AS_JANE);
    t.equal(otherUser.statusCode, 403, url);
    t.equal(json(otherUser).errorCode, 'FORBIDDEN');
    const otherProgramme = await sandbox.request('GET', url, undefined, AS_OTHER);
    t.equal(otherProgramme.statusCode, 404, url);
    t.equal(json(otherProgramme).errorCode, 'NOT_FOUND');
  }
  t.equal((await sandbox.request('GET', '/v1/beneficiaries/ben_nope')).statusCode, 404);
  t.equal(json(await sandbox.request('GET', '/v1/beneficiaries', undefined, AS_OTHER)).totalRecords, 0);
});

t.test('create a person with a US bank account, and a business with an IBAN and a wallet', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const person = await sandbox.request('POST', '/v1/beneficiaries', {
    type: 'PERSON',
    firstName: 'Ada',
    lastName: 'Lovelace',
    dateOfBirth: '1990-12-10',
    email: 'ada@example.com',
    phoneNumber: '+442071234567',
    relationshipToUser: 'SELF',
    instruments: [US_BANK],
  });
  t.equal(person.statusCode, 201, person.body);
  const created = json(person);
  t.match(created, {
    id: /^ben_/,
    counterpartyId: /^cp_/,
    type: 'PERSON',
    firstName: 'Ada',
    lastName: 'Lovelace',
    dateOfBirth: '1990-12-10',
    displayName: null,
    address: null,
    createdAt: '2026-03-01T12:00:00.000Z',
    instruments: [{ id: /^bi_/, type: 'BANK_ACCOUNT', mask: '1012', currency: 'USD', country: 'US' }],
  });
  t.notMatch(person.body, /987654321012/, 'account number masked in the 201');
  t.same(json(await sandbox.request('GET', `/v1/beneficiaries/${created.id}`)), created, 'GET returns what POST returned');
  t.equal(await countBeneficiaries(sandbox), 4);

  const company = await sandbox.request('POST', '/v1/beneficiaries', {
    type: 'BUSINESS',
    businessName: 'Beispiel GmbH',
    registrationNumber: 'HRB 999',
    address: ADDRESS,
    instruments: [DE_BANK, { type: 'WALLET', network: 'POLYGON', address: '0x52908400098527886E0F7030069857D2E4169EE7', currency: 'USDC' }],
  });
  t.equal(company.statusCode, 201, company.body);
  t.match(json(company), {
    businessName: 'Beispiel GmbH',
    registrationNumber: 'HRB 999',
    address: { line1: 'Hauptstrasse 1', line2: null, region: null, country: 'DE' },
    instruments: [
      { type: 'BANK_ACCOUNT', mask: '6199', accountNumberType: 'IBAN', bic: 'DEUTDEFF' },
      { type: 'WALLET', network: 'POLYGON', address: '0x52908400098527886E0F7030069857D2E4169EE7', currency: 'USDC' },
    ],
  });
});

t.test('scopes: a read-only bearer token cannot create', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const token = await sandbox.request('POST', '/v1/auth/token', { scopes: ['beneficiaries:read'] });
  t.equal(token.statusCode, 200, token.body);
  const bearer = json(token).accessToken;
  t.equal((await sandbox.request('GET', '/v1/beneficiaries', undefined, { bearer })).statusCode, 200);
  const refused = await sandbox.request('POST', '/v1/beneficiaries', business(), { bearer });
  t.equal(refused.statusCode, 403);
});

// One test per validation rule: each names the field, the error type, and leaves nothing behind.
const RULES: Array<{ name: string; body: Record<string, unknown>; type: string; fieldRef: string }> = [
  { name: 'IBAN checksum (mod 97)', body: business({ address: ADDRESS, instruments: [{ ...DE_BANK, iban: 'DE75512108001245126198' }] }), type: 'InvalidValue', fieldRef: 'instruments.0.iban' },
  { name: 'IBAN format', body: business({ address: ADDRESS, instruments: [{ ...DE_BANK, iban: '7551210800124512619900' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.iban' },
  { name: 'IBAN country must match the instrument country', body: business({ address: ADDRESS, instruments: [{ ...DE_BANK, country: 'FR' }] }), type: 'InvalidValue', fieldRef: 'instruments.0.iban' },
  { name: 'ABA routing checksum', body: business({ instruments: [{ ...US_BANK, routingNumber: '021000022' }] }), type: 'InvalidValue', fieldRef: 'instruments.0.routingNumber' },
  { name: 'ABA routing format', body: business({ instruments: [{ ...US_BANK, routingNumber: '12345' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.routingNumber' },
  { name: 'US bank account needs a routing number', body: business({ instruments: [{ ...US_BANK, routingNumber: undefined }] }), type: 'MissingValue', fieldRef: 'instruments.0.routingNumber' },
  { name: 'US account number is 4-17 digits', body: business({ instruments: [{ ...US_BANK, accountNumber: 'ABC123' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.accountNumber' },
  { name: 'bank outside the US needs an IBAN or account number', body: business({ address: ADDRESS, instruments: [{ ...DE_BANK, iban: undefined }] }), type: 'MissingValue', fieldRef: 'instruments.0.iban' },
  { name: 'E.164 phone number', body: business({ phoneNumber: '415-555-0123' }), type: 'InvalidFormat', fieldRef: 'phoneNumber' },
  { name: 'ISO 3166 country format', body: business({ instruments: [{ ...US_BANK, country: 'usa' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.country' },
  { name: 'ISO 3166 country assigned', body: business({ address: { ...ADDRESS, country: 'XX' }, instruments: [US_BANK] }), type: 'InvalidValue', fieldRef: 'address.country' },
  { name: 'currency code format', body: business({ instruments: [{ ...US_BANK, currency: 'usd' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.currency' },
  { name: 'currency known to the sandbox', body: business({ instruments: [{ ...US_BANK, currency: 'XYZ' }] }), type: 'InvalidValue', fieldRef: 'instruments.0.currency' },
  { name: 'EVM wallet address', body: business({ instruments: [{ type: 'WALLET', network: 'ETHEREUM', address: '0x1234', currency: 'USDC' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.address' },
  { name: 'wallet network', body: business({ instruments: [{ type: 'WALLET', network: 'SOLANA', address: '0x52908400098527886E0F7030069857D2E4169EE7', currency: 'USDC' }] }), type: 'InvalidValue', fieldRef: 'instruments.0.network' },
  { name: 'BIC format', body: business({ address: ADDRESS, instruments: [{ ...DE_BANK, bic: 'DEUT' }] }), type: 'InvalidFormat', fieldRef: 'instruments.0.bic' },
  { name: 'email format', body: business({ email: 'not-an-email' }), type: 'InvalidFormat', fieldRef: 'email' },
  { name: 'person needs firstName', body: { type: 'PERSON', lastName: 'Doe', instruments: [US_BANK] }, type: 'MissingValue', fieldRef: 'firstName' },
  { name: 'business needs businessName', body: { type: 'BUSINESS', instruments: [US_BANK] }, type: 'MissingValue', fieldRef: 'businessName' },
  { name: 'type is PERSON or BUSINESS', body: { type: 'ROBOT', instruments: [US_BANK] }, type: 'InvalidValue', fieldRef: 'type' },
  { name: 'at least one instrument', body: business({ instruments: [] }), type: 'InvalidValue', fieldRef: 'instruments' },
  { name: 'at most ten instruments', body: business({ instruments: Array.from({ length: 11 }, () => US_BANK) }), type: 'InvalidValue', fieldRef: 'instruments' },
  { name: 'dateOfBirth is a calendar date', body: { type: 'PERSON', firstName: 'A', lastName: 'B', dateOfBirth: '1990-02-30', instruments: [US_BANK] }, type: 'InvalidValue', fieldRef: 'dateOfBirth' },
  { name: 'dateOfBirth not in the future', body: { type: 'PERSON', firstName: 'A', lastName: 'B', dateOfBirth: '2030-01-01', instruments: [US_BANK] }, type: 'InvalidValue', fieldRef: 'dateOfBirth' },
  { name: 'address parts are required once an address is sent', body: business({ address: { line1: 'x', city: 'y', country: 'DE' } }), type: 'MissingValue', fieldRef: 'address.postalCode' },
];

t.test('validation rules', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = await countBeneficiaries(sandbox);
  for (const rule of RULES) {
    t.test(rule.name, async (t) => {
      const response = await sandbox.request('POST', '/v1/beneficiaries', rule.body);
      t.equal(response.statusCode, 400, response.body);
      const body = json(response);
      t.notOk('errorCode' in body, 'no errorCode: validationErrors describe it (interface 7.1)');
      t.ok(body.message.length > 10, 'a message that says what is wrong');
      t.ok(
        body.validationErrors.some((error: { type: string; fieldRef: string }) => error.type === rule.type && error.fieldRef === rule.fieldRef),
        `expected ${rule.type} on ${rule.fieldRef}, got ${JSON.stringify(body.validationErrors)}`,
      );
    });
  }
  t.test('a valid body passes (the rules above are not failing for another reason)', async (t) => {
    t.equal((await sandbox.request('POST', '/v1/beneficiaries', business({ address: ADDRESS, instruments: [US_BANK, DE_BANK] }))).statusCode, 201);
  });
  t.test('nothing was written by the refused requests', async (t) => {
    t.equal(await countBeneficiaries(sandbox), before + 1);
  });
});

t.test('a bank outside the US without an address: MissingValue on each address part', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const response = await sandbox.request('POST', '/v1/beneficiaries', business({ instruments: [US_BANK, DE_BANK] }));
  t.equal(response.statusCode, 400);
  const refs = json(response)
    .validationErrors.filter((error: { type: string }) => error.type === 'MissingValue')
    .map((error: { fieldRef: string }) => error.fieldRef);
  t.same(refs, ['address.line1', 'address.city', 'address.postalCode', 'address.country']);
  t.match(json(response).validationErrors[0].message, /instruments\.1 is a bank account outside the US/);

  const usOnly = await sandbox.request('POST', '/v1/beneficiaries', business());
  t.equal(usOnly.statusCode, 201, 'a US bank account needs no address');
});
