import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { advance, buildTestApp, json, type Identity, type TestApp } from '../../helper.js';
import {
  businessEntries,
  createUser,
  getDetail,
  personEntries,
  requirement,
  startEnrollment,
  submit,
  US_ADDRESS,
  writeEntries,
} from '../../helpers/onboarding.js';
import { documentValue, makePdf, padPdf, pageTreePdf, rawPdf } from '../../helpers/pdf.js';

// Information requests (docs/onboarding.md; interface 2.9, 4.7, 4.8): field rules, cross-entry rules,
// documents checked with a real PDF reader, atomic writes, submission rules.

const MiB = 1024 * 1024;

interface Onboarding {
  as: Identity;
  requestId: string;
}

async function onboarding(sandbox: TestApp, type: 'PERSON' | 'BUSINESS', name: string): Promise<Onboarding> {
  const { as } = await createUser(sandbox, type, name);
  return { as, requestId: await startEnrollment(sandbox, as) };
}

/** Write one entry and return the requirement it produced (the write itself must be a 200). */
async function writeOne(t: Test, sandbox: TestApp, user: Onboarding, key: string, value: unknown) {
  const response = await writeEntries(sandbox, user.as, user.requestId, [{ key, value }]);
  t.equal(response.statusCode, 200, `write ${key}: ${JSON.stringify(value)?.slice(0, 60)}`);
  const detail = json(response);
  return { detail, requirement: requirement(detail, key) };
}

type Case = [key: string, value: unknown, type: string, fieldRef: string];

async function expectInvalid(t: Test, sandbox: TestApp, user: Onboarding, cases: Case[]) {
  for (const [key, value, type, fieldRef] of cases) {
    const { detail, requirement: result } = await writeOne(t, sandbox, user, key, value);
    t.equal(result.status, 'INVALID', `${key} ${JSON.stringify(value)} is INVALID`);
    t.equal(detail.validationStatus, 'INVALID', 'the request is INVALID');
    t.ok(
      result.errors.some((error: { type: string; fieldRef: string }) => error.type === type && error.fieldRef === fieldRef),
      `${JSON.stringify(value)}: expected ${type} on ${fieldRef}, got ${JSON.stringify(result.errors)}`,
    );
    t.match(result.entry, { source: 'CALLER', confirmed: true }, 'an invalid value is kept and reported, not refused');
  }
}

async function expectValid(t: Test, sandbox: TestApp, user: Onboarding, key: string, values: unknown[]) {
  for (const value of values) {
    const { requirement: result } = await writeOne(t, sandbox, user, key, value);
    t.same({ status: result.status, errors: result.errors }, { status: 'VALID', errors: [] }, `${key} ${JSON.stringify(value)} is VALID`);
  }
}

