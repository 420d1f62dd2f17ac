import type { AuthPolicy } from './auth.js';
import { TAGS } from './openapi.js';
import { loadExamples, type ExamplesFile } from './openapi-examples.js';

// The last pass over the generated OpenAPI document (docs/openapi.md): what fastify-type-provider-zod and
// @fastify/swagger produce is valid, but third-party tools (Spectral, Redocly, Ajv, client generators) need
// more. It holds no domain knowledge: what an area knows of its own operations (the payout headers, the
// webhook, its ids' prefixes, what its parameters mean) the area gives as a `DocumentPart` through its
// descriptor, and this pass assembles the parts (docs/openapi.md#what-each-area-adds). It:
// - drops the fragment-only `$id` and the `$schema` the generator stamps on every component (JSON Schema
//   2020-12 refuses a `$id` that is only a fragment), and keeps one schema per resource: the `XInput` copy
//   of a component goes when it equals `X`, takes the name `X` when only the input side is used, and any
//   component no operation reaches is dropped; components are listed in name order;
// - writes query integers (written as digits, parsed by zod) as `type: integer` with their bounds and a
//   numeric default;
// - keeps each operation's `operationId` (written in its route's schema, docs/openapi.md#operation-ids) after
//   its responses, declares the tags at the top level, marks optional bodies optional, declares `X-Service-User-Id`
//   on the user-scoped operations, and applies the parts' rewrites of their operations and their response headers;
// - types file downloads as binary strings;
// - gives every parameter a description and every path and header parameter an example (fixture ids, or the
//   id of the operation's own success example), every `const` its one-value `enum`, each `oneOf` whose
//   branches differ by one property its `discriminator`, counts `minimum: 0`, and writes patterns without `\/`
//   (docs/openapi.md#parameters-and-schemas);
// - lists the component schemas in name order.

export type Json = Record<string, any>;

/** What a parameter means, and the example of a path or header parameter. */
export interface ParameterNote {
  description: string;
  example?: string | number;
}

/**
 * What one module (a domain, the control plane, faults, sessions) adds to the document, given through its descriptor
 * (`openapi` in src/domains/domain.ts) and assembled by `finishDocument` (docs/openapi.md#what-each-area-adds).
 * Operations are named `METHOD /path`, the path as the document writes it (`/v1/accounts/{accountId}`).
 */
export interface DocumentPart {
  /**
   * What a parameter the route schemas leave undescribed means, by name (one meaning per name across the API) or by
   * `METHOD /path name` when the name means something else on one operation; a path parameter's example is a fixture id.
   */
  parameters?: Record<string, ParameterNote>;
  /** The id prefix (src/lib/ids.ts) of each path parameter that names one of the module's resources, to match it to an example's id. */
  idPrefixes?: Record<string, string>;
  /** Resource ids a success example names besides its `id` (a statement link names its file in its url). */
  exampleIds?: (value: Json) => string[];
  /** Integer properties that may be negative: every other integer is a count, size, duration, number or status. */
  signedIntegers?: string[];
  /** What the generator cannot write of an operation (a body the route reads raw, headers it checks), by operation. */
  operations?: Record<string, (operation: Json) => void>;
  /** The headers an operation's answers carry, by operation and status. */
  responseHeaders?: Record<string, Record<string, Json>>;
  /** Additions to the whole document once every operation is finished (the webhooks, under OAS 3.1 `webhooks`). */
  finish?: (document: Json) => void;
}

/** The parts merged; a key two parts give is refused at start, as a job type two modules declare is. */
interface Assembled {
  parameters: Record<string, ParameterNote>;
  idPrefixes: Record<string, string>;
  exampleIds: Array<(value: Json) => string[]>;
  signedIntegers: Set<string>;
  operations: Record<string, (operation: Json) => void>;
  responseHeaders: Record<string, Record<string, Json>>;
  finish: Array<(document: Json) => void>;
}

