import { createHash } from 'node:crypto';
import { errors, type ErrorCode, type ValidationError } from '../../core/errors.js';
import { compactBase64, decodedBase64Length, isPaddedBase64 } from '../../lib/base64.js';

// Document entries (docs/decisions.md#documents-metadata-only): `{ fileName, contentType: "application/pdf",
// contentBase64 }`, checked for real by opening the file with pdfjs-dist (a full PDF parser, not a search for "%PDF"):
// not a PDF -> PDF_UNREADABLE, encrypted -> PDF_PASSWORD_PROTECTED, more than 10 pages -> PDF_PAGE_LIMIT_EXCEEDED
// (docs/errors.md). pdfjs is asynchronous while services and SQLite transactions are synchronous, so documents
// are inspected before the write transaction starts and only their metadata goes into it. The bytes are
// not stored: nothing in the interface reads a document back, and keeping up to 10 MiB per entry would
// make /_emulator/reset and file databases heavy for no observable behaviour. The SHA-256 is kept so a
// caller can check which file the emulator accepted.

export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024; // docs/decisions.md#documents-metadata-only: 10 MiB
export const MAX_DOCUMENT_PAGES = 10; // docs/errors.md: more than 10 pages -> PDF_PAGE_LIMIT_EXCEEDED
export const DOCUMENT_CONTENT_TYPE = 'application/pdf';
const DOCUMENT_FIELDS = ['fileName', 'contentType', 'contentBase64'] as const;

/** What an entry stores and returns for a document. */
export interface DocumentMetadata {
  fileName: string;
  contentType: typeof DOCUMENT_CONTENT_TYPE;
  sizeBytes: number;
  pageCount: number;
  sha256: string;
}

export interface DecodedDocument {
  fileName: string;
  bytes: Buffer;
}

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * Check the shape of a document value and decode it (synchronous, before any PDF parsing). `ref` is the
 * value's place in the request body, e.g. `entries.2.value`.
 */
export function decodeDocumentValue(value: unknown, ref: string): { document?: DecodedDocument; errors: ValidationError[] } {
  const errors: ValidationError[] = [];
  const add = (type: ValidationError['type'], fieldRef: string, message: string) => errors.push({ type, fieldRef, message: `${fieldRef} ${message}` });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    add('InvalidFormat', ref, `must be a document object { fileName, contentType: "${DOCUMENT_CONTENT_TYPE}", contentBase64 }`);
    return { errors };
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(DOCUMENT_FIELDS as readonly string[]).includes(key)) add('InvalidValue', `${ref}.${key}`, `is not an accepted field; accepted: ${DOCUMENT_FIELDS.join(', ')}`);
  }
  const { fileName, contentType, contentBase64 } = record;
  if (fileName === undefined || fileName === null || fileName === '') add('MissingValue', `${ref}.fileName`, 'is required');
  else if (typeof fileName !== 'string') add('InvalidFormat', `${ref}.fileName`, 'must be a string');
  else if (fileName.length > 255) add('InvalidValue', `${ref}.fileName`, 'must be at most 255 characters');
  else if (CONTROL_CHARACTERS.test(fileName) || /[/\\]/.test(fileName)) add('InvalidFormat', `${ref}.fileName`, 'must be a bare file name without control characters, / or \\');

  if (contentType === undefined || contentType === null || contentType === '') add('MissingValue', `${ref}.contentType`, 'is required');
  else if (contentType !== DOCUMENT_CONTENT_TYPE) add('InvalidValue', `${ref}.contentType`, `must be "${DOCUMENT_CONTENT_TYPE}": only PDF documents are accepted`);

  let bytes: Buffer | undefined;
  if (contentBase64 === undefined || contentBase64 === null || contentBase64 === '') {
    add('MissingValue', `${ref}.contentBase64`, 'is required: the PDF file encoded as Base64');
  } else if (typeof contentBase64 !== 'string') {
    add('InvalidFormat', `${ref}.contentBase64`, 'must be a Base64 string');
  } else {
    // docs/onboarding.md#requirements-and-value-formats: wrapped Base64 (GNU `base64` wraps at 76 columns) is tolerated
    const compact = compactBase64(contentBase64);
    const decodedLength = decodedBase64Length(compact);
    if (!isPaddedBase64(compact)) {
      add('InvalidFormat', `${ref}.contentBase64`, 'must be standard padded Base64 (RFC 4648 alphabet A-Z a-z 0-9 + / with = padding)');
    } else if (decodedLength > MAX_DOCUMENT_BYTES) {
      add('InvalidValue', `${ref}.contentBase64`, `decodes to ${decodedLength} bytes; a document may be at most 10 MiB (${MAX_DOCUMENT_BYTES} bytes)`);
    } else {
      bytes = Buffer.from(compact, 'base64');
    }
  }
  if (errors.length > 0 || bytes === undefined) return { errors };
  return { document: { fileName: fileName as string, bytes }, errors };
}