t.test('PERSON field rules', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'PERSON', 'Field Rules');

  await expectInvalid(t, sandbox, user, [
    ['legalName', 42, 'InvalidFormat', 'legalName'],
    ['legalName', '   ', 'MissingValue', 'legalName'],
    ['legalName', 'A', 'InvalidValue', 'legalName'],
    ['legalName', 'x'.repeat(201), 'InvalidValue', 'legalName'],
    ['legalName', 'Line\nBreak', 'InvalidFormat', 'legalName'],
    ['dateOfBirth', '17/05/1990', 'InvalidFormat', 'dateOfBirth'],
    ['dateOfBirth', '1990-02-30', 'InvalidFormat', 'dateOfBirth'],
    ['dateOfBirth', '2030-01-01', 'InvalidValue', 'dateOfBirth'],
    ['dateOfBirth', '1899-12-31', 'InvalidValue', 'dateOfBirth'],
    ['dateOfBirth', '2008-03-02', 'InvalidValue', 'dateOfBirth'],
    ['address', '500 Market Street', 'InvalidFormat', 'address'],
    ['address', { ...US_ADDRESS, city: undefined }, 'MissingValue', 'address.city'],
    ['address', { ...US_ADDRESS, line1: '' }, 'MissingValue', 'address.line1'],
    ['address', { ...US_ADDRESS, country: 'usa' }, 'InvalidFormat', 'address.country'],
    ['address', { ...US_ADDRESS, country: 'XX' }, 'InvalidValue', 'address.country'],
    ['address', { ...US_ADDRESS, region: undefined }, 'MissingValue', 'address.region'],
    ['address', { ...US_ADDRESS, region: 'California' }, 'InvalidFormat', 'address.region'],
    ['address', { ...US_ADDRESS, postalCode: '9410' }, 'InvalidFormat', 'address.postalCode'],
    ['address', { ...US_ADDRESS, postalCode: '94105#' }, 'InvalidFormat', 'address.postalCode'],
    ['address', { ...US_ADDRESS, street: 'Market' }, 'InvalidValue', 'address.street'],
    ['taxId', '123-45-6789', 'InvalidFormat', 'taxId'],
    ['taxId', { country: 'US' }, 'MissingValue', 'taxId.number'],
    ['taxId', { country: 'US', number: '12-3456' }, 'InvalidFormat', 'taxId.number'],
    ['taxId', { country: 'US', number: '000-12-3456' }, 'InvalidValue', 'taxId.number'],
    ['taxId', { country: 'US', number: '666123456' }, 'InvalidValue', 'taxId.number'],
    ['taxId', { country: 'DE', number: '??' }, 'InvalidFormat', 'taxId.number'],
    ['taxId', { country: 'Germany', number: '12345678901' }, 'InvalidFormat', 'taxId.country'],
  ]);

  await expectValid(t, sandbox, user, 'legalName', ['Pat Example', '  Zoë Ñúñez-O\'Brien  ']);
  await expectValid(t, sandbox, user, 'dateOfBirth', ['2008-03-01', '1900-01-01', '2000-02-29']);
  await expectValid(t, sandbox, user, 'address', [
    US_ADDRESS,
    { line1: '1 Main St', city: 'Austin', region: 'TX', postalCode: '73301-0001', country: 'US', line2: null },
    { line1: 'Unter den Linden 5', city: 'Berlin', postalCode: '10117', country: 'DE' },
  ]);
  await expectValid(t, sandbox, user, 'taxId', [
    { country: 'US', number: '123456789' },
    { country: 'GB', number: 'QQ 12 34 56 C' },
  ]);

  const invalid = await writeEntries(sandbox, user.as, user.requestId, [{ key: 'dateOfBirth', value: '2010-01-01' }]);
  t.match(requirement(json(invalid), 'dateOfBirth').errors[0].message, /18 or older/, 'the age message says what is accepted');
});

t.test('age is checked against the emulated clock, again at submission', async (t) => {
  const sandbox = await buildTestApp(); // emulated today: 2026-03-01
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'PERSON', 'Almost Eighteen');
  const entries = (await personEntries('Almost Eighteen')).map((entry) => (entry.key === 'dateOfBirth' ? { ...entry, value: '2008-03-02' } : entry));
  const written = json(await writeEntries(sandbox, user.as, user.requestId, entries));
  t.equal(written.validationStatus, 'INVALID', 'one day short of 18');
  const refused = await submit(sandbox, user.as, user.requestId);
  t.equal(refused.statusCode, 400);
  t.match(json(refused).validationErrors, [{ type: 'InvalidValue', fieldRef: 'dateOfBirth' }]);
  await advance(sandbox, 24 * 3600 * 1000);
  const accepted = await submit(sandbox, user.as, user.requestId);
  t.equal(accepted.statusCode, 200, 'eighteen today: submission recomputes with the current date');
  t.match(json(accepted), { status: 'PROCESSING_SUBMISSION', validationStatus: 'VALID' });
});

