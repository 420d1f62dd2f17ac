import t from 'tap';
import { advance, AS_JANE, AS_OTHER, buildTestApp, json, type TestApp } from '../../helper.js';
import { businessEntries, createUser, getDetail, MULTI, personEntries, startEnrollment, submit, writeEntries } from '../../helpers/onboarding.js';
import { assertEnrollmentActive } from '../../../src/domains/enrollment/enrollment.service.js';
import { ServiceError } from '../../../src/core/errors.js';

// Enrollment (docs/onboarding.md; interface 2.10, 3.3, 4.9-4.11) end to end over HTTP.

async function usersList(sandbox: TestApp): Promise<Array<{ userId: string; enrollmentStatus: string; enrollmentStatusReason?: string }>> {
  const response = await sandbox.request('GET', '/v1/users', undefined, MULTI);
  if (response.statusCode !== 200) throw new Error(`GET /v1/users: ${response.statusCode} ${response.body}`);
  return json(response).data;
}

function gateError(sandbox: TestApp, userId: string): ServiceError | undefined {
  try {
    assertEnrollmentActive(sandbox.ctx, userId);
    return undefined;
  } catch (error) {
    return error as ServiceError;
  }
}

async function enrollment(sandbox: TestApp, as: Parameters<TestApp['request']>[3]) {
  const response = await sandbox.request('GET', '/v1/enrollment', undefined, as);
  if (response.statusCode !== 200) throw new Error(`GET /v1/enrollment: ${response.statusCode} ${response.body}`);
  return json(response);
}

t.test('PERSON user: from POST /v1/auth/users to ACTIVE', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { userId, as } = await createUser(sandbox, 'PERSON', 'Pat Example');
  const created = json(await sandbox.request('GET', '/v1/users', undefined, MULTI));
  t.notOk(
    created.data.some((user: { userId: string }) => user.userId === userId),
    'a user created through the API is not listed before its enrollment starts',
  );
  t.equal(gateError(sandbox, userId)?.statusCode, 403, 'an INACTIVE user cannot move money');
  t.equal(gateError(sandbox, userId)?.errorCode, 'FORBIDDEN');
  t.match(gateError(sandbox, userId)?.message, /not active/);

  const first = await enrollment(sandbox, as);
  t.match(first, {
    id: /^enr_/,
    status: 'INACTIVE',
    reason: null,
    reasonDetail: null,
    informationRequest: { id: /^ir_/, status: 'DRAFT', validationStatus: 'MISSING', decision: null },
  });
  t.same(Object.keys(first).sort(), ['createdAt', 'id', 'informationRequest', 'reason', 'reasonDetail', 'status', 'updatedAt']);
  const listed = (await usersList(sandbox)).find((user) => user.userId === userId);
  t.match(listed, { enrollmentStatus: 'INACTIVE' }, 'listed once the enrollment has started');
  t.notOk(listed && 'enrollmentStatusReason' in listed, 'no reason while waiting');

  const again = await enrollment(sandbox, as);
  t.equal(again.id, first.id, 'the enrollment is created once');
  const activated = json(await sandbox.request('POST', '/v1/enrollment/activate', undefined, as));
  t.match(activated, { id: first.id, status: 'INACTIVE', informationRequest: { id: first.informationRequest.id, status: 'DRAFT' } }, 'activate resumes');

  const requestId = first.informationRequest.id;
  const written = await writeEntries(sandbox, as, requestId, await personEntries('Pat Example'));
  t.equal(written.statusCode, 200, written.body);
  t.equal(json(written).validationStatus, 'VALID');

  const submitted = await submit(sandbox, as, requestId);
  t.equal(submitted.statusCode, 200, submitted.body);
  t.match(json(submitted), { status: 'PROCESSING_SUBMISSION', decision: null });

  await advance(sandbox, 0);
  t.match(json(await getDetail(sandbox, as, requestId)), { status: 'PENDING_REVIEW', decision: 'PENDING' });
  t.match(await enrollment(sandbox, as), { status: 'INACTIVE', informationRequest: { status: 'PENDING_REVIEW', decision: 'PENDING' } });

  await advance(sandbox, 4_999);
  t.equal(json(await getDetail(sandbox, as, requestId)).status, 'PENDING_REVIEW', 'the review takes timeline.reviewMs (5 s)');
  await advance(sandbox, 1);
  const done = json(await getDetail(sandbox, as, requestId));
  t.match(done, { status: 'COMPLETED', decision: 'APPROVED' });

  const active = await enrollment(sandbox, as);
  t.match(active, { status: 'ACTIVE', reason: null, reasonDetail: null, informationRequest: { status: 'COMPLETED', decision: 'APPROVED', validationStatus: 'VALID' } });
  t.equal(active.updatedAt, '2026-03-01T12:00:05.000Z', 'activated at the review time on the emulated clock');
  t.match((await usersList(sandbox)).find((user) => user.userId === userId), { enrollmentStatus: 'ACTIVE' });
  t.equal(gateError(sandbox, userId), undefined, 'an ACTIVE user may move money');
  t.equal(json(await sandbox.request('POST', '/v1/enrollment/activate', undefined, as)).status, 'ACTIVE');
});

