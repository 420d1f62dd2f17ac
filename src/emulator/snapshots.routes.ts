import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorCodes, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses, errorBodySchema, errors, type ServiceError } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { SNAPSHOT_FILE_LIMIT } from '../snapshots/snapshot.js';
import { restoreSnapshotResponse, saveSnapshotBody, snapshotListSchema, snapshotParams, snapshotSummarySchema } from './snapshots.schema.js';
import {
  deleteSnapshot,
  exportSnapshot,
  getSnapshot,
  importSnapshot,
  listSnapshots,
  restoreNamedSnapshot,
  saveSnapshot,
  summarize,
} from './snapshots.service.js';

// Snapshots of the whole sandbox (docs/control-plane.md#snapshots).

/** Uploaded snapshot files: the SQLite bytes as exported. Large states make large files. */
const SNAPSHOT_FILE_TYPES = ['application/octet-stream', 'application/vnd.sqlite3', 'application/x-sqlite3'];
const SNAPSHOT_BODY_LIMIT = SNAPSHOT_FILE_LIMIT;

/**
 * An uploaded file with a Content-Length is written into shared memory as its chunks arrive (docs/robustness.md#hostile-files):
 * neither the end of the upload (one concatenation) nor handing it to the check's thread (one structured copy) then
 * copies the whole file in one turn of the event loop; a 230 MiB file held the loop about 2 s that way. The check's
 * thread reads the same memory. Without a Content-Length (chunked), the chunks are joined at the end as before.
 */
