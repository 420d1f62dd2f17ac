// `npm run new:endpoint`: writes a new endpoint from the recipe (docs/architecture.md#where-new-code-goes), as moto's
// scripts/scaffold.py does: its schema, service, route and test files, and wires the route plugin into the owner's
// descriptor. Then fill in the TODOs, write the docs line, and run `npm run generate`.
//   npm run new:endpoint -- --method GET --path /v1/accounts/{accountId}/widgets --operation-id listAccountWidgets
//   npm run new:endpoint -- --method POST --path /_emulator/clock/nudge --operation-id emulatorNudgeClock --area clock
// Flags (asked for when missing and stdin is a terminal):
//   --method GET|POST|PUT|DELETE   --path /v1/... or /_emulator/...   --operation-id camelCase (emulator... for the control plane)
//   --domain NAME   the /v1 owner (default: the owner rule below)   --area NAME   the control-plane area (default: the first segment)
//   --tag NAME      the OpenAPI tag (default: the first tag of the owner's routes file)
//   --root DIR      write into another checkout (a scratch copy)       --dry-run   print the files, write nothing
// Owner rule (docs/architecture.md#who-owns-a-path): a /v1 path belongs to the domain of the last resource it names,
// not to its parent: /v1/accounts/{accountId}/transactions belongs to transactions, /v1/accounts/{accountId}/statement
// to statements, /v1/accounts/{accountId} to accounts. /v1/sandbox/... belongs to sandbox.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function flags(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) continue;
    const key = arg.slice(2);
    if (key === 'dry-run') out.dryRun = true;
    else out[key.replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = argv[(i += 1)];
  }
  return out;
}

const pascal = (text) => text.replace(/(^|[-_ ])([a-z])/g, (_, __, c) => c.toUpperCase()).replace(/[-_ ]/g, '');
const camel = (text) => pascal(text).replace(/^[A-Z]/, (c) => c.toLowerCase());
const kebab = (text) => text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** The domain folder that owns a /v1 path: the last literal segment that names a domain folder (the owner rule). */
export function ownerOf(route, domains) {
  const segments = route.split('/').filter((segment) => segment && segment !== 'v1' && !segment.startsWith('{'));
  if (segments[0] === 'sandbox') return 'sandbox';
  for (const segment of [...segments].reverse()) {
    const candidates = [segment, segment.replace(/s$/, ''), `${segment}s`, segment.replace(/-/g, '_')];
    const found = candidates.find((name) => domains.includes(name));
    if (found) return found;
  }
  const statementLike = segments.at(-1) === 'statement' ? 'statements' : undefined;
  return statementLike && domains.includes(statementLike) ? statementLike : undefined;
}

/** `jobs-summary` in the area `jobs` is the part `summary` (files `jobs.summary.*.ts`), `nudge-clock` in `clock` is `nudge`. */
export function partWithoutArea(part, area) {
  const names = [area, area.replace(/ies$/, 'y'), area.replace(/s$/, '')];
  for (const name of names) {
    if (part.startsWith(`${name}-`)) return part.slice(name.length + 1);
    if (part.endsWith(`-${name}`)) return part.slice(0, -(name.length + 1));
  }
  return part;
}

const VERBS = /^(get|list|create|update|delete|put|post|run|set|read)-(?=.)/;

/** `get-beneficiary-summary` is the part `beneficiary-summary` (then without the area's name: `summary`). */
export function withoutVerb(part) {
  return part.replace(VERBS, '');
}

/**
 * A schema id as docs/architecture.md#names-of-schemas asks: the resource's name without the verb (getAccountBalanceSummary:
 * AccountBalanceSummary); a control-plane one keeps the plain name (emulatorJobsSummary: JobsSummary).
 */
export function schemaIdOf(operationId) {
  const name = pascal(operationId.replace(/^emulator/, ''));
  const withoutVerb = name.replace(/^(Get|List|Create|Update|Delete|Put|Post|Run|Set|Read)(?=[A-Z])/, '');
  return withoutVerb || name;
}