t.test('BUSINESS field rules and the ownership cross-entry rule', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'BUSINESS', 'Owners Inc');
  const owner = (ownershipPercent: unknown, name: unknown = 'Ada Founder') => ({ name, dateOfBirth: '1985-02-03', ownershipPercent });

  await expectInvalid(t, sandbox, user, [
    ['businessName', 'X', 'InvalidValue', 'businessName'],
    ['registrationNumber', 'ABC', 'InvalidFormat', 'registrationNumber'],
    ['registrationNumber', 'C#123', 'InvalidFormat', 'registrationNumber'],
    ['incorporationCountry', 'us', 'InvalidFormat', 'incorporationCountry'],
    ['incorporationCountry', 'UK', 'InvalidValue', 'incorporationCountry'],
    ['beneficialOwners', { name: 'Ada' }, 'InvalidFormat', 'beneficialOwners'],
    ['beneficialOwners', [], 'InvalidValue', 'beneficialOwners'],
    ['beneficialOwners', Array.from({ length: 11 }, () => owner(5)), 'InvalidValue', 'beneficialOwners'],
    ['beneficialOwners', [owner('50')], 'InvalidFormat', 'beneficialOwners.0.ownershipPercent'],
    ['beneficialOwners', [owner(0)], 'InvalidValue', 'beneficialOwners.0.ownershipPercent'],
    ['beneficialOwners', [owner(100.5)], 'InvalidValue', 'beneficialOwners.0.ownershipPercent'],
    ['beneficialOwners', [owner(12.345)], 'InvalidFormat', 'beneficialOwners.0.ownershipPercent'],
    ['beneficialOwners', [owner(50), { dateOfBirth: '1979-11-30', ownershipPercent: 50 }], 'MissingValue', 'beneficialOwners.1.name'],
    ['beneficialOwners', [owner(50), { ...owner(10), dateOfBirth: '2030-01-01' }], 'InvalidValue', 'beneficialOwners.1.dateOfBirth'],
    ['beneficialOwners', [owner(50), { ...owner(10), shares: 3 }], 'InvalidValue', 'beneficialOwners.1.shares'],
  ]);

  // The cross-entry rule: every owner is valid on its own, the total is not.
  const over = await writeOne(t, sandbox, user, 'beneficialOwners', [owner(60), owner(40.01, 'Ben Partner')]);
  t.equal(over.requirement.status, 'INVALID');
  t.same(over.requirement.errors.map((error: { type: string; fieldRef: string }) => [error.type, error.fieldRef]), [['InvalidValue', 'beneficialOwners']]);
  t.match(over.requirement.errors[0].message, /100\.01.*at most 100/);

  await expectValid(t, sandbox, user, 'beneficialOwners', [
    [owner(60), owner(40, 'Ben Partner')],
    [owner(33.33), owner(33.33, 'B Two'), owner(33.34, 'C Three')],
    [owner(25)],
  ]);
  await expectValid(t, sandbox, user, 'registrationNumber', ['C-4581234', '12345678', 'HRB 12345 B']);
  await expectValid(t, sandbox, user, 'incorporationCountry', ['GB', 'US']);
});

t.test('prefilled names, clearing, and validationStatus on every write', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'BUSINESS', 'Prefill Works LLC');
  const start = json(await getDetail(sandbox, user.as, user.requestId));
  t.match(requirement(start, 'businessName'), { status: 'MISSING', errors: [], entry: { value: 'Prefill Works LLC', source: 'PREFILL', confirmed: false } });
  t.equal(start.validationStatus, 'MISSING');

  // Everything but the name: still MISSING, because the prefilled name is not confirmed.
  const entries = (await businessEntries('unused')).filter((entry) => entry.key !== 'businessName');
  const allButName = json(await writeEntries(sandbox, user.as, user.requestId, entries));
  t.equal(allButName.validationStatus, 'MISSING', 'an unconfirmed prefill is not enough');
  const refused = await submit(sandbox, user.as, user.requestId);
  t.equal(refused.statusCode, 400);
  t.match(json(refused).validationErrors, [{ type: 'MissingValue', fieldRef: 'businessName', message: /prefilled.*confirm/ }]);

  const confirmed = json(await writeEntries(sandbox, user.as, user.requestId, [{ key: 'businessName', value: 'Prefill Works LLC' }]));
  t.match(requirement(confirmed, 'businessName'), { status: 'VALID', entry: { source: 'CALLER', confirmed: true } });
  t.equal(confirmed.validationStatus, 'VALID', 'writing the prefilled value confirms it');

  const broken = json(await writeEntries(sandbox, user.as, user.requestId, [{ key: 'incorporationCountry', value: 'ZZ' }]));
  t.equal(broken.validationStatus, 'INVALID');
  const cleared = json(await writeEntries(sandbox, user.as, user.requestId, [{ key: 'incorporationCountry', value: null }]));
  t.match(requirement(cleared, 'incorporationCountry'), { status: 'MISSING', entry: null, errors: [] }, 'null clears an entry');
  t.equal(cleared.validationStatus, 'MISSING');
});