function receiveFile(request: FastifyRequest, payload: IncomingMessage, done: (error: Error | null, body?: Buffer) => void): void {
  const declared = Number(request.headers['content-length']);
  const shared = Number.isSafeInteger(declared) && declared > 0 && declared <= SNAPSHOT_BODY_LIMIT;
  if (Number.isSafeInteger(declared) && declared > SNAPSHOT_BODY_LIMIT) {
    payload.resume();
    return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  }
  const target = shared ? Buffer.from(new SharedArrayBuffer(declared)) : null;
  const chunks: Buffer[] = [];
  let received = 0;
  let failed = false;
  const fail = (error: Error) => {
    if (failed) return;
    failed = true;
    payload.resume();
    done(error);
  };
  payload.on('data', (chunk: Buffer) => {
    if (failed) return;
    if (received + chunk.length > (target ? declared : SNAPSHOT_BODY_LIMIT)) {
      return fail(target ? new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH() : new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    }
    if (target) chunk.copy(target, received);
    else chunks.push(chunk);
    received += chunk.length;
  });
  payload.on('end', () => {
    if (failed) return;
    if (target && received !== declared) return fail(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    const body = target ?? Buffer.concat(chunks, received);
    request.rawBody = body;
    done(null, body);
  });
  payload.on('error', (error: Error) => fail(error));
}

const sendTheFile = () =>
  errors.unsupportedMediaType(`Send the snapshot file as ${SNAPSHOT_FILE_TYPES[0]} (curl --data-binary @file -H 'Content-Type: application/octet-stream')`);

/** A body announced with a type other than a snapshot file's: a 415 before it is read (no body: the handler's 415). */
function notASnapshotFile(request: FastifyRequest): ServiceError | null {
  const announced = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return announced && !SNAPSHOT_FILE_TYPES.includes(type) ? sendTheFile() : null;
}

/** A Content-Length past the limit: a 413 before a place is taken or a byte read. */
function tooLargeAFile(request: FastifyRequest): Error | null {
  const declared = Number(request.headers['content-length']);
  return Number.isSafeInteger(declared) && declared > SNAPSHOT_BODY_LIMIT ? new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE() : null;
}

/**
 * Uploads being received at once, in the whole process (docs/robustness.md#connections): each may hold up to 512 MiB
 * while its bytes arrive, so a few sockets sending part of a file held gigabytes. One more is a 429 before any byte
 * of its body is read (its connection then closes). Once received, an upload waits for its check
 * (docs/robustness.md#off-thread-work).
 */
export const MAX_UPLOADS_RECEIVING = 2;
let uploadsReceiving = 0;

/** Uploads whose body is being received now. */
export function snapshotUploadsReceiving(): number {
  return uploadsReceiving;
}

/**
 * Take a place for the upload's body, given back when the body has arrived, its request ended otherwise, or the
 * answer went out first (a 413 or 415 answered before the body: what still arrives is discarded, not kept).
 */
function admitUpload(request: IncomingMessage, response: ServerResponse): ServiceError | null {
  if (uploadsReceiving >= MAX_UPLOADS_RECEIVING) {
    return errors.tooManyRequests(`${MAX_UPLOADS_RECEIVING} snapshot uploads are already being received; send this one again once one of them is in`);
  }
  uploadsReceiving += 1;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    uploadsReceiving -= 1;
  };
  request.once('end', release);
  request.once('close', release);
  response.once('finish', release);
  return null;
}

export const snapshotsRoutes: FastifyPluginAsyncZod = async (app) => {
  // Only this plugin's routes take a binary body; elsewhere these types stay a 415 (http/body-parsers.ts).
  app.addContentTypeParser(SNAPSHOT_FILE_TYPES, { bodyLimit: SNAPSHOT_BODY_LIMIT }, receiveFile);

  app.post(
    '/_emulator/snapshots',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorSaveSnapshot',
        tags: ['Emulator: snapshots'],
        summary: 'Save the whole state under a name',
        description:
          'Every table (users, accounts, transactions, jobs, outbox, deliveries, the id sequence, the webhook endpoint) and the ' +
          'emulated clock. 201 for a new name; 200 when it replaces the snapshot of that name. 409 when the sandbox already holds 32 ' +
          'snapshots, or the saved snapshots of the server (root and sessions) would pass 1 GiB of rows: delete one first ' +
          '(docs/control-plane.md#snapshots).',
        body: saveSnapshotBody,
        response: { 200: snapshotSummarySchema, 201: snapshotSummarySchema, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { snapshot, replaced } = await saveSnapshot(ctxOf(request), request.body.name);
      return reply.status(replaced ? 200 : 201).send(snapshot);
    },
  );

  app.get(
    '/_emulator/snapshots',
    {
      config: CONTROL_PLANE,
      schema: { operationId: 'emulatorListSnapshots', description: 'Every saved snapshot: its name, emulated clock and clock mode, schema version, when it was saved, and its table and row counts (docs/control-plane.md#snapshots).', tags: ['Emulator: snapshots'], summary: 'The saved snapshots, by name', response: { 200: snapshotListSchema, ...errorResponses() } },
    },
    async (request) => ({ data: listSnapshots(ctxOf(request)) }),
  );

  app.get(
    '/_emulator/snapshots/:name',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetSnapshot',
        description: 'One saved snapshot, described as in the list. 404 for an unknown name.',
        tags: ['Emulator: snapshots'],
        summary: 'One saved snapshot',
        params: snapshotParams,
        response: { 200: snapshotSummarySchema, ...errorResponses(404) },
      },
    },
    async (request) => summarize(getSnapshot(ctxOf(request), request.params.name)),
  );

  app.delete(
    '/_emulator/snapshots/:name',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorDeleteSnapshot',
        description: 'Removes a saved snapshot; the current state is not touched. 404 for an unknown name.',
        tags: ['Emulator: snapshots'],
        summary: 'Remove a saved snapshot',
        params: snapshotParams,
        response: { 204: z.null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      deleteSnapshot(ctxOf(request), request.params.name);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/_emulator/snapshots/:name/restore',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorRestoreSnapshot',
        tags: ['Emulator: snapshots'],
        summary: 'Bring a saved state back',
        description:
          'Every table is replaced in one transaction and the clock reads the snapshot instant again (frozen or flowing as it was): ' +
          'like a reset, a deliberate move backwards. Bearer tokens issued after the snapshot are gone with it.',
        params: snapshotParams,
        response: { 200: restoreSnapshotResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({ status: 'restored' as const, ...(await restoreNamedSnapshot(ctxOf(request), request.params.name)) }),
  );

  app.get(
    '/_emulator/snapshots/:name/export',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorExportSnapshot',
        tags: ['Emulator: snapshots'],
        summary: 'Download a snapshot as one file',
        description: 'A SQLite database file: the state tables and a snapshot_info table. Upload it with PUT /_emulator/snapshots/{name} or start a server with --snapshot FILE.',
        produces: ['application/vnd.sqlite3'],
        params: snapshotParams,
        response: { 200: z.unknown().describe('The snapshot file (application/vnd.sqlite3)'), 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const file = await exportSnapshot(ctxOf(request), request.params.name);
      return reply
        .header('content-type', 'application/vnd.sqlite3')
        .header('content-disposition', `attachment; filename="${request.params.name}.sandbox-snapshot"`)
        .header('cache-control', 'no-store')
        .send(file);
    },
  );

  app.put(
    '/_emulator/snapshots/:name',
    {
      config: CONTROL_PLANE,
      bodyLimit: SNAPSHOT_BODY_LIMIT,
      preParsing: (request, reply, payload, done) => {
        // docs/robustness.md#connections: a body of another type is refused before a byte of it is read; the JSON and
        // text parsers would otherwise take up to this route's 512 MiB before the 415
        const refusal = notASnapshotFile(request) ?? tooLargeAFile(request) ?? admitUpload(request.raw, reply.raw);
        if (!refusal) return done(null, payload);
        done(refusal); // the body is not read: the connection closes after the answer (onSend)
      },
      // an answer sent before the body arrived in full (413, 415, 429) closes the connection instead of draining the rest
      onSend: (request, reply, payload, done) => {
        if (!request.raw.complete) void reply.header('connection', 'close');
        done(null, payload);
      },
      schema: {
        operationId: 'emulatorUploadSnapshot',
        tags: ['Emulator: snapshots'],
        summary: 'Upload an exported snapshot file under a name',
        description:
          'The body is the file from GET /_emulator/snapshots/{name}/export, sent as application/octet-stream. The file is checked ' +
          'before anything is stored, while the server goes on answering: its schema must be one an export of this or an older ' +
          'version writes (no views, no triggers), and every row must hold values the API could have written. A refusal is a 400 ' +
          'naming the first offending table and row; nothing is stored. An older file is migrated. 201 for a new name, 200 when replacing; ' +
          `429 while ${MAX_UPLOADS_RECEIVING} uploads are being received or 16 already wait to be checked (docs/robustness.md#connections, ` +
          'docs/robustness.md#off-thread-work); 409 past the limits of a save (32 snapshots a sandbox, 1 GiB of rows for the server: ' +
          'docs/control-plane.md#snapshots); 404 when its session was ended while the file was checked (nothing stored).',
        params: snapshotParams,
        response: { 200: snapshotSummarySchema, 201: snapshotSummarySchema, ...errorResponses(404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      if (!Buffer.isBuffer(request.body)) throw sendTheFile();
      const { snapshot, replaced } = await importSnapshot(ctxOf(request), request.params.name, request.body);
      return reply.status(replaced ? 200 : 201).send(snapshot);
    },
  );
};