function assemble(parts: readonly DocumentPart[]): Assembled {
  const merged: Assembled = { parameters: {}, idPrefixes: {}, exampleIds: [], signedIntegers: new Set(), operations: {}, responseHeaders: {}, finish: [] };
  const once = <T>(table: Record<string, T>, add: Record<string, T> | undefined, what: string): void => {
    for (const [key, value] of Object.entries(add ?? {})) {
      if (Object.hasOwn(table, key)) throw new Error(`OpenAPI: ${what} ${key} is given by two modules`);
      table[key] = value;
    }
  };
  for (const part of parts) {
    once(merged.parameters, part.parameters, 'the note of parameter');
    once(merged.idPrefixes, part.idPrefixes, 'the id prefix of parameter');
    once(merged.operations, part.operations, 'a rewrite of');
    once(merged.responseHeaders, part.responseHeaders, 'the response headers of');
    for (const name of part.signedIntegers ?? []) merged.signedIntegers.add(name);
    if (part.exampleIds) merged.exampleIds.push(part.exampleIds);
    if (part.finish) merged.finish.push(part.finish);
  }
  return merged;
}

/**
 * What the route transform learns about each route, keyed `METHOD /openapi/{path}`: its auth policy, and
 * whether its body may be left out entirely (its zod body accepts undefined, as `POST /v1/auth/token`'s).
 */
export type RouteNotes = Map<string, { auth: AuthPolicy | undefined; optionalBody: boolean }>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
export const SCHEMA_REF = '#/components/schemas/';

export const USER_ID_PARAMETER = {
  name: 'X-Service-User-Id',
  in: 'header',
  required: false,
  description:
    'HMAC mode with a MULTI_USER key: the id of the user acted for (required on user-scoped operations; ' +
    '400 USER_ID_HEADER_REQUIRED when missing). Never with a SINGLE_USER key (400 USER_ID_HEADER_NOT_ALLOWED) ' +
    'and not used with a bearer token, which carries its user (interface 5.2; docs/authentication.md).',
  schema: { type: 'string', minLength: 1, maxLength: 128 },
  // the owner of the accounts the body examples use (acct_acme_usd, ...): a client that copies the examples works
  example: 'usr_acme',
};

const PROGRAMME_WIDE_USER_ID = {
  ...USER_ID_PARAMETER,
  description:
    'HMAC mode: the id of the user acted for. Left out, the call reads the whole programme ' +
    '(docs/money-in.md#programme-wide-transactions); never with a SINGLE_USER key (400 USER_ID_HEADER_NOT_ALLOWED).',
};

/** The last pass: the generated document made whole, with every module's part (`parts`, in the modules' order). */
export function finishDocument<T>(input: T, notes: RouteNotes, parts: readonly DocumentPart[]): T {
  const document = input as Json;
  const assembled = assemble(parts);
  document.components ??= {};
  document.components.schemas ??= {};
  for (const schema of Object.values(document.components.schemas as Json)) {
    delete schema.$id;
    delete schema.$schema;
  }
  document.components.parameters = { ...(document.components.parameters ?? {}), ServiceUserId: USER_ID_PARAMETER };
  // a local emulator has no support desk or mailbox: the contact is its own documentation, served at /docs
  const server = (document.servers as Json[] | undefined)?.[0]?.url as string | undefined;
  document.info = { ...document.info, contact: { name: 'service-sandbox documentation (docs/README.md in the package)', ...(server ? { url: `${server}/docs` } : {}) } };

  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      finishOperation(key, operation, notes.get(key), assembled);
    }
  }
  for (const finish of assembled.finish) finish(document);
  const examples = loadExamples();
  attachExamples(document, examples);
  describeParameters(document, examples, assembled);
  // every tag an operation uses is declared, those of TAGS with their description (the test asks for one)
  const used = usedTags(document);
  document.tags = [...TAGS.filter((tag) => used.has(tag.name)), ...[...used].filter((name) => !TAGS.some((tag) => tag.name === name)).map((name) => ({ name }))];
  walk(document, normalizeIntegers);
  walkSchemas(document, (schema) => tightenSchema(schema, assembled.signedIntegers));
  keepOneSchemaPerResource(document);
  addDiscriminators(document);
  // components in name order: zod registers a named schema when its module is first imported, so the order
  // they were registered in changes whenever a file moves or an import is added; the committed document must
  // not (docs/openapi.md#where-it-lives). After the discriminators, which add the branches they name.
  const byName = Object.entries(document.components.schemas as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  document.components.schemas = Object.fromEntries(byName);
  return input;
}

/**
 * Every parameter gets a description (the parts' note when the route schema has none) and every path parameter an
 * example: the id of the operation's own success example when it names one of that kind (so the path, the header
 * and the answer agree), else the fixture id of the note, else an id the examples' journey created.
 */