/** Pages that name every area's paths without being any area's guide: figures, the index. */
const NOT_AN_AREA = new Set(['benchmarks.md', 'README.md']);

/** The docs page of an area: the page under docs/ that names the owner's existing paths most often. */
export function docsPageOf(root, route) {
  const prefix = route.split('/').slice(0, 3).join('/');
  const docs = path.join(root, 'docs');
  if (!existsSync(docs)) return undefined;
  let best;
  for (const name of readdirSync(docs).filter((file) => file.endsWith('.md') && !NOT_AN_AREA.has(file))) {
    const hits = readFileSync(path.join(docs, name), 'utf8').split(prefix).length - 1;
    if (hits > 0 && (!best || hits > best.hits)) best = { name, hits };
  }
  return best ? `docs/${best.name}` : undefined;
}

/** `<name>Params` a domain's schema already exports for `param` (docs/architecture.md#a-new-control-plane-route: imported, not written again). */
export function existingParams(root, param) {
  const domains = path.join(root, 'src', 'domains');
  if (!existsSync(domains)) return undefined;
  for (const domain of readdirSync(domains)) {
    const file = path.join(domains, domain, `${domain}.schema.ts`);
    if (!existsSync(file)) continue;
    const found = new RegExp(`export const (\\w+Params) = z\\s*\\.(?:strictObject|object)\\(\\{\\s*${param}:`).exec(readFileSync(file, 'utf8'));
    if (found) return { name: found[1], file: `src/domains/${domain}/${domain}.schema.ts` };
  }
  return undefined;
}

