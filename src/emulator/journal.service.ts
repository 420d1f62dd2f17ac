import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { instant } from '../http/formats.js';
import type { Config } from '../config.js';
import { ctxOf, sandboxOf } from '../http/request-sandbox.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { errorResponses, errors } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { firedFaultSchema } from '../faults/fault-rules.schema.js';
import { INTERNAL_CALL_HEADER } from '../faults/internal-call.js';
import { createJobQueue } from '../lib/job-queue.js';

// The request journal (docs/test-kit.md#request-journal, docs/decisions.md#journal): the last N requests in a ring
// buffer (never unbounded), with secrets and signatures redacted, so a test can assert "my app called commit exactly
// once".

const MAX_BODY_CHARS = 16 * 1024;
// Larger JSON bodies (document uploads up to 20 MiB) are kept as a size note, not parsed and stored whole.
const MAX_PARSED_BODY_CHARS = 32 * 1024;
const REDACTED = '[REDACTED]';
const SECRET_HEADERS = new Set(['authorization', 'x-service-signature', 'x-admin-token', 'cookie', INTERNAL_CALL_HEADER]);
const SECRET_FIELDS = new Set(['accessToken', 'secret', 'password', 'contentBase64', 'signature', 'apiSecret']);

export const journalEntrySchema = z
  .object({
    seq: z.number().int(),
    at: instant().describe('Real wall-clock time the request arrived'),
    method: z.string(),
    path: z.string(),
    query: z.string().nullable(),
    status: z.number().int().describe('The status answered; 0 when the connection was closed without an answer (a fault rule)'),
    latencyMs: z.number(),
    programmeId: z.string().nullable(),
    userId: z.string().nullable(),
    authMode: z.string().nullable(),
    requestHeaders: z.record(z.string(), z.string()),
    // any JSON value, null included (an empty `anyOf` branch would say the same less plainly)
    requestBody: z.unknown(),
    responseBody: z.unknown(),
    faults: z.array(firedFaultSchema).describe('Fault rules that fired on this request, in order (docs/faults.md#in-the-journal)'),
  })
  .meta({ id: 'JournalEntry' });
export type JournalEntry = z.infer<typeof journalEntrySchema>;

/**
 * What the hooks record: cheap references only. Bodies are parsed, redacted and truncated when the journal
 * is read, not on every request, so the journal costs next to nothing on the hot path (measured: docs/benchmarks.md).
 */
export interface RecordedRequest extends Omit<JournalEntry, 'seq' | 'at' | 'requestHeaders' | 'requestBody' | 'responseBody'> {
  /** Arrival, epoch ms (formatted when read). */
  atMs: number;
  headers: Record<string, string | string[] | undefined>;
  requestRaw: unknown;
  requestType: string | undefined;
  responseRaw: unknown;
  responseType: string;
}

export class RequestJournal {
  private readonly entries: Array<{ seq: number; recorded: RecordedRequest }> = [];
  private next = 0;
  private seq = 0;
  private readonly bodies: BodyRing;
  /** Request bodies of 2-32 KiB, in a ring of their own with the same budget (docs/test-kit.md#request-journal). */
  private readonly requestBodies: BodyRing;
  /** GET /_emulator/requests builds its answers one at a time, the others waiting their turn (readJournalText). */
  readonly readers = createJobQueue(1, JOURNAL_READERS_WAITING);

  /** `ringBytes`: the most bytes of answers kept (docs/test-kit.md#request-journal); tests pass a small one. */
  constructor(
    readonly capacity: number,
    ringBytes = RING_BYTES,
  ) {
    // Room for every entry's answer at its largest (32 KiB of text, up to 3 bytes a character), one more and a byte,
    // so a small journal never drops an answer it still lists; a large one is held to the budget.
    this.bodies = new BodyRing(Math.min((capacity + 1) * MAX_RING_BODY_BYTES + 1, ringBytes), 'answers');
    this.requestBodies = new BodyRing(Math.min((capacity + 1) * MAX_RING_BODY_BYTES + 1, ringBytes), 'request bodies');
  }