function describeParameters(document: Json, examples: ExamplesFile, assembled: Assembled): void {
  const { parameters: notesOf, idPrefixes } = assembled;
  const successIdsOf = (operationId: string | undefined): string[] => {
    const ids: string[] = [];
    for (const [status, named] of Object.entries(examples[operationId ?? '']?.responses ?? {})) {
      if (!status.startsWith('2')) continue;
      for (const example of Object.values(named)) {
        const value = example.value as Json | undefined;
        if (typeof value?.id === 'string') ids.push(value.id);
        if (value) for (const more of assembled.exampleIds) ids.push(...more(value));
      }
    }
    return ids;
  };
  const journeyIds = Object.keys(examples).flatMap(successIdsOf);
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation?.parameters) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const successIds = successIdsOf(operation.operationId);
      let ownPathExample = false;
      for (const parameter of operation.parameters as Json[]) {
        if (parameter.$ref) continue;
        const notes = notesOf[`${key} ${parameter.name}`] ?? notesOf[parameter.name];
        if (!parameter.description && notes) parameter.description = notes.description;
        if ((parameter.in !== 'path' && parameter.in !== 'header') || parameter.example !== undefined) continue;
        const prefix = idPrefixes[parameter.name];
        const own = prefix === undefined ? undefined : successIds.find((id) => id.startsWith(prefix));
        const journey = prefix === undefined ? undefined : journeyIds.find((id) => id.startsWith(prefix));
        const example = own ?? notes?.example ?? journey ?? parameter.schema?.enum?.[0];
        if (example !== undefined) parameter.example = example;
        if (own !== undefined) ownPathExample = true;
      }
      // the path names a resource of the user the examples were taken as (the onboarded user of the journey): the
      // user header says that user, so the operation's examples work together
      const user = examples[operation.operationId]?.user;
      if (ownPathExample && user) {
        operation.parameters = (operation.parameters as Json[]).map((parameter) =>
          parameter.$ref === '#/components/parameters/ServiceUserId' ? { ...USER_ID_PARAMETER, example: user } : parameter,
        );
      }
    }
  }
}

/**
 * Per schema node: `const` also as a one-value `enum`, counts >= 0 (the generator writes `z.number().int()` with the
 * safe-integer bounds, so a mock server (Prism) answered negative counts), `/` unescaped.
 */
function tightenSchema(schema: Json, signedIntegers: ReadonlySet<string>): void {
  if ('const' in schema && schema.enum === undefined) schema.enum = [schema.const];
  if (typeof schema.pattern === 'string') schema.pattern = schema.pattern.replace(/\\\//g, '/');
  // a closed set says all a pattern would (a beneficiary's country): generators that write both (openapi-zod-client's
  // z.enum(...).regex) do not compile
  if (Array.isArray(schema.enum) && typeof schema.pattern === 'string') delete schema.pattern;
  // zod's startsWith() writes a format no validator knows; its pattern already says it
  if (schema.format === 'starts_with') delete schema.format;
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Json)) {
    if (signedIntegers.has(name)) continue;
    for (const branch of [property, ...((property?.anyOf ?? []) as Json[])]) {
      if (branch?.type === 'integer' && !(branch.minimum >= 0)) branch.minimum = 0;
    }
  }
}

/**
 * A `discriminator` on each `oneOf` of inline branches that one required property tells apart (a constant per
 * branch): the branches become named schemas (`<Component><Property...><Value>`, e.g. `BeneficiaryInstrumentBankAccount`;
 * one name for identical branches) and the mapping names each value's schema, so generators build tagged unions.
 * Nested unions first, so a branch is named after the place it first appears in, not after its hoisted parent.
 */
function addDiscriminators(document: Json): void {
  const schemas = document.components.schemas as Json;
  const hoisted = new Map<string, string>();
  const hoist = (schema: Json, name: string): string => {
    const text = JSON.stringify(schema);
    const known = hoisted.get(text);
    if (known) return known;
    let unique = name;
    for (let n = 2; schemas[unique] !== undefined; n += 1) unique = `${name}${n}`;
    schemas[unique] = schema;
    hoisted.set(text, unique);
    return unique;
  };
  const visit = (node: unknown, base: string): void => {
    if (Array.isArray(node)) for (const item of node) visit(item, base);
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as Json;
    for (const [key, child] of Object.entries(schema)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'properties') for (const [name, property] of Object.entries(child as Json)) visit(property, `${base}${pascal(name)}`);
      else visit(child, base);
    }
    if (!Array.isArray(schema.oneOf) || schema.discriminator) return;
    const property = discriminatingProperty(schema.oneOf as Json[]);
    if (!property) return;
    const mapping: Record<string, string> = {};
    schema.oneOf = (schema.oneOf as Json[]).map((branch) => {
      const value = constantOf(branch, property)!;
      mapping[value] = `${SCHEMA_REF}${hoist(branch, `${base}${pascal(value)}`)}`;
      return { $ref: mapping[value] };
    });
    schema.discriminator = { propertyName: property, mapping };
  };
  for (const name of Object.keys(schemas)) visit(schemas[name], name);
}