export function plan({ method, path: route, operationId, domain, area, tag, root }) {
  method = method.toUpperCase();
  if (!['GET', 'POST', 'PUT', 'DELETE'].includes(method)) throw new Error(`--method ${method}: GET, POST, PUT or DELETE`);
  if (!/^[a-z][A-Za-z0-9]+$/.test(operationId)) throw new Error(`--operation-id ${operationId}: camelCase, e.g. listAccountWidgets`);
  const controlPlane = route.startsWith('/_emulator/');
  if (!controlPlane && !route.startsWith('/v1/')) throw new Error(`--path ${route}: starts with /v1/ or /_emulator/`);
  if (controlPlane && !operationId.startsWith('emulator')) throw new Error(`--operation-id ${operationId}: a control-plane operation id starts with emulator`);
  const params = [...route.matchAll(/\{([A-Za-z]+)\}/g)].map((match) => match[1]);
  const fastifyPath = route.replace(/\{([A-Za-z]+)\}/g, ':$1');
  let part = kebab(operationId.replace(/^emulator/, ''));
  const Name = pascal(operationId.replace(/^emulator/, ''));
  const body = method === 'POST' || method === 'PUT';
  let folder;
  let owner;
  let descriptor;
  let testFile;
  if (controlPlane) {
    owner = area ?? route.split('/')[2];
    part = partWithoutArea(withoutVerb(part), owner);
    folder = 'src/emulator';
    descriptor = 'src/emulator/emulator.domain.ts';
    testFile = `test/emulator/${owner}.${part}.test.ts`;
  } else {
    const domains = readdirSync(path.join(root, 'src', 'domains'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    owner = domain ?? ownerOf(route, domains);
    if (!owner) throw new Error(`--path ${route}: no domain folder under src/domains owns it (owner rule: the last resource it names); pass --domain NAME`);
    if (!domains.includes(owner)) throw new Error(`--domain ${owner}: no folder src/domains/${owner} (a new domain: docs/architecture.md#a-new-domain)`);
    part = partWithoutArea(withoutVerb(part), owner);
    folder = `src/domains/${owner}`;
    descriptor = `${folder}/${owner}.domain.ts`;
    testFile = `test/domains/${owner}/${owner}.${part}.test.ts`;
  }
  const base = `${owner}.${part}`;
  const up = controlPlane ? '..' : '../..';
  const routesOf = (file) => (existsSync(path.join(root, file)) ? readFileSync(path.join(root, file), 'utf8') : '');
  tag ??= /tags: \['([^']+)'\]/.exec(routesOf(`${folder}/${owner}.routes.ts`))?.[1] ?? (controlPlane ? 'Emulator' : undefined);
  // the scope: one the owner's routes already use, of the same kind (read for GET, write otherwise)
  const scopes = [...routesOf(`${folder}/${owner}.routes.ts`).matchAll(/scope: '([a-z-]+:(read|write))'/g)].map((match) => match[1]);
  const scope = scopes.find((name) => name.endsWith(body || method === 'DELETE' ? ':write' : ':read')) ?? scopes[0] ?? 'accounts:read';
  if (!tag) throw new Error(`no tag found in ${folder}/${owner}.routes.ts: pass --tag (one of TAGS in src/http/openapi.ts)`);
  // a path parameter a domain already defines is imported, not written again (docs/architecture.md#a-new-control-plane-route)
  const shared = params.length === 1 ? existingParams(root, params[0]) : undefined;
  const sharedImport = shared ? `import { ${shared.name} } from '${path.relative(path.join(root, folder), path.join(root, shared.file)).replace(/\\/g, '/').replace(/\.ts$/, '.js').replace(/^(?!\.)/, './')}';\n` : '';
  const paramsSchema = !params.length
    ? ''
    : shared
      ? `export const ${camel(Name)}Params = ${shared.name};\n\n`
      : `export const ${camel(Name)}Params = z.object({\n${params.map((name) => `  ${name}: z.string().min(1).max(128).describe('TODO: what ${name} names'),`).join('\n')}\n});\n\n`;
  // a control-plane read takes no query unless it says so: an unknown parameter is a 400 naming it, as story and demo do
  const strictQuery = controlPlane && method === 'GET';
  const bodySchema = body
    ? `// the example is what the examples journey sends (docs/architecture.md#a-new-v1-route)\nexport const ${camel(Name)}Body = z\n  .strictObject({ note: z.string().min(1).max(200).describe('TODO: the fields of the request') })\n  .meta({ examples: [{ note: 'hello' }] });\n\n`
    : '';
  // control-plane schema ids: the plain name, Emulator... only where a /v1 schema has it (docs/architecture.md#names-of-schemas)
  const resultId = schemaIdOf(operationId);
  const resultVar = `${camel(resultId)}Schema`;
  const files = {};
  files[`${folder}/${base}.schema.ts`] = `import { z } from 'zod';
${sharedImport}
// ${method} ${route} (${operationId}): its zod schemas (docs/architecture.md#where-new-code-goes).

${paramsSchema}${bodySchema}export const ${resultVar} = z
  .object({ ${params.length ? `${params[0]}: z.string(), ` : ''}message: z.string() })
  // TODO: check the id against docs/architecture.md#names-of-schemas: published, it names the kits' models for good
  .meta({ id: '${resultId}', description: 'TODO: what the answer holds' });
export type ${resultId} = z.infer<typeof ${resultVar}>;
`;
  const input = [params.length ? `params: z.infer<typeof ${camel(Name)}Params>` : '', body ? `body: z.infer<typeof ${camel(Name)}Body>` : ''].filter(Boolean);
  const inputType = input.length ? `input: { ${input.join('; ')} }` : '';
  const schemaImports = [params.length ? `${camel(Name)}Params` : '', body ? `${camel(Name)}Body` : '', `type ${resultId}`].filter(Boolean);
  const needsZ = input.length > 0;
  files[`${folder}/${base}.service.ts`] = `${needsZ ? "import type { z } from 'zod';\n" : ''}import type { AppContext } from '${up}/context.js';
${controlPlane ? '' : `import type { Caller } from '${up}/core/caller.js';\n`}import { ${schemaImports.map((name) => (name.startsWith('type ') ? name : `type ${name}`)).join(', ')} } from './${base}.schema.js';

/** ${method} ${route}: TODO. Synchronous, in the transaction it opens (docs/architecture.md#the-transaction-rule). */
export function ${camel(Name)}(ctx: AppContext${controlPlane ? '' : ', caller: Caller'}${inputType ? `, ${inputType}` : ''}): ${resultId} {
  return ctx.db.transaction(() => ({ ${params.length ? `${params[0]}: input.params.${params[0]}, ` : ''}message: ${body ? '`TODO: ${input.body.note}`' : "'TODO'"} }))();
}
`;
  const routeVar = controlPlane ? `${camel(operationId)}Routes` : `${camel(owner)}${Name}Routes`;
  const args = ['ctxOf(request)', controlPlane ? '' : 'userOf(request)', input.length ? `{ ${[params.length ? 'params: request.params' : '', body ? 'body: request.body' : ''].filter(Boolean).join(', ')} }` : ''].filter(Boolean);
  const success = method === 'POST' ? 201 : 200;
  files[`${folder}/${base}.routes.ts`] = `${strictQuery ? "import { z } from 'zod';\n" : ''}import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '${up}/http/request-sandbox.js';
import { errorResponses } from '${up}/core/errors.js';
${controlPlane ? "import { CONTROL_PLANE } from './emulator.auth.js';\n" : `import { userOf } from '${up}/http/auth.js';\n`}import { ${[params.length ? `${camel(Name)}Params` : '', body ? `${camel(Name)}Body` : '', resultVar].filter(Boolean).join(', ')} } from './${base}.schema.js';
import { ${camel(Name)} } from './${base}.service.js';

export const ${routeVar}: FastifyPluginAsyncZod = async (app) => {
  app.${method.toLowerCase()}(
    '${fastifyPath}',
    {
      config: ${controlPlane ? 'CONTROL_PLANE' : `{ auth: { modes: ['hmac', 'bearer'], scope: '${scope}', user: 'required' } }`},
      schema: {
        operationId: '${operationId}',
        tags: ['${tag}'],
        summary: 'TODO: one line',
        description: 'TODO: what it does, its rules, the docs page',
        ${params.length ? `params: ${camel(Name)}Params,\n        ` : ''}${strictQuery ? 'querystring: z.strictObject({}),\n        ' : ''}${body ? `body: ${camel(Name)}Body,\n        ` : ''}response: { ${success}: ${resultVar}, ...errorResponses(${[controlPlane ? '' : '403', params.length ? '404' : ''].filter(Boolean).join(', ')}) },
      },
    },
    async (request, reply) => reply.status(${success}).send(${camel(Name)}(${args.join(', ')})),
  );
};
`;
  // ids the default fixtures hold (fixtures/default.json), so the scaffold's test reaches the service, not a 404
  const FIXTURE_IDS = { accountId: 'acct_acme_usd', userId: 'usr_acme', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd', depositInstructionId: 'di_acme_usd_ach', programmeId: 'prg_sandbox' };
  const url = route.replace(/\{([A-Za-z]+)\}/g, (_, name) => FIXTURE_IDS[name] ?? `${name}-1`);
  const depth = testFile.split('/').length - 1;
  const helper = `${'../'.repeat(depth - 1)}helper.js`;
  files[testFile] = `import t from 'tap';
import { buildTestApp, json } from '${helper}';

// ${method} ${route} (${operationId}): TODO the success path, each error status, edge cases.

t.test('${operationId} answers', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const answer = ${
    controlPlane
      ? `await sandbox.app.inject({ method: '${method}', url: '${url}'${body ? ", payload: { note: 'hello' }" : ''} })`
      : `await sandbox.request('${method}', '${url}'${body ? ", { note: 'hello' }" : ''})`
  };
  t.equal(answer.statusCode, ${success}, answer.body);
  t.match(json(answer).message, /^TODO/);${
    controlPlane
      ? ''
      : `\n  t.equal((await sandbox.app.inject({ method: '${method}', url: '${url}' })).statusCode, 401, 'no credentials: 401');`
  }
});
`;
  return { files, descriptor, routeVar, importLine: `import { ${routeVar} } from './${base}.routes.js';`, controlPlane, owner, docsPage: controlPlane ? 'docs/control-plane.md' : docsPageOf(root, route) };
}

/**
 * Add the plugin to the descriptor's `routes`, right after the plugin of its area when there is one (the list's order is the
 * document's: docs/architecture.md#a-new-control-plane-route), else at the end.
 */
export function wireInto(text, { descriptor, routeVar, importLine, owner }) {
  if (text.includes(routeVar)) return text;
  const imports = [...text.matchAll(/^import [^;]+;$/gm)];
  const last = imports.at(-1);
  text = `${text.slice(0, last.index + last[0].length)}\n${importLine}${text.slice(last.index + last[0].length)}`;
  const routes = /routes: \[([^\]]*)\]/.exec(text);
  if (!routes) throw new Error(`${descriptor}: no routes: [...] list to add ${routeVar} to`);
  const inside = routes[1];
  const areaPlugin = new RegExp(`import \\{ (\\w+) \\} from '\\./${owner}\\.routes\\.js';`).exec(text)?.[1];
  const after = areaPlugin ? new RegExp(`\\b${areaPlugin}\\b,?`).exec(inside) : null;
  let added;
  if (after) {
    const cut = after.index + after[0].length;
    const separator = inside.includes('\n') ? `\n    ` : ' ';
    added = `${inside.slice(0, after.index)}${areaPlugin},${separator}${routeVar}${after[0].endsWith(',') ? ',' : ''}${inside.slice(cut)}`;
  } else {
    const multiline = inside.includes('\n');
    added = multiline ? `${inside.replace(/,?\s*$/, ',')}\n    ${routeVar},\n  ` : `${inside.trim()}, ${routeVar}`;
  }
  return text.slice(0, routes.index) + `routes: [${added}]` + text.slice(routes.index + routes[0].length);
}

function wire(root, result) {
  const file = path.join(root, result.descriptor);
  writeFileSync(file, wireInto(readFileSync(file, 'utf8'), result));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const options = flags(process.argv.slice(2));
  const root = path.resolve(options.root ?? here);
  const ask = process.stdin.isTTY ? createInterface({ input: process.stdin, output: process.stdout }) : undefined;
  for (const [key, question] of [
    ['method', 'HTTP method (GET, POST, PUT, DELETE): '],
    ['path', 'Path (/v1/... or /_emulator/..., parameters as {name}): '],
    ['operationId', 'operationId (camelCase; emulator... on the control plane): '],
  ]) {
    if (options[key]) continue;
    if (!ask) throw new Error(`--${kebab(key)} is required`);
    options[key] = (await ask.question(question)).trim();
  }
  ask?.close();
  const result = plan({ ...options, root });
  for (const [file, text] of Object.entries(result.files)) {
    if (existsSync(path.join(root, file))) throw new Error(`${file} exists already: nothing written`);
    if (options.dryRun) process.stdout.write(`--- ${file}\n${text}\n`);
  }
  if (!options.dryRun) {
    for (const [file, text] of Object.entries(result.files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
      process.stdout.write(`wrote ${file}\n`);
    }
    wire(root, result);
    process.stdout.write(`wired ${result.routeVar} into ${result.descriptor}\n`);
    process.stdout.write(
      `next: fill in the TODOs, add the docs line (${result.controlPlane ? 'a row in the "Every route" table of docs/control-plane.md' : `one line in ${result.docsPage ?? "the area's page under docs/"}`}), then npm run generate and the checks of docs/architecture.md#checks-after-generate\n`,
    );
  }
}