t.test('entry writes are atomic and refuse unknown keys', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'PERSON', 'Atomic Person');
  await advance(sandbox, 1_000);
  const before = json(await getDetail(sandbox, user.as, user.requestId));

  const unknown = await writeEntries(sandbox, user.as, user.requestId, [
    { key: 'legalName', value: 'Atomic Person' },
    { key: 'businessName', value: 'Not a PERSON key' },
  ]);
  t.equal(unknown.statusCode, 400);
  t.match(json(unknown), { validationErrors: [{ type: 'InvalidValue', fieldRef: 'entries.1.key', message: /accepted keys: legalName, dateOfBirth/ }] });
  t.notOk('errorCode' in json(unknown), 'no errorCode: validationErrors describe it (interface 7.1)');

  const duplicate = await writeEntries(sandbox, user.as, user.requestId, [
    { key: 'legalName', value: 'One' },
    { key: 'legalName', value: 'Two' },
  ]);
  t.equal(duplicate.statusCode, 400);
  t.equal(json(duplicate).validationErrors[0].fieldRef, 'entries.1.key');

  const noValue = await sandbox.request('POST', `/v1/information-requests/${user.requestId}/entries`, { entries: [{ key: 'legalName' }] }, user.as);
  t.equal(noValue.statusCode, 400);
  t.equal(json(noValue).validationErrors[0].fieldRef, 'entries.0.value');

  // Valid entries plus one unreadable document: nothing is written.
  const entries = await personEntries('Atomic Person');
  entries[4] = { key: 'identityDocument', value: documentValue(Buffer.from('definitely not a pdf'), 'scan.pdf') };
  const badDocument = await writeEntries(sandbox, user.as, user.requestId, entries);
  t.equal(badDocument.statusCode, 400);
  t.equal(json(badDocument).errorCode, 'PDF_UNREADABLE');
  t.same(json(await getDetail(sandbox, user.as, user.requestId)), before, 'the request is exactly as before the failed writes');

  for (const body of [{}, { entries: [] }, { entries: 'legalName' }, { entries: [{ key: 'legalName', value: 'A B', extra: 1 }] }, { entries: Array.from({ length: 21 }, () => ({ key: 'legalName', value: 'A B' })) }]) {
    const response = await sandbox.request('POST', `/v1/information-requests/${user.requestId}/entries`, body, user.as);
    t.equal(response.statusCode, 400, `body ${JSON.stringify(body).slice(0, 50)}`);
    t.ok(json(response).message, 'error body has a message');
  }
  t.same(json(await getDetail(sandbox, user.as, user.requestId)), before, 'still untouched');
});

