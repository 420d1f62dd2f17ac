import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import type { AppContext } from '../context.js';
import { prepared } from '../db/connection.js';
import { errors } from '../core/errors.js';
import { buildDelivery, CHECK_CASES, type CheckCaseDefinition, type CheckTarget, type Delivery } from './receiver-check.cases.js';
import { newHttpAgent, postWithTimeout } from '../lib/http-post.js';
import { isHttpUrl } from '../lib/http-url.js';
import { programmeWebhookOf, type ProgrammeWebhookRow } from '../domains/webhooks/webhooks.endpoints.js';
import {
  CHECK_TIMEOUT_DEFAULT_MS,
  type ReceiverCheckCase,
  type ReceiverCheckInput,
  type ReceiverCheckReport,
} from './receiver-check.schema.js';

// The receiver check (docs/faults.md#receiver-check): the cases of receiver-check.cases.ts sent one after another,
// in their fixed order, to the user's endpoint, each judged on what came back. Nothing is written: no event, no
// delivery row, no id drawn (docs/decisions.md#receiver-check), so the sandbox's state and delivery log are as before.

const BODY_PREVIEW_BYTES = 256;

/** Who signs and where to: a programme's webhook key and secret, and the URL to check. */
export interface CheckSubject {
  url: string;
  programmeId: string;
  apiKey: string;
  secret: string;
  occurredAt: string;
  timeoutMs: number;
}

/**
 * The route's subject: the named programme (404 when unknown) or the first of the fixtures, its webhook key and
 * secret, and the given URL or else its configured one (400 naming url when it has none or it is not http(s)).
 */
export function checkSubjectOf(ctx: AppContext, input: ReceiverCheckInput): CheckSubject {
  const programme = input.programId
    ? programmeWebhookOf(ctx, input.programId)
    : prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes ORDER BY rowid LIMIT 1').get();
  if (!programme) {
    if (input.programId) throw errors.notFound(`Programme ${input.programId} not found`);
    throw errors.field('MissingValue', 'programId', 'The sandbox has no programme to sign with');
  }
  const url = input.url ?? programme.webhook_url;
  if (!url) {
    throw errors.field(
      'MissingValue',
      'url',
      `No webhook URL is configured for programme ${programme.id}: pass url, or set one with PUT /_emulator/webhooks/endpoint or --webhook-url`,
    );
  }
  if (!isHttpUrl(url)) throw errors.field('InvalidValue', 'url', `The webhook URL of programme ${programme.id} (${url}) is not an http:// or https:// URL`);
  return {
    url,
    programmeId: programme.id,
    apiKey: programme.webhook_api_key,
    secret: programme.webhook_secret,
    occurredAt: ctx.clock.nowIso(),
    timeoutMs: input.timeoutMs ?? CHECK_TIMEOUT_DEFAULT_MS,
  };
}

/** Eight base32 characters that tell one run's event ids from another's. */
function newRunTag(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return [...randomBytes(8)].map((byte) => alphabet[byte % 32]).join('');
}

/**
 * How a case reaches the receiver when not by a direct request: the sandbox's `listen` relay, when the receiver is
 * its forward-to URL (docs/webhooks.md#listen). Answers what came back.
 */
export type CheckSend = (delivery: Delivery, timeoutMs: number) => Promise<Got>;

/** Send every case in order and judge each; never throws for what the receiver does. */
export async function runReceiverCheck(subject: CheckSubject, via?: CheckSend): Promise<ReceiverCheckReport> {
  const started = performance.now();
  const target: CheckTarget = { ...subject, runTag: newRunTag(), realNowMs: () => Date.now() };
  const agent = newHttpAgent({ connections: 1 });
  const cases: ReceiverCheckCase[] = [];
  try {
    for (const [index, definition] of CHECK_CASES.entries()) {
      const delivery = buildDelivery(target, definition);
      const got = via ? await via(delivery, subject.timeoutMs) : await send(agent, delivery, subject.timeoutMs);
      cases.push(judge(index + 1, definition, delivery, got));
    }
  } finally {
    await agent.destroy().catch(() => undefined);
  }
  const passedCount = cases.filter((item) => item.passed).length;
  const report = {
    url: subject.url,
    programId: subject.programmeId,
    timeoutMs: subject.timeoutMs,
    passed: passedCount === cases.length,
    passedCount,
    failedCount: cases.length - passedCount,
    durationMs: Math.round(performance.now() - started),
    cases,
  };
  return { ...report, summary: textSummary(report) };
}

type Got = ReceiverCheckCase['got'];

/** POST one delivery; the timeout is on the answer's status line, as the sender's (webhooks.sender.ts). */
async function send(agent: Agent, delivery: Delivery, timeoutMs: number): Promise<Got> {
  const answer = await postWithTimeout(agent, delivery, { timeoutMs, keepBytes: BODY_PREVIEW_BYTES });
  return { status: answer.status, error: answer.error, latencyMs: Math.round(answer.latencyMs), body: answer.body };
}

/** The verdict on one case: passed or not, and one line saying why. */
function judge(number: number, definition: CheckCaseDefinition, delivery: Delivery, got: Got): ReceiverCheckCase {
  const acknowledged = got.status !== null && got.status >= 200 && got.status < 300;
  const passed = definition.expected === 'ACKNOWLEDGED' ? acknowledged : got.status !== null && !acknowledged;
  return {
    number,
    name: definition.name,
    title: definition.title,
    expected: definition.expected,
    sent: { url: delivery.url, eventId: delivery.eventId, apiKey: delivery.apiKey, timestamp: delivery.timestamp },
    got,
    passed,
    reason: passed ? passReason(definition, got) : failReason(definition, got),
  };
}

function passReason(definition: CheckCaseDefinition, got: Got): string {
  const verb = definition.expected === 'ACKNOWLEDGED' ? 'acknowledged' : 'refused';
  return `${verb} with ${got.status} in ${got.latencyMs} ms`;
}

function failReason(definition: CheckCaseDefinition, got: Got): string {
  const wanted = definition.expected === 'ACKNOWLEDGED' ? 'a 2xx' : 'a refusal (non-2xx)';
  // got.error names the timeout ("no answer within N ms (timeout)") or the network error
  if (got.status === null) return `${got.error}, expected ${wanted}: ${definition.whenFailed}`;
  return `got ${got.status}, expected ${wanted}: ${definition.whenFailed}`;
}

/** One screen: a heading, one line per case, the verdict. */
export function textSummary(report: Omit<ReceiverCheckReport, 'summary'>): string {
  const lines = [`Receiver check of ${report.url} (programme ${report.programId}, timeout ${report.timeoutMs} ms)`, ''];
  for (const item of report.cases) {
    lines.push(`${item.passed ? 'PASS' : 'FAIL'}  ${item.number}. ${item.title}: ${item.reason}`);
  }
  lines.push('');
  lines.push(
    report.passed
      ? `All ${report.cases.length} cases passed in ${report.durationMs} ms.`
      : `${report.failedCount} of ${report.cases.length} cases failed (${report.passedCount} passed) in ${report.durationMs} ms.`,
  );
  return `${lines.join('\n')}\n`;
}