/** BANK_ACCOUNT -> BankAccount, instruments -> Instruments. */
function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => (word === word.toUpperCase() ? word.charAt(0) + word.slice(1).toLowerCase() : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
}

/** The string a branch requires `name` to be, if it requires one. */
function constantOf(branch: Json, name: string): string | undefined {
  const property = branch.properties?.[name];
  if (!property || !(branch.required as string[] | undefined)?.includes(name)) return undefined;
  const value = 'const' in property ? property.const : Array.isArray(property.enum) && property.enum.length === 1 ? property.enum[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The property every inline branch requires with a constant of its own, if there is one. */
function discriminatingProperty(branches: Json[]): string | undefined {
  const first = branches[0];
  if (!first?.properties || branches.some((branch) => branch.$ref)) return undefined;
  for (const name of Object.keys(first.properties as Json)) {
    const values = branches.map((branch) => constantOf(branch, name));
    if (values.every((value) => value !== undefined) && new Set(values).size === values.length) return name;
  }
  return undefined;
}

function finishOperation(key: string, operation: Json, note: { auth: AuthPolicy | undefined; optionalBody: boolean } | undefined, assembled: Assembled): void {
  const auth = note?.auth;
  // @fastify/swagger writes the route's operationId first; the document has always had it after the
  // responses, so the committed openapi/openapi.json does not churn (docs/openapi.md#where-it-lives)
  const { operationId } = operation;
  delete operation.operationId;
  operation.operationId = operationId;
  if (note?.optionalBody && operation.requestBody) operation.requestBody.required = false;
  const parameters: Json[] = (operation.parameters ??= []);
  const hmacUser = auth && (auth.modes.includes('hmac') || auth.modes.includes('payout'));
  if (hmacUser && auth.user === 'required') parameters.push({ $ref: '#/components/parameters/ServiceUserId' });
  if (hmacUser && auth.user === 'user-or-programme') parameters.push(PROGRAMME_WIDE_USER_ID);

  // what the operation's module writes that the generator cannot (docs/openapi.md#what-each-area-adds)
  assembled.operations[key]?.(operation);
  const headers = assembled.responseHeaders[key];
  if (headers) {
    for (const [status, named] of Object.entries(headers)) {
      const response = operation.responses?.[status];
      if (response) response.headers = { ...(response.headers ?? {}), ...structuredClone(named) };
    }
  }
  // A file download: the body is the file's bytes (errors stay JSON: http/openapi.ts); a page or a plain-text summary is a string
  for (const [status, response] of Object.entries((operation.responses ?? {}) as Json)) {
    if (!status.startsWith('2') || !response.content) continue;
    for (const [type, media] of Object.entries(response.content as Json)) {
      if (type === 'text/csv' || type === 'application/pdf') media.schema = { type: 'string', format: 'binary' };
      else if (type === 'text/html') media.schema = { type: 'string' };
      // a copy: the generator shares one media object between the types of `produces`, JSON included
      else if (type === 'text/plain') response.content[type] = { ...media, schema: { type: 'string' } };
    }
  }
  if (parameters.length === 0) delete operation.parameters;
}

/** The schema without its null branch, or the same object when it has none. */
export function dropNull(schema: Json): Json {
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const types = schema.type.filter((type: string) => type !== 'null');
    return { ...schema, type: types.length === 1 ? types[0] : types, ...(schema.enum ? { enum: schema.enum.filter((value: unknown) => value !== null) } : {}) };
  }
  if (Array.isArray(schema.anyOf) && schema.anyOf.some((branch: Json) => branch.type === 'null')) {
    const rest = schema.anyOf.filter((branch: Json) => branch.type !== 'null');
    const { anyOf: _anyOf, ...outer } = schema;
    return rest.length === 1 ? { ...rest[0], ...outer } : { ...outer, anyOf: rest };
  }
  return schema;
}

/** Real answers of the default fixtures (openapi/examples.json) on their operations' bodies and statuses. */
function attachExamples(document: Json, examples: ExamplesFile): void {
  for (const item of Object.values((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      const found = operation && examples[operation.operationId];
      if (!found) continue;
      const requestMedia = operation.requestBody?.content && Object.values(operation.requestBody.content as Json)[0];
      if (found.request && requestMedia) requestMedia.examples = found.request;
      for (const [status, named] of Object.entries(found.responses)) {
        const response = operation.responses?.[status] ?? operation.responses?.default;
        const media = response?.content?.['application/json'];
        if (!media) continue;
        media.examples = { ...(media.examples ?? {}), ...named };
      }
    }
  }
}

function usedTags(document: Json): Set<string> {
  const tags = new Set<string>();
  for (const item of Object.values({ ...(document.paths ?? {}), ...(document.webhooks ?? {}) } as Json)) {
    for (const method of METHODS) for (const tag of (item[method]?.tags ?? []) as string[]) tags.add(tag);
  }
  return tags;
}

/** Query integers are parsed from digits by zod; the document shows the integer they stand for. */
function normalizeIntegers(schema: Json): void {
  if (schema.type !== 'integer') return;
  delete schema.pattern;
  if (typeof schema.default === 'string' && /^\d+$/.test(schema.default)) schema.default = Number(schema.default);
}

/** As walk, but not into example values, which are data, not schemas. */
function walkSchemas(value: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(value)) for (const item of value) walkSchemas(item, visit);
  else if (value !== null && typeof value === 'object') {
    visit(value as Json);
    for (const [key, item] of Object.entries(value as Json)) if (key !== 'example' && key !== 'examples') walkSchemas(item, visit);
  }
}

function walk(value: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(value)) for (const item of value) walk(item, visit);
  else if (value !== null && typeof value === 'object') {
    visit(value as Json);
    for (const item of Object.values(value as Json)) walk(item, visit);
  }
}