t.test('documents are read with a PDF parser', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'PERSON', 'Document Person');
  const put = (value: unknown) => writeEntries(sandbox, user.as, user.requestId, [{ key: 'identityDocument', value }]);

  const onePage = await makePdf();
  const ok = await put(documentValue(onePage, 'passport.pdf'));
  t.equal(ok.statusCode, 200, ok.body);
  t.same(requirement(json(ok), 'identityDocument').entry.value, {
    fileName: 'passport.pdf',
    contentType: 'application/pdf',
    sizeBytes: onePage.length,
    pageCount: 1,
    sha256: createHash('sha256').update(onePage).digest('hex'),
  }, 'metadata and hash are kept, the bytes are not echoed');
  t.equal(requirement(json(ok), 'identityDocument').status, 'VALID');
  t.equal((await put(documentValue(await makePdf({ pages: 10 })))).statusCode, 200, '10 pages is the limit');
  const overcounted = await put(documentValue(pageTreePdf(1_000_000, 2)));
  t.equal(overcounted.statusCode, 200, `a /Count over the real pages: ${overcounted.body.slice(0, 200)}`);
  t.equal(requirement(json(overcounted), 'identityDocument').entry.value.pageCount, 2, 'the pages that are there, counted by the PDF reader');

  const cases: Array<[string, Buffer, string]> = [
    ['garbage bytes', Buffer.from([0x00, 0x01, 0x02, 0xff, 0x7f, 0x50, 0x44, 0x46]), 'PDF_UNREADABLE'],
    ['a text file mentioning %PDF', Buffer.from('This is not a PDF, although it says %PDF-1.7 here.'), 'PDF_UNREADABLE'],
    ['a truncated PDF', onePage.subarray(0, 300), 'PDF_UNREADABLE'],
    ['a password-protected PDF', await makePdf({ userPassword: 'secret' }), 'PDF_PASSWORD_PROTECTED'],
    ['an encrypted PDF with only an owner password', await makePdf({ ownerPassword: 'owner' }), 'PDF_PASSWORD_PROTECTED'],
    ['an 11-page PDF', await makePdf({ pages: 11 }), 'PDF_PAGE_LIMIT_EXCEEDED'],
    // the page tree's own /Count is not taken on trust (docs/onboarding.md#requirements-and-value-formats)
    ['a page tree counting -5 pages over one page', pageTreePdf(-5, 1), 'PDF_UNREADABLE'],
    ['a page tree with no pages', pageTreePdf(0, 0), 'PDF_UNREADABLE'],
    ['a page tree that is its own kid', rawPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [2 0 R] /Count 1 >>']), 'PDF_UNREADABLE'],
    ['a page tree counting 2 pages over one page and itself', rawPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>']), 'PDF_UNREADABLE'],
    ['12 pages counted as 12', pageTreePdf(12, 12), 'PDF_PAGE_LIMIT_EXCEEDED'],
  ];
  for (const [label, bytes, code] of cases) {
    const response = await put(documentValue(bytes, 'upload.pdf'));
    t.equal(response.statusCode, 400, label);
    t.equal(json(response).errorCode, code, label);
    t.match(json(response).validationErrors, [{ fieldRef: 'entries.0.value.contentBase64' }], `${label}: names the field`);
  }

  const envelope: Array<[string, unknown, string, string]> = [
    ['not an object', 'JVBERi0=', 'InvalidFormat', 'entries.0.value'],
    ['wrong content type', { ...documentValue(onePage), contentType: 'image/png' }, 'InvalidValue', 'entries.0.value.contentType'],
    ['no file name', { contentType: 'application/pdf', contentBase64: onePage.toString('base64') }, 'MissingValue', 'entries.0.value.fileName'],
    ['a path as file name', documentValue(onePage, '../etc/passwd.pdf'), 'InvalidFormat', 'entries.0.value.fileName'],
    ['not Base64', { ...documentValue(onePage), contentBase64: 'not base64!!' }, 'InvalidFormat', 'entries.0.value.contentBase64'],
    ['a no-break space inside', { ...documentValue(onePage), contentBase64: onePage.toString('base64').replace(/^(.{8})/, '$1\u00a0') }, 'InvalidFormat', 'entries.0.value.contentBase64'],
    ['no content', { ...documentValue(onePage), contentBase64: '' }, 'MissingValue', 'entries.0.value.contentBase64'],
    ['an extra field', { ...documentValue(onePage), url: 'https://example.com/x.pdf' }, 'InvalidValue', 'entries.0.value.url'],
  ];
  for (const [label, value, type, fieldRef] of envelope) {
    const response = await put(value);
    t.equal(response.statusCode, 400, label);
    t.match(json(response), { validationErrors: [{ type, fieldRef }] }, label);
    t.notOk('errorCode' in json(response), `${label}: no errorCode`);
  }

  // Wrapped Base64 (GNU base64 output) is accepted, and so are ASCII spaces and tabs (docs/onboarding.md).
  const wrapped = onePage.toString('base64').replace(/(.{76})/g, '$1\n').replace(/^(.{8})/, '$1 \t\r\n');
  t.equal((await put({ ...documentValue(onePage), contentBase64: wrapped })).statusCode, 200, 'line-wrapped Base64');
  t.equal(requirement(json(await getDetail(sandbox, user.as, user.requestId)), 'identityDocument').entry.value.sizeBytes, onePage.length);
});

t.test('document size: 10 MiB per document, 20 MiB per body', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboarding(sandbox, 'PERSON', 'Large Document');
  const put = (bytes: Buffer) => writeEntries(sandbox, user.as, user.requestId, [{ key: 'identityDocument', value: documentValue(bytes) }]);
  const base = await makePdf();

  const atLimit = await put(padPdf(base, 10 * MiB));
  t.equal(atLimit.statusCode, 200, 'exactly 10 MiB (a body far over the default 1 MiB limit) is accepted');
  t.equal(requirement(json(atLimit), 'identityDocument').entry.value.sizeBytes, 10 * MiB);

  const over = await put(padPdf(base, 10 * MiB + 1));
  t.equal(over.statusCode, 400);
  t.match(json(over), { validationErrors: [{ type: 'InvalidValue', fieldRef: 'entries.0.value.contentBase64', message: /10 MiB/ }] });
  t.notOk('errorCode' in json(over), 'no errorCode');

  const huge = await sandbox.request('POST', `/v1/information-requests/${user.requestId}/entries`, { entries: [{ key: 'legalName', value: 'x'.repeat(20 * MiB) }] }, user.as);
  t.equal(huge.statusCode, 413, 'a body over 20 MiB');
  t.equal(json(huge).errorCode, 'INVALID_REQUEST');

  const bigText = await writeEntries(sandbox, user.as, user.requestId, [{ key: 'legalName', value: 'x'.repeat(20_000) }]);
  t.equal(bigText.statusCode, 400, 'requirement values other than documents are short');
});