  add(recorded: RecordedRequest): void {
    if (this.capacity === 0) return;
    if (this.entries.length === this.capacity) {
      const leaving = this.entries[this.next]!.recorded;
      this.bodies.release(leaving.responseRaw);
      this.requestBodies.release(leaving.requestRaw);
    }
    if (recorded.responseType.includes('json')) recorded.responseRaw = this.bodies.keep(recorded.responseRaw);
    // a request body is its text as sent (bodyFor reads a Buffer as UTF-8 too), so one of 2-32 KiB goes to its ring;
    // a shorter one is left as it came, not decoded on the hot path
    const requestRaw = recorded.requestRaw;
    recorded.requestRaw = this.requestBodies.keep(Buffer.isBuffer(requestRaw) && requestRaw.length >= MIN_RING_CHARS ? requestRaw.toString('utf8') : requestRaw);
    const entry = { seq: ++this.seq, recorded };
    if (this.entries.length < this.capacity) this.entries.push(entry);
    else this.entries[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Oldest first. */
  all(): JournalEntry[] {
    return this.select(() => true);
  }

  /**
   * Oldest first: the entries `wanted` picks from what was recorded, the newest `limit` of them, each built (bodies
   * decoded, parsed and redacted) as it is read. Nothing built is kept, so reading the journal (the dashboard reads
   * its newest 100 every 2 s) never holds more than the ring's budget of answers (docs/test-kit.md#request-journal).
   */
  select(wanted: (recorded: RecordedRequest) => boolean, limit?: number): JournalEntry[] {
    return this.choose(wanted, limit).map((entry) => this.build(entry));
  }

  /** Oldest first, the newest `limit` of the entries `wanted` picks, not built yet. */
  choose(wanted: (recorded: RecordedRequest) => boolean, limit?: number): Array<{ seq: number; recorded: RecordedRequest }> {
    const ordered = this.entries.length < this.capacity ? this.entries : [...this.entries.slice(this.next), ...this.entries.slice(0, this.next)];
    const chosen = ordered.filter((entry) => wanted(entry.recorded));
    return limit !== undefined ? chosen.slice(-limit) : chosen;
  }

  build(entry: { seq: number; recorded: RecordedRequest }): JournalEntry {
    return materialize(entry.seq, entry.recorded, this.bodies, this.requestBodies);
  }

  clear(): void {
    this.entries.length = 0;
    this.next = 0;
    this.bodies.clear();
    this.requestBodies.clear();
  }

  /**
   * A JSON answer about to be sent, encoded once (docs/benchmarks.md#the-request-journal): its UTF-8 bytes are written
   * into the ring and those bytes go to the socket, so the text is not encoded again for the socket, for its length
   * and for the ring. The body is held (never overwritten) until `sent()`; null when the ring keeps no such answer
   * (then the text goes out as before and `add` keeps it on its own).
   */
  encodeAnswer(text: string): RingBody | null {
    if (this.capacity === 0) return null;
    const body = this.bodies.keep(text, true);
    return body instanceof RingBody ? body : null;
  }

  /** A request closed without an answer (a fault rule's drop): no onResponse follows, so it is recorded here. */
  addUnanswered(request: FastifyRequest): void {
    if (this.capacity === 0 || request.journalRecorded || skipped(request.url)) return;
    request.journalRecorded = true;
    this.add(recordedOf(request, 0, null, ''));
  }
}

// Answers the journal keeps, in one ring of bytes per journal (docs/test-kit.md#request-journal,
// docs/benchmarks.md#the-request-journal). A JSON answer built for one request (an uncached list page is ≈26 KB) held as
// a string for the journal's N requests survives the young collections, is copied, promoted and collected again in the
// old generation: with every list answer built, the journal cost 0.1 ms of CPU per request and 40 MB of peak RSS; one
// Buffer per answer (or per slab of answers) cost the same. The ring is allocated once, on the first body it keeps, and
// its pages are touched only as bodies fill them. Its size is the journal's budget for answers: 1,000 uncached list
// pages would hold 26 MB, a fifth of the server's memory, so when a body does not fit, the oldest bodies in the ring
// give up their place and their entries read back with a note instead (bodies leave in the order they came: entries
// are a FIFO, so the live ones are one run of the ring). JSON text is well-formed UTF-16 (JSON.stringify escapes lone
// surrogates), so the bytes decode to the same text when the journal is read.
const MIN_RING_CHARS = 2 * 1024;
const RING_BYTES = 8 * 1024 * 1024;
const MAX_RING_BODY_BYTES = 3 * MAX_PARSED_BODY_CHARS;

/**
 * A body in the ring: its bytes while it is live, and its place in the order bodies came in. `sending`: the socket
 * still writes these bytes (an answer encoded once, RequestJournal.encodeAnswer), so the ring may not give them up.
 */
export class RingBody {
  sending: boolean;

  constructor(
    readonly n: number,
    readonly bytes: Buffer,
    sending: boolean,
  ) {
    this.sending = sending;
  }

  /** The socket is done with the bytes (the response finished or its connection closed). */
  sent(): void {
    this.sending = false;
  }
}

const round1 = (value: number): number => Math.round(value * 10) / 10;

class BodyRing {
  private ring: Buffer | null = null;
  /** Live bodies, oldest first, from `first` on. */
  private live: RingBody[] = [];
  private first = 0;
  private head = 0;
  private kept = 0;

  constructor(
    private readonly size: number,
    /** What the ring keeps, for the note an entry reads back once its body gave up its place. */
    private readonly what: 'answers' | 'request bodies',
  ) {}

  /** `sending`: the bytes go to the socket too, and are held until the body's `sent()`. */
  keep(raw: unknown, sending = false): unknown {
    if (typeof raw !== 'string' || raw.length < MIN_RING_CHARS || raw.length > MAX_PARSED_BODY_CHARS) return raw;
    // Room for the most bytes the text can take (3 a UTF-16 unit) is the usual case: then the text is encoded once,
    // by the write, which says how many bytes it took. Only near the ring's end is the exact length counted first.
    let bytes = raw.length * 3;
    let at = this.place(bytes);
    if (at === null) {
      bytes = Buffer.byteLength(raw, 'utf8');
      if (bytes >= this.size) return raw;
      at = this.place(bytes);
      while (at === null) {
        // an answer the socket still writes keeps its bytes: this one is then not kept in the ring
        if (this.live[this.first]!.sending) return raw;
        this.drop(); // the oldest body gives up its place (the comment above)
        at = this.place(bytes);
      }
    }
    this.ring ??= Buffer.allocUnsafeSlow(this.size);
    const written = this.ring.write(raw, at, bytes, 'utf8');
    const body = new RingBody(this.kept++, this.ring.subarray(at, at + written), sending);
    this.live.push(body);
    this.head = at + written;
    return body;
  }

  /** The text of a body as it was sent, or a note when the ring has since given its place to newer ones. */
  read(raw: unknown): unknown {
    if (!(raw instanceof RingBody)) return raw;
    if (this.first < this.live.length && raw.n >= this.live[this.first]!.n) return raw.bytes;
    const budget = this.size >= 1024 * 1024 ? `${round1(this.size / 1024 / 1024)} MiB` : `${round1(this.size / 1024)} KiB`;
    return `[${raw.bytes.length} bytes not kept: the journal keeps its newest ${budget} of ${this.what}]`;
  }

  /** An entry leaves the journal: its body, if still in the ring, is the oldest live one and frees its bytes. */
  release(raw: unknown): void {
    if (this.first < this.live.length && raw === this.live[this.first]) this.drop();
  }

  clear(): void {
    // bytes the socket still writes stay where they are: the next body starts a new ring, the old one is left to them
    for (let i = this.first; i < this.live.length; i += 1) {
      if (this.live[i]!.sending) {
        this.ring = null;
        break;
      }
    }
    this.live = [];
    this.first = 0;
    this.head = 0;
  }

  private drop(): void {
    this.first += 1;
    if (this.first === this.live.length) this.clear();
    else if (this.first > 1024 && this.first * 2 > this.live.length) {
      this.live = this.live.slice(this.first);
      this.first = 0;
    }
  }

  /** Where `bytes` fit without touching a live body, or null. Never fills the ring to the brim (head === tail means empty). */
  private place(bytes: number): number | null {
    if (this.first === this.live.length) return 0;
    const tail = this.live[this.first]!.bytes.byteOffset - this.ring!.byteOffset;
    if (this.head > tail) {
      if (this.size - this.head >= bytes) return this.head;
      return bytes < tail ? 0 : null;
    }
    return this.head + bytes < tail ? this.head : null;
  }
}

// Deeper parts of a body are replaced by a note: kept whole they could hide a secret below the redaction
// walk, and a 50,000-deep array would overflow the stack when the journal is serialized (found by fuzzing:
// docs/robustness.md).
const MAX_DEPTH = 20;
const TOO_DEEP = `[nested deeper than ${MAX_DEPTH} levels]`;

/** Replace secret values anywhere in a JSON value; parts nested deeper than MAX_DEPTH become a note. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_FIELDS.has(key) ? REDACTED : redact(item, depth + 1);
  }
  return out;
}

function bodyFor(raw: unknown, contentType: string | undefined): unknown {
  if (raw === undefined || raw === null || raw === '') return null;
  let text: string;
  if (Buffer.isBuffer(raw)) text = raw.toString('utf8');
  else if (typeof raw === 'string') text = raw;
  else return redact(raw);
  if (contentType?.includes('json') && text.length <= MAX_PARSED_BODY_CHARS) {
    try {
      return redact(JSON.parse(text));
    } catch {
      // not JSON after all: keep the text, truncated
    }
  }
  if (contentType && !contentType.startsWith('text/') && !contentType.includes('json')) return `[${text.length} bytes of ${contentType}]`;
  return text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS)}...[truncated ${text.length - MAX_BODY_CHARS} chars]` : text;
}

function headersFor(headers: RecordedRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

function materialize(seq: number, recorded: RecordedRequest, bodies: BodyRing, requestBodies: BodyRing): JournalEntry {
  const { atMs, headers, requestRaw, requestType, responseRaw, responseType, ...rest } = recorded;
  return {
    seq,
    at: new Date(atMs).toISOString(),
    ...rest,
    requestHeaders: headersFor(headers),
    requestBody: bodyFor(requestBodies.read(requestRaw), requestType),
    responseBody: bodyFor(bodies.read(responseRaw), responseType),
  };
}

/** Large bodies (document uploads up to 20 MiB) are cut at once, so the ring buffer never holds them whole. */
function capRaw(raw: unknown): unknown {
  if ((typeof raw === 'string' || Buffer.isBuffer(raw)) && raw.length > MAX_PARSED_BODY_CHARS) {
    // A string's slice would share the whole string's memory (V8 keeps the parent of a sliced string alive), so the
    // head is copied: 1,000 journaled 100 KB answers would otherwise keep 100 MB (docs/decisions.md#journal).
    const head = typeof raw === 'string' ? Buffer.from(raw.slice(0, MAX_BODY_CHARS), 'utf8').toString('utf8') : raw.subarray(0, MAX_BODY_CHARS).toString('utf8');
    return `${head}...[truncated ${raw.length - MAX_BODY_CHARS} of ${raw.length} ${typeof raw === 'string' ? 'chars' : 'bytes'}]`;
  }
  return raw;
}

/**
 * docs/test-kit.md#request-journal: an entry keeps at most MAX_HEADER_CHARS of header values (every name stays); past
 * them, each value keeps its head, copied (a slice would keep the whole string), and a note. Node takes up to 16 KiB of headers a
 * request, so 1,000 entries could otherwise hold 16 MB per sandbox. The usual request is far below: kept as it came.
 */
const MAX_HEADER_CHARS = 4 * 1024;

function capHeaders(headers: RecordedRequest['headers']): RecordedRequest['headers'] {
  let total = 0;
  for (const name in headers) {
    const value = headers[name];
    total += typeof value === 'string' ? value.length : Array.isArray(value) ? value.join(', ').length : 0;
  }
  if (total <= MAX_HEADER_CHARS) return headers;
  const kept: RecordedRequest['headers'] = {};
  let room = MAX_HEADER_CHARS;
  for (const name in headers) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const head = Buffer.from(value.slice(0, room), 'utf8').toString('utf8');
    kept[name] = head.length === value.length ? head : `${head}...[truncated ${value.length - head.length} chars]`;
    room -= head.length;
  }
  return kept;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Journal bookkeeping: arrival on the wall clock and on the monotonic clock, and the payload sent. */
    journalArrivedMs?: number;
    journalStarted?: number;
    journalPayload?: unknown;
    journalRecorded?: boolean;
  }
}

