import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// The Python kit's models are generated from openapi/openapi.json by scripts/python-models.mjs
// (docs/clients.md#python): the committed file must be what the committed document gives, so a change of the
// document without a regeneration fails here.

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'python-models.mjs');

t.test('clients/python/src/service_sandbox/models.py matches openapi/openapi.json', async (t) => {
  const check = spawnSync(...plainNode([SCRIPT, '--check']), { cwd: PROJECT_ROOT, encoding: 'utf8' });
  t.equal(check.status, 0, `node scripts/python-models.mjs --check: ${check.stdout}${check.stderr}`);
});

t.test('the check bites: a field added to a schema changes the models', async (t) => {
  // Renders the document as committed and with ServiceError given one more field, in a child Node (the script
  // is plain JavaScript, imported as a user would run it).
  const program = `
    import { readFileSync } from 'node:fs';
    import { renderModels, DOCUMENT } from ${JSON.stringify(SCRIPT)};
    const document = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
    const before = renderModels(document);
    document.components.schemas.ServiceError.properties.traceId = { type: 'string' };
    const after = renderModels(document);
    console.log(JSON.stringify({ differ: before !== after, traceId: /traceId: str/.test(after), error: /class ServiceError\\(/.test(before) }));
  `;
  const run = spawnSync(...plainNode(['--input-type=module', '-e', program]), { cwd: PROJECT_ROOT, encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.same(JSON.parse(run.stdout), { differ: true, traceId: true, error: true });
});
