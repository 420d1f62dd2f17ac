import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { envelopeSchema } from '../../http/pagination.js';
import { userOf } from '../../http/auth.js';
import {
  beneficiaryParams,
  beneficiarySchema,
  createBeneficiaryBody,
  instrumentsResponseSchema,
  listBeneficiariesQuery,
} from './beneficiaries.schema.js';
import { createBeneficiary, getBeneficiary, listBeneficiaries, listBeneficiaryInstruments } from './beneficiaries.service.js';

export const beneficiariesRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/v1/beneficiaries',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'beneficiaries:write', user: 'required' } },
      schema: {
        operationId: 'createBeneficiary',
        tags: ['Beneficiaries'],
        summary: 'Create a beneficiary with 1-10 instruments',
        description:
          'PERSON (firstName, lastName) or BUSINESS (businessName). Bank instruments: US accounts need a checksum-valid ABA ' +
          'routingNumber and a 4-17 digit accountNumber; others an iban (mod-97 checked) or accountNumber, and the ' +
          'beneficiary address. Wallets: network and a 0x address. Account numbers are returned masked (last 4).',
        body: createBeneficiaryBody,
        response: { 201: beneficiarySchema, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const beneficiary = createBeneficiary(ctxOf(request), userOf(request), request.body);
      return reply.status(201).send(beneficiary);
    },
  );

  app.get(
    '/v1/beneficiaries',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'beneficiaries:read', user: 'required' } },
      schema: {
        operationId: 'listBeneficiaries',
        tags: ['Beneficiaries'],
        summary: 'List the caller\'s beneficiaries',
        description: 'createdAt ascending, then id. pageSize 1-100, default 25.',
        querystring: listBeneficiariesQuery,
        response: { 200: envelopeSchema(beneficiarySchema), ...errorResponses(403) },
      },
    },
    async (request) => listBeneficiaries(ctxOf(request), userOf(request), request.query),
  );

  app.get(
    '/v1/beneficiaries/:beneficiaryId',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'beneficiaries:read', user: 'required' } },
      schema: {
        operationId: 'getBeneficiary',
        description: 'A beneficiary of the caller (interface 2.12) with its instruments. 404 for an id of another user or programme.',
        tags: ['Beneficiaries'],
        summary: 'Get a beneficiary (interface 4.14)',
        params: beneficiaryParams,
        response: { 200: beneficiarySchema, ...errorResponses(403, 404) },
      },
    },
    async (request) => getBeneficiary(ctxOf(request), userOf(request), request.params.beneficiaryId),
  );

  app.get(
    '/v1/beneficiaries/:beneficiaryId/instruments',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'beneficiaries:read', user: 'required' } },
      schema: {
        operationId: 'listBeneficiaryInstruments',
        description: 'The instruments of one of the caller\'s beneficiaries as { instruments: [...] } (interface 4.15), in the order they were given.',
        tags: ['Beneficiaries'],
        summary: 'List a beneficiary\'s instruments (interface 4.15)',
        params: beneficiaryParams,
        response: { 200: instrumentsResponseSchema, ...errorResponses(403, 404) },
      },
    },
    async (request) => listBeneficiaryInstruments(ctxOf(request), userOf(request), request.params.beneficiaryId),
  );
};