t.test('submission: not VALID, ALREADY REGISTERED, not editable afterwards', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const incomplete = await onboarding(sandbox, 'PERSON', 'Incomplete Person');
  const missing = await submit(sandbox, incomplete.as, incomplete.requestId);
  t.equal(missing.statusCode, 400);
  t.same(
    json(missing).validationErrors.map((error: { type: string; fieldRef: string }) => `${error.type}:${error.fieldRef}`),
    ['MissingValue:legalName', 'MissingValue:dateOfBirth', 'MissingValue:address', 'MissingValue:taxId', 'MissingValue:identityDocument'],
  );
  t.equal(json(await getDetail(sandbox, incomplete.as, incomplete.requestId)).status, 'DRAFT');

  // The outside-data check runs at submission only: the request is VALID before it and after it.
  const registered = await onboarding(sandbox, 'BUSINESS', 'Widgets Already Registered Inc');
  const written = json(await writeEntries(sandbox, registered.as, registered.requestId, await businessEntries('Widgets already registered Inc')));
  t.equal(written.validationStatus, 'VALID', 'VALID before submission');
  t.ok(written.requirements.every((r: { status: string }) => r.status === 'VALID'));
  const refused = await submit(sandbox, registered.as, registered.requestId);
  t.equal(refused.statusCode, 400);
  t.match(json(refused), { validationErrors: [{ type: 'InvalidValue', fieldRef: 'businessName', message: /already registered/ }] });
  t.notOk('errorCode' in json(refused), 'no errorCode');
  t.match(json(await getDetail(sandbox, registered.as, registered.requestId)), { status: 'DRAFT', validationStatus: 'VALID', decision: null }, 'stays DRAFT');
  await writeEntries(sandbox, registered.as, registered.requestId, [{ key: 'businessName', value: 'Widgets Unique Inc' }]);
  const accepted = await submit(sandbox, registered.as, registered.requestId);
  t.equal(accepted.statusCode, 200, 'a corrected name can be submitted');

  const notEditable = await writeEntries(sandbox, registered.as, registered.requestId, [{ key: 'registrationNumber', value: 'C-1' }]);
  t.equal(notEditable.statusCode, 409);
  t.match(json(notEditable), { errorCode: 'INFORMATION_REQUEST_NOT_EDITABLE', message: /PROCESSING_SUBMISSION/ });
  const again = await submit(sandbox, registered.as, registered.requestId);
  t.equal(again.statusCode, 409);
  t.equal(json(again).errorCode, 'INFORMATION_REQUEST_NOT_EDITABLE');
  await advance(sandbox, 5_000);
  const afterReview = await writeEntries(sandbox, registered.as, registered.requestId, [{ key: 'registrationNumber', value: 'C-1' }]);
  t.equal(json(afterReview).errorCode, 'INFORMATION_REQUEST_NOT_EDITABLE', 'still not editable once COMPLETED');
});

t.test('the list is { data } only', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { as } = await createUser(sandbox, 'PERSON', 'Listed Person');
  const empty = await sandbox.request('GET', '/v1/information-requests', undefined, as);
  t.equal(empty.statusCode, 200);
  t.same(json(empty), { data: [] }, 'no request before the enrollment starts');

  const requestId = await startEnrollment(sandbox, as);
  const list = json(await sandbox.request('GET', '/v1/information-requests', undefined, as));
  t.same(Object.keys(list), ['data'], 'no paging envelope');
  t.equal(list.data.length, 1);
  t.same(Object.keys(list.data[0]).sort(), ['createdAt', 'decision', 'id', 'status', 'subjectId', 'subjectType', 'updatedAt', 'validationStatus']);
  t.match(list.data[0], { id: requestId, status: 'DRAFT', subjectType: 'ENROLLMENT', validationStatus: 'MISSING', decision: null });
});