t.test('BUSINESS user: from POST /v1/auth/users to ACTIVE through activate', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { userId, as } = await createUser(sandbox, 'BUSINESS', 'Northwind Traders Inc');
  const activated = await sandbox.request('POST', '/v1/enrollment/activate', undefined, as);
  t.equal(activated.statusCode, 200);
  t.match(json(activated), { status: 'INACTIVE', informationRequest: { status: 'DRAFT', validationStatus: 'MISSING' } }, 'activate creates');
  t.ok((await usersList(sandbox)).some((user) => user.userId === userId), 'activate starts the enrollment too');

  const requestId = json(activated).informationRequest.id;
  const detail = json(await getDetail(sandbox, as, requestId));
  t.same(
    detail.requirements.map((r: { key: string }) => r.key),
    ['businessName', 'registrationNumber', 'incorporationCountry', 'address', 'beneficialOwners', 'formationDocument'],
  );
  t.match(detail, { subjectType: 'ENROLLMENT', subjectId: json(activated).id, title: /Northwind Traders Inc/ });

  t.equal((await writeEntries(sandbox, as, requestId, await businessEntries('Northwind Traders Inc'))).statusCode, 200);
  t.equal((await submit(sandbox, as, requestId)).statusCode, 200);
  await advance(sandbox, 5_000);
  const active = json(await sandbox.request('POST', '/v1/enrollment/activate', undefined, as));
  t.match(active, { status: 'ACTIVE', reason: null, informationRequest: { id: requestId, status: 'COMPLETED', decision: 'APPROVED' } });
  t.match((await usersList(sandbox)).find((user) => user.userId === userId), { enrollmentStatus: 'ACTIVE' });
});

t.test('fixture users read ACTIVE with an approved request on file', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const acme = await enrollment(sandbox, {});
  t.match(acme, {
    id: 'enr_acme',
    status: 'ACTIVE',
    reason: null,
    createdAt: '2025-12-01T09:00:00.000Z',
    informationRequest: { id: 'ir_acme', status: 'COMPLETED', validationStatus: 'VALID', decision: 'APPROVED' },
  });
  const acmeDetail = json(await getDetail(sandbox, {}, 'ir_acme'));
  t.match(acmeDetail.requirements[0], { key: 'businessName', status: 'VALID', entry: { value: 'Acme Robotics LLC', source: 'PREFILL', confirmed: true } });
  t.ok(acmeDetail.requirements.every((r: { status: string }) => r.status === 'VALID'));

  // The list writes a fixture user's rows too when no enrollment read has happened yet.
  const janeList = json(await sandbox.request('GET', '/v1/information-requests', undefined, AS_JANE));
  t.match(janeList.data, [{ id: 'ir_jane', status: 'COMPLETED', decision: 'APPROVED', subjectId: 'enr_jane' }]);
  t.equal((await enrollment(sandbox, AS_JANE)).status, 'ACTIVE');
  t.equal(gateError(sandbox, 'usr_acme'), undefined, 'fixture users may move money');

  const written = await writeEntries(sandbox, {}, 'ir_acme', [{ key: 'businessName', value: 'Acme Robotics Inc' }]);
  t.equal(written.statusCode, 409, 'an approved request is not editable');
  t.equal(json(written).errorCode, 'INFORMATION_REQUEST_NOT_EDITABLE');
});