/** Rewrite every `$ref` to a component schema through `rename` (old name -> new name). */
function renameRefs(value: unknown, rename: Map<string, string>): void {
  walk(value, (node) => {
    if (typeof node.$ref === 'string' && node.$ref.startsWith(SCHEMA_REF)) {
      const target = rename.get(node.$ref.slice(SCHEMA_REF.length));
      if (target) node.$ref = `${SCHEMA_REF}${target}`;
    }
  });
}

/** Component schemas reachable from the operations and webhooks. */
function reachable(document: Json): Set<string> {
  const seen = new Set<string>();
  const queue: unknown[] = [document.paths, document.webhooks, document.components?.parameters];
  while (queue.length > 0) {
    walk(queue.pop(), (node) => {
      if (typeof node.$ref !== 'string' || !node.$ref.startsWith(SCHEMA_REF)) return;
      const name = node.$ref.slice(SCHEMA_REF.length);
      if (seen.has(name)) return;
      seen.add(name);
      queue.push(document.components.schemas[name]);
    });
  }
  return seen;
}

function keepOneSchemaPerResource(document: Json): void {
  const schemas = document.components.schemas as Json;
  // the input copy equal to its output twin (refs to other input copies read as their twins) is the same schema
  const same = new Map<string, string>();
  const normalized = (schema: unknown) => JSON.stringify(schema).replace(/("#\/components\/schemas\/[A-Za-z0-9_]+?)Input"/g, '$1"');
  for (const name of Object.keys(schemas)) {
    const base = name.replace(/Input$/, '');
    if (base !== name && schemas[base] && normalized(schemas[name]) === normalized(schemas[base])) same.set(name, base);
  }
  renameRefs(document, same);
  for (const name of same.keys()) delete schemas[name];

  // an input copy used where its output twin is not takes the plain name
  const used = reachable(document);
  const promote = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const base = name.replace(/Input$/, '');
    if (base !== name && used.has(name) && !used.has(base)) promote.set(name, base);
  }
  for (const [from, to] of promote) schemas[to] = schemas[from];
  for (const from of promote.keys()) delete schemas[from];
  renameRefs(document, promote);

  const kept = reachable(document);
  for (const name of Object.keys(schemas)) if (!kept.has(name)) delete schemas[name];
}