type PdfjsModule = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfjsModule> | undefined;

// Loaded on first use: the parser is large and only entry writes need it.
function loadPdfjs(): Promise<PdfjsModule> {
  pdfjs ??= importQuietly(() => import('pdfjs-dist/legacy/build/pdf.mjs'));
  return pdfjs;
}

/**
 * The Docker image leaves out pdfjs's optional canvas package (33 MB, for rendering, which is never done here:
 * docs/docker.md#image-size); without it pdfjs prints four "Warning: Cannot ..." lines when it loads. Those
 * lines, and only those, are dropped while it loads.
 */
async function importQuietly<T>(load: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && /^Warning: Cannot (load "@napi-rs\/canvas"|polyfill)/.test(args[0])) return;
    log(...args);
  };
  try {
    return await load();
  } finally {
    console.log = log;
  }
}

export type PdfInspection = { ok: true; pageCount: number } | { ok: false; errorCode: ErrorCode; reason: string };
type PdfDocument = Awaited<ReturnType<PdfjsModule['getDocument']>['promise']>;

/**
 * The page count, checked: pdfjs's `numPages` is the file's own `/Count` claim (-5 and 0 were taken as they were),
 * so a count under 1 is unreadable, and each counted page (at most the limit) is loaded, which walks the page tree
 * and fails on a cycle or a page that is not there (docs/onboarding.md#requirements-and-value-formats). A count over
 * the limit is refused unread: pdfjs has already checked that its last page exists, or counted the leaves itself.
 */
async function checkedPageCount(pdf: PdfDocument): Promise<PdfInspection> {
  const claimed = pdf.numPages;
  if (!Number.isInteger(claimed) || claimed < 1) {
    return { ok: false, errorCode: 'PDF_UNREADABLE', reason: `is not a readable PDF file: its page tree counts ${claimed} pages` };
  }
  if (claimed > MAX_DOCUMENT_PAGES) {
    return { ok: false, errorCode: 'PDF_PAGE_LIMIT_EXCEEDED', reason: `has ${claimed} pages; a document may have at most ${MAX_DOCUMENT_PAGES}` };
  }
  for (let number = 1; number <= claimed; number += 1) {
    const loaded = await pdf.getPage(number).then(
      () => true,
      () => false,
    );
    if (!loaded) return { ok: false, errorCode: 'PDF_UNREADABLE', reason: `is not a readable PDF file: page ${number} of its page tree cannot be read` };
  }
  return { ok: true, pageCount: claimed };
}

/** Open a PDF with pdfjs-dist and classify it by the three codes of docs/decisions.md#error-code-list. */
export async function inspectPdf(bytes: Buffer): Promise<PdfInspection> {
  const { getDocument } = await loadPdfjs();
  // pdfjs may transfer (detach) the buffer it is given, so it gets its own copy.
  const task = getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, verbosity: 0 });
  let pdf;
  try {
    pdf = await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    const name = (error as { name?: string } | null)?.name;
    if (name === 'PasswordException') return { ok: false, errorCode: 'PDF_PASSWORD_PROTECTED', reason: 'is a password-protected PDF; upload it without a password' };
    return { ok: false, errorCode: 'PDF_UNREADABLE', reason: 'is not a readable PDF file' };
  }
  try {
    // A file encrypted with only an owner password opens without one, yet it is still encrypted.
    const metadata = await pdf.getMetadata().catch(() => undefined);
    const info = metadata?.info as { EncryptFilterName?: string | null } | undefined;
    if (info?.EncryptFilterName) return { ok: false, errorCode: 'PDF_PASSWORD_PROTECTED', reason: 'is an encrypted PDF; upload it without a password or encryption' };
    return await checkedPageCount(pdf);
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

/**
 * Inspect decoded documents (by their place in the request, e.g. `entries.2.value`) and return their
 * metadata. The first failing document sets the error code; every failing document is listed.
 */
export async function inspectDocuments(documents: ReadonlyMap<string, DecodedDocument>): Promise<Map<string, DocumentMetadata>> {
  const out = new Map<string, DocumentMetadata>();
  const failures: Array<{ errorCode: ErrorCode; error: ValidationError }> = [];
  for (const [ref, document] of documents) {
    const result = await inspectPdf(document.bytes);
    if (!result.ok) {
      const fieldRef = `${ref}.contentBase64`;
      failures.push({ errorCode: result.errorCode, error: { type: 'UnprocessableValue', fieldRef, message: `${fieldRef} (${document.fileName}) ${result.reason}` } });
      continue;
    }
    out.set(ref, {
      fileName: document.fileName,
      contentType: DOCUMENT_CONTENT_TYPE,
      sizeBytes: document.bytes.length,
      pageCount: result.pageCount,
      sha256: createHash('sha256').update(document.bytes).digest('hex'),
    });
  }
  const first = failures[0];
  if (first) {
    throw errors.rejected(first.errorCode, first.error.message, failures.map((failure) => failure.error));
  }
  return out;
}