/**
 * The sandbox's journal (docs/architecture.md#runtime): in memory only, so snapshots do not carry it
 * (docs/decisions.md#snapshots) and a reset keeps it (it records the reset request too); a new session starts empty.
 */
export const journalSlot: StateSlot<RequestJournal> = {
  name: 'emulator.journal',
  create: (config) => new RequestJournal(config.journalSize),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/**
 * Hooks that record every request except the journal's own and the dashboard's static files: arrival in
 * onRequest, the payload in onSend, the entry in onResponse (latency to the end of the write). They are
 * callback-style and keep their bookkeeping on the request: they run on every request, and a promise per
 * hook and a WeakMap entry per request showed in the list's profile (docs/benchmarks.md).
 */
export function registerJournal(app: FastifyInstance, config: Config): void {
  if (config.journalSize === 0) return; // --journal-size 0: no hooks at all

  app.addHook('onRequest', (request, _reply, done) => {
    // wall clock on purpose: the journal records when requests really arrived
    request.journalArrivedMs = Date.now();
    request.journalStarted = performance.now();
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (typeof payload === 'string' && !skipped(request.url) && String(reply.getHeader('content-type') ?? '').includes('json')) {
      // a built JSON answer: encoded once, into the ring, and those bytes sent (RequestJournal.encodeAnswer)
      const body = journalOf(request)?.encodeAnswer(payload);
      if (body) {
        request.journalPayload = body;
        reply.raw.once('close', () => body.sent());
        done(null, body.bytes);
        return;
      }
    }
    // keep a reference only (strings and buffers; a streamed file is noted, not buffered)
    request.journalPayload = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : payload == null ? null : '[streamed body]';
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    // the response finished: its bytes are written ('close' says so too, and alone when the connection dropped)
    if (request.journalPayload instanceof RingBody) request.journalPayload.sent();
    const journal = journalOf(request);
    if (journal && !request.journalRecorded && !skipped(request.url)) {
      request.journalRecorded = true;
      journal.add(recordedOf(request, reply.statusCode, request.journalPayload ?? null, String(reply.getHeader('content-type') ?? '')));
    }
    done();
  });
}

/** The journal of the request's sandbox (none: a session path whose session does not exist). */
export function journalOf(request: FastifyRequest): RequestJournal | undefined {
  return sandboxOf(request)?.runtime.get(journalSlot);
}

function skipped(url: string): boolean {
  return url.startsWith('/_emulator/requests') || url.startsWith('/_emulator/ui') || url.startsWith('/_emulator/webhooks/listen') || url.startsWith('/docs');
}

function recordedOf(request: FastifyRequest, status: number, responseRaw: unknown, responseType: string): RecordedRequest {
  const [path, query] = splitUrl(request.url);
  const started = request.journalStarted;
  return {
    atMs: request.journalArrivedMs ?? Date.now(),
    method: request.method,
    path,
    query,
    status,
    latencyMs: started === undefined ? 0 : performance.now() - started,
    programmeId: request.auth?.programmeId || null,
    userId: request.auth?.userId ?? null,
    authMode: request.auth?.mode ?? null,
    headers: capHeaders(request.headers),
    requestRaw: capRaw(request.rawBody ?? request.body),
    requestType: request.headers['content-type'],
    responseRaw: capRaw(responseRaw),
    responseType,
    faults: request.faultsFired ?? [],
  };
}

function splitUrl(url: string): [string, string | null] {
  const index = url.indexOf('?');
  return index === -1 ? [url, null] : [url.slice(0, index), url.slice(index + 1)];
}

export const journalQuery = z.object({
  method: z
    .string()
    .regex(/^[A-Za-z]+$/, 'method must be an HTTP method such as GET or POST')
    .meta({ examples: ['GET'] }) // docs/openapi.md#parameter-examples (before the transform: the document shows the input)
    .transform((value) => value.toUpperCase())
    .optional(),
  pathPrefix: z.string().startsWith('/', 'pathPrefix must start with /').optional().meta({ examples: ['/v1/accounts'] }),
  status: z.coerce.number().int().min(100).max(599).optional().meta({ examples: [200] }),
  since: z.iso.datetime({ offset: true }).optional().meta({ examples: ['2026-01-01T00:00:00Z'] }).describe('Only requests that arrived at or after this instant'),
  limit: z.coerce.number().int().min(1).max(100000).optional().meta({ examples: [20] }).describe('Newest N matches'),
});

/** Reads of one journal that wait while another is built; one more is a 429 (docs/test-kit.md#request-journal). */
export const JOURNAL_READERS_WAITING = 16;

/** Entries built and serialized in one turn of the event loop when the journal is read. */
const ENTRIES_PER_TURN = 10;

/**
 * GET /_emulator/requests's answer as JSON text, built ENTRIES_PER_TURN entries a turn, with other requests served
 * between (docs/test-kit.md#request-journal). Built in one turn, 1,000 entries of 32 KiB bodies (about 46 MB of answer)
 * held every sandbox of the process for 4-7 s, and ten such reads at once held 1.46 GB; one read of a journal at a time
 * bounds the memory, and the turns bound the wait of everyone else.
 */
export function readJournalText(journal: RequestJournal, wanted: (recorded: RecordedRequest) => boolean, limit?: number): Promise<string> {
  return journal.readers.run(
    () => buildJournalText(journal, wanted, limit),
    () => errors.tooManyRequests(`${JOURNAL_READERS_WAITING} reads of this sandbox's request journal already wait their turn; read it again in a moment (Retry-After)`),
  );
}

async function buildJournalText(journal: RequestJournal, wanted: (recorded: RecordedRequest) => boolean, limit?: number): Promise<string> {
  const chosen = journal.choose(wanted, limit);
  const parts: string[] = [];
  for (let start = 0; start < chosen.length; start += ENTRIES_PER_TURN) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    parts.push(chosen.slice(start, start + ENTRIES_PER_TURN).map((entry) => JSON.stringify(journal.build(entry))).join(','));
  }
  return `{"data":[${parts.join(',')}],"capacity":${journal.capacity}}`;
}

