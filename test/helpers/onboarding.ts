import type { LightMyRequestResponse } from 'fastify';
import { CREDENTIALS, json, type Identity, type TestApp } from '../helper.js';
import { documentValue, makePdf } from './pdf.js';

// Shared steps of the onboarding tests (enrollment and information requests): create a user through the
// API with the MULTI_USER key, act as it, start its enrollment, write entries.

export const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };

export interface NewUser {
  userId: string;
  as: Identity;
}

export async function createUser(sandbox: TestApp, type: 'PERSON' | 'BUSINESS', name: string, externalId = `ext-${name}`): Promise<NewUser> {
  const response = await sandbox.request('POST', '/v1/auth/users', { externalId, type, name }, MULTI);
  if (response.statusCode !== 201) throw new Error(`user creation failed: ${response.statusCode} ${response.body}`);
  const userId = json(response).userId as string;
  return { userId, as: { ...MULTI, userId } };
}

/** GET /v1/enrollment and return the id of the enrollment's information request. */
export async function startEnrollment(sandbox: TestApp, as: Identity): Promise<string> {
  const response = await sandbox.request('GET', '/v1/enrollment', undefined, as);
  if (response.statusCode !== 200) throw new Error(`enrollment read failed: ${response.statusCode} ${response.body}`);
  return json(response).informationRequest.id as string;
}

export function writeEntries(sandbox: TestApp, as: Identity, requestId: string, entries: Array<{ key: string; value: unknown }>): Promise<LightMyRequestResponse> {
  return sandbox.request('POST', `/v1/information-requests/${requestId}/entries`, { entries }, as);
}

export function getDetail(sandbox: TestApp, as: Identity, requestId: string): Promise<LightMyRequestResponse> {
  return sandbox.request('GET', `/v1/information-requests/${requestId}`, undefined, as);
}

export function submit(sandbox: TestApp, as: Identity, requestId: string): Promise<LightMyRequestResponse> {
  return sandbox.request('POST', `/v1/information-requests/${requestId}/submit`, undefined, as);
}

export function requirement(detail: { requirements: Array<{ key: string }> }, key: string): any {
  const found = detail.requirements.find((item) => item.key === key);
  if (!found) throw new Error(`no requirement ${key}`);
  return found;
}

export const US_ADDRESS = { line1: '500 Market Street', line2: 'Suite 200', city: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };

export async function personEntries(legalName: string): Promise<Array<{ key: string; value: unknown }>> {
  return [
    { key: 'legalName', value: legalName },
    { key: 'dateOfBirth', value: '1990-05-17' },
    { key: 'address', value: US_ADDRESS },
    { key: 'taxId', value: { country: 'US', number: '123-45-6789' } },
    { key: 'identityDocument', value: documentValue(await makePdf(), 'passport.pdf') },
  ];
}

export async function businessEntries(businessName: string): Promise<Array<{ key: string; value: unknown }>> {
  return [
    { key: 'businessName', value: businessName },
    { key: 'registrationNumber', value: 'C-4581234' },
    { key: 'incorporationCountry', value: 'US' },
    { key: 'address', value: US_ADDRESS },
    {
      key: 'beneficialOwners',
      value: [
        { name: 'Ada Founder', dateOfBirth: '1985-02-03', ownershipPercent: 60 },
        { name: 'Ben Partner', dateOfBirth: '1979-11-30', ownershipPercent: 40 },
      ],
    },
    { key: 'formationDocument', value: documentValue(await makePdf({ pages: 2 }), 'certificate-of-incorporation.pdf') },
  ];
}