t.test('rejection by magic name leaves the user INACTIVE with ACTIVATION_REJECTED', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { userId, as } = await createUser(sandbox, 'PERSON', 'Rex Rejectson');
  const requestId = await startEnrollment(sandbox, as);
  t.equal((await writeEntries(sandbox, as, requestId, await personEntries('Rex REJECT Rejectson'))).statusCode, 200);
  t.equal((await submit(sandbox, as, requestId)).statusCode, 200);
  await advance(sandbox, 5_000);
  t.match(json(await getDetail(sandbox, as, requestId)), { status: 'COMPLETED', decision: 'REJECTED' });
  const rejected = await enrollment(sandbox, as);
  t.match(rejected, { status: 'INACTIVE', reason: 'ACTIVATION_REJECTED', reasonDetail: /REJECT/, informationRequest: { decision: 'REJECTED' } });
  t.match((await usersList(sandbox)).find((user) => user.userId === userId), { enrollmentStatus: 'INACTIVE', enrollmentStatusReason: 'ACTIVATION_REJECTED' });
  t.match(json(await sandbox.request('POST', '/v1/enrollment/activate', undefined, as)), { status: 'INACTIVE', reason: 'ACTIVATION_REJECTED' }, 'activate cannot undo it');
  t.equal(gateError(sandbox, userId)?.statusCode, 403);
  t.match(gateError(sandbox, userId)?.message, /ACTIVATION_REJECTED/);

  // A business name with the magic word is rejected as well; a plain one in the same run is approved.
  const business = await createUser(sandbox, 'BUSINESS', 'Reject Holdings Ltd');
  const businessRequest = await startEnrollment(sandbox, business.as);
  await writeEntries(sandbox, business.as, businessRequest, await businessEntries('Reject Holdings Ltd'));
  t.equal((await submit(sandbox, business.as, businessRequest)).statusCode, 200);
  await advance(sandbox, 5_000);
  t.match(await enrollment(sandbox, business.as), { status: 'INACTIVE', reason: 'ACTIVATION_REJECTED' });
});

t.test('forced review decisions through the control plane', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const decide = (id: string, decision: unknown) =>
    sandbox.app.inject({ method: 'POST', url: `/_emulator/information-requests/${id}/decision`, payload: { decision } });

  // Approved while still PROCESSING_SUBMISSION, even with a magic name; the pending jobs do nothing later.
  const rita = await createUser(sandbox, 'PERSON', 'Rita Example');
  const ritaRequest = await startEnrollment(sandbox, rita.as);
  const onDraft = await decide(ritaRequest, 'APPROVED');
  t.equal(onDraft.statusCode, 409, 'a DRAFT cannot be decided');
  t.match(json(onDraft), { errorCode: 'INVALID_REQUEST', message: /DRAFT/ });
  await writeEntries(sandbox, rita.as, ritaRequest, await personEntries('Rita REJECT Example'));
  t.equal((await submit(sandbox, rita.as, ritaRequest)).statusCode, 200);
  const forced = await decide(ritaRequest, 'APPROVED');
  t.equal(forced.statusCode, 200, forced.body);
  t.match(json(forced), { id: ritaRequest, status: 'COMPLETED', decision: 'APPROVED' });
  t.equal((await enrollment(sandbox, rita.as)).status, 'ACTIVE');
  await advance(sandbox, 10_000);
  t.match(await enrollment(sandbox, rita.as), { status: 'ACTIVE', informationRequest: { decision: 'APPROVED' } }, 'the canceled review did not run');
  const twice = await decide(ritaRequest, 'REJECTED');
  t.equal(twice.statusCode, 409, 'a COMPLETED request cannot be decided again');

  // Rejected while PENDING_REVIEW although the name would pass.
  const sam = await createUser(sandbox, 'PERSON', 'Sam Example');
  const samRequest = await startEnrollment(sandbox, sam.as);
  await writeEntries(sandbox, sam.as, samRequest, await personEntries('Sam Example'));
  await submit(sandbox, sam.as, samRequest);
  await advance(sandbox, 1_000);
  t.equal(json(await getDetail(sandbox, sam.as, samRequest)).status, 'PENDING_REVIEW');
  t.match(json(await decide(samRequest, 'REJECTED')), { status: 'COMPLETED', decision: 'REJECTED' });
  t.match(await enrollment(sandbox, sam.as), { status: 'INACTIVE', reason: 'ACTIVATION_REJECTED', reasonDetail: /control plane/ });

  t.equal((await decide('ir_unknown', 'APPROVED')).statusCode, 404);
  const bad = await decide(samRequest, 'MAYBE');
  t.equal(bad.statusCode, 400);
  t.equal(json(bad).validationErrors[0].fieldRef, 'decision');
});