export function journalRoutes(app: FastifyInstance): void {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    '/_emulator/requests',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorListRequests',
        description:
          'The request journal: the last requests with their answers, oldest first; signatures, secrets and tokens are redacted. ' +
          'One read of a sandbox\'s journal is built at a time, the others waiting their turn; past 16 waiting, a 429 with Retry-After ' +
          '(docs/test-kit.md#request-journal).',
        tags: ['Emulator'],
        summary: 'Request journal: the last N requests, oldest first, secrets redacted',
        querystring: journalQuery,
        response: { 200: z.object({ data: z.array(journalEntrySchema), capacity: z.number().int() }), ...errorResponses(429) },
      },
    },
    async (request, reply) => {
      const { method, pathPrefix, status, since, limit } = request.query;
      const sinceMs = since ? Date.parse(since) : undefined;
      const journal = ctxOf(request).runtime.get(journalSlot);
      // filtered on what was recorded, so only the entries answered are built
      const text = await readJournalText(
        journal,
        (entry) =>
          (!method || entry.method === method) &&
          (!pathPrefix || entry.path.startsWith(pathPrefix)) &&
          (status === undefined || entry.status === status) &&
          (sinceMs === undefined || entry.atMs >= sinceMs),
        limit,
      );
      // JSON text built in turns above, sent as it is (as the transactions list sends stored JSON)
      return reply.type('application/json; charset=utf-8').send(text as never);
    },
  );
  typed.delete(
    '/_emulator/requests',
    { config: CONTROL_PLANE, schema: { operationId: 'emulatorClearRequests', description: 'Empties the request journal.', tags: ['Emulator'], summary: 'Clear the request journal', response: { 204: z.null(), ...errorResponses() } } },
    async (request, reply) => {
      ctxOf(request).runtime.get(journalSlot).clear();
      return reply.status(204).send(null);
    },
  );
}
