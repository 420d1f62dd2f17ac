import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startPrism } from '../helpers/prism.js';
import { PROJECT_ROOT } from '../helpers/server-process.js';

// Prism's mock on the committed document (docs/openapi.md#prism): `prism mock openapi/openapi.json` answers
// every operation, each request built from the document alone (path and header examples, required query
// values, the request body example, the security headers present), with its documented success status and a
// body that validates against that answer's own schema (Ajv 2020 with formats): the examples it serves are valid
// and, where an answer has none, what Prism generates from the schema is too.

type Json = Record<string, any>;
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;
const DOCUMENT = path.join(PROJECT_ROOT, 'openapi', 'openapi.json');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
// Control-plane operations whose required body has no example in the document: a valid body for each, or
// Prism's request validation refuses the call before the mock answers (docs/control-plane.md).
const BODIES: Record<string, unknown> = {
  emulatorTriggerWebhook: { transactionId: 'txn_hist_acme_usd_001', eventType: 'transaction_created' },
  emulatorReportListenAttempt: { attemptId: 'att_1', status: 200, latencyMs: 12 },
  emulatorActAs: { userId: 'usr_acme', method: 'GET', path: '/v1/accounts' },
  emulatorDecideInformationRequest: { decision: 'APPROVED' },
  emulatorForceTransactionStatus: { status: 'COMPLETED' },
  emulatorInjectTransaction: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '100.00' },
  emulatorReturnTransaction: { reasonCode: 'R01' },
  emulatorSetProviderReady: { ready: true },
  emulatorSaveSnapshot: { name: 'before-checkout' },
  emulatorAddFaultRule: { match: { path: '/v1/transactions' }, effect: { type: 'status', status: 503 } },
};
// Prism has no serializer for this media type (500 "Cannot find serializer for application/vnd.sqlite3"): a
// limit of the tool, not of the document; the snapshot file is binary and has no schema to validate.
const PRISM_CANNOT_SERVE = new Set(['emulatorExportSnapshot']);

/** A value for a parameter without an example: its default, first enum value, or one of its format. */
function valueOf(parameter: Json): string {
  if (parameter.example !== undefined) return String(parameter.example);
  const schema: Json = parameter.schema ?? {};
  if (schema.default !== undefined) return String(schema.default);
  if (schema.enum) return String(schema.enum[0]);
  if (schema.format === 'date') return parameter.name === 'endDate' ? '2026-02-28' : '2026-02-01';
  if (schema.format === 'date-time') return '2026-03-01T12:00:00Z';
  if (schema.type === 'integer' || schema.type === 'number') return String(schema.minimum ?? 1);
  return `${parameter.name}-1`;
}

t.test('prism mock answers every operation with its success status and a body valid against its schema', async (t) => {
  const document: Json = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'urn:service-sandbox:doc', components: document.components });
  const compile = (schema: unknown) => ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"urn:service-sandbox:doc#/components/')));

  const mock = (await startPrism(t, ['mock', DOCUMENT], 'prism mock serves the document')).url;

  let checked = 0;
  for (const [route, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS.filter((name) => item[name])) {
      const operation: Json = item[method];
      const label = `${method.toUpperCase()} ${route} (${operation.operationId})`;
      const parameters: Json[] = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((parameter: Json) =>
        parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()] : parameter,
      );
      let target = route.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(valueOf(parameters.find((p) => p.in === 'path' && p.name === name) ?? { name })));
      const query = new URLSearchParams(parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, valueOf(p)]));
      if ([...query].length) target += `?${query}`;
      const headers: Record<string, string> = {};
      for (const parameter of parameters.filter((p) => p.in === 'header' && p.required)) headers[parameter.name] = valueOf(parameter);
      for (const requirement of (operation.security ?? document.security ?? []).slice(0, 1)) {
        for (const scheme of Object.keys(requirement)) {
          const declared = document.components.securitySchemes[scheme];
          if (declared.type === 'apiKey' && declared.in === 'header') headers[declared.name] ??= 'mock';
          if (declared.type === 'http') headers.authorization = 'Bearer mock';
        }
      }
      let body: string | undefined;
      const content = operation.requestBody?.content as Json | undefined;
      if (content) {
        const [mediaType, media] = Object.entries(content)[0] as [string, Json];
        const example = media.examples ? (Object.values(media.examples)[0] as Json).value : (media.example ?? BODIES[operation.operationId]);
        if (example !== undefined || operation.requestBody.required) {
          headers['content-type'] = mediaType;
          body = typeof example === 'string' ? example : JSON.stringify(example ?? {});
        }
      }
      if (PRISM_CANNOT_SERVE.has(operation.operationId)) continue;
      const answer = await fetch(`${mock}${target}`, { method: method.toUpperCase(), headers, body });
      const successes = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
      const text = await answer.text();
      t.ok(successes.includes(String(answer.status)), `${label}: ${answer.status}, a documented success (${successes.join(', ')}) ${successes.includes(String(answer.status)) ? '' : text.slice(0, 300)}`);
      const media = operation.responses[String(answer.status)]?.content?.['application/json'];
      if (!media) continue;
      const validate = compile(media.schema);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = Symbol('not JSON');
      }
      t.ok(validate(value), `${label}: the ${answer.status} body validates against its schema ${validate.errors ? JSON.stringify(validate.errors).slice(0, 400) : ''}`);
      checked += 1;
    }
  }
  t.ok(checked > 60, `${checked} JSON answers checked`);
});