t.test('revocation through the control plane', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const revoke = (userId: string, body?: unknown) =>
    sandbox.app.inject({ method: 'POST', url: `/_emulator/enrollment/${userId}/revoke`, ...(body === undefined ? {} : { payload: body as object }) });

  const revoked = await revoke('usr_jane');
  t.equal(revoked.statusCode, 200, revoked.body);
  t.match(json(revoked), { id: 'enr_jane', status: 'INACTIVE', reason: 'REVOKED', reasonDetail: /revoked/ });
  t.match(await enrollment(sandbox, AS_JANE), { status: 'INACTIVE', reason: 'REVOKED' });
  t.match((await usersList(sandbox)).find((user) => user.userId === 'usr_jane'), { enrollmentStatus: 'INACTIVE', enrollmentStatusReason: 'REVOKED' });
  t.equal(gateError(sandbox, 'usr_jane')?.statusCode, 403, 'a revoked user cannot move money');
  t.equal((await revoke('usr_jane')).statusCode, 409, 'already revoked');

  const custom = await revoke('usr_acme', { reasonDetail: 'Compliance hold' });
  t.match(json(custom), { reason: 'REVOKED', reasonDetail: 'Compliance hold' });

  const fresh = await createUser(sandbox, 'PERSON', 'Fresh Example');
  await startEnrollment(sandbox, fresh.as);
  const inactive = await revoke(fresh.userId);
  t.equal(inactive.statusCode, 409, 'an INACTIVE enrollment cannot be revoked');
  t.match(json(inactive).message, /only an ACTIVE enrollment/);
  t.equal((await revoke('usr_nobody')).statusCode, 404);

  // A failed revocation of a user whose enrollment had not started leaves nothing behind.
  const untouched = await createUser(sandbox, 'PERSON', 'Untouched Example');
  t.equal((await revoke(untouched.userId)).statusCode, 409);
  t.notOk((await usersList(sandbox)).some((user) => user.userId === untouched.userId), 'the rolled-back request did not start the enrollment');
});

t.test('access rules: scopes, other users, other programmes', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const acmeRequest = (await enrollment(sandbox, {})).informationRequest.id;

  const otherUser = await getDetail(sandbox, AS_JANE, acmeRequest);
  t.equal(otherUser.statusCode, 403, 'another user of the programme');
  t.equal(json(otherUser).errorCode, 'FORBIDDEN');
  t.equal((await writeEntries(sandbox, AS_JANE, acmeRequest, [{ key: 'businessName', value: 'X' }])).statusCode, 403);
  t.equal((await submit(sandbox, AS_JANE, acmeRequest)).statusCode, 403);
  const otherProgramme = await getDetail(sandbox, AS_OTHER, acmeRequest);
  t.equal(otherProgramme.statusCode, 404, 'another programme');
  t.equal(json(otherProgramme).errorCode, 'NOT_FOUND');
  t.equal((await getDetail(sandbox, {}, 'ir_does_not_exist')).statusCode, 404);
  t.equal((await submit(sandbox, {}, 'ir_does_not_exist')).statusCode, 404);

  const noUserHeader = await sandbox.request('GET', '/v1/enrollment', undefined, MULTI);
  t.equal(json(noUserHeader).errorCode, 'USER_ID_HEADER_REQUIRED');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/v1/enrollment' })).statusCode, 401);

  const readOnly = json(await sandbox.request('POST', '/v1/auth/token', { scopes: ['enrollment:read'] }, AS_JANE)).accessToken;
  t.equal((await sandbox.request('GET', '/v1/enrollment', undefined, { bearer: readOnly })).statusCode, 200, 'bearer with enrollment:read');
  const activate = await sandbox.request('POST', '/v1/enrollment/activate', undefined, { bearer: readOnly });
  t.equal(activate.statusCode, 403, 'activate needs enrollment:write');
  const accountsOnly = json(await sandbox.request('POST', '/v1/auth/token', { scopes: ['accounts:read'] }, AS_JANE)).accessToken;
  t.equal((await sandbox.request('GET', '/v1/information-requests', undefined, { bearer: accountsOnly })).statusCode, 403);
});
