import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Statement, StatementEntry } from './statements.schema.js';

// pdfkit is loaded on the first PDF rendered, not at start-up: importing it (and fontkit's Unicode tables)
// is about a third of the server's cold start, and most sandboxes never render a PDF.
const importPdfkit = () => import('pdfkit');
let pdfkit: ReturnType<typeof importPdfkit> | undefined;
function loadPdfkit(): ReturnType<typeof importPdfkit> {
  pdfkit ??= importPdfkit();
  return pdfkit;
}

// The PDF form of a statement (docs/statements.md#pdf), drawn with pdfkit: title, holder, account, period, deposit
// instructions, balances, summary table, then the entries day by day with page breaks, and "Page N of M"
// on every page (bufferPages: true, numbers written once the page count is known).
//
// One layout routine serves two purposes: with a document it draws; without one it only moves the cursor
// and counts pages. Every row has a fixed height (long descriptions are cut to one line), so the count is
// exact and an oversized statement is refused (PDF_PAGE_LIMIT_EXCEEDED) before anything is drawn.

const PAGE_WIDTH = 612; // US Letter, points
const PAGE_HEIGHT = 792;
const MARGIN = 48;
const LEFT = MARGIN;
const RIGHT = PAGE_WIDTH - MARGIN;
const CONTENT_TOP = MARGIN;
/** Lowest y a block may reach; the footer lives below it. */
export const CONTENT_BOTTOM = PAGE_HEIGHT - MARGIN - 8;
const FOOTER_Y = PAGE_HEIGHT - MARGIN + 12;

export const ROW_HEIGHT = 12;
const LINE_HEIGHT = 13;
const HEADING_HEIGHT = 22;
const TABLE_HEADER_HEIGHT = 15;
const DAY_HEADER_HEIGHT = 18;
const DAY_CLOSING_HEIGHT = 16;
const SECTION_GAP = 8;

// The text is set in DejaVu Sans Condensed, a Unicode TrueType font shipped by the npm package
// dejavu-fonts-ttf (free licence: Bitstream Vera derived, changes public domain), embedded as a subset of
// the glyphs used, so names print as written: Latin with its extensions, Greek, Cyrillic, and more
// (docs/statements.md#fonts). The files are read from node_modules at run time (the bundle keeps them
// outside, as pdfkit's own), once per process.
const REGULAR = 'Sans';
const BOLD = 'Sans-Bold';
const ITALIC = 'Sans-Oblique';
const FONT_FILES: Record<string, string> = {
  [REGULAR]: 'DejaVuSansCondensed.ttf',
  [BOLD]: 'DejaVuSansCondensed-Bold.ttf',
  [ITALIC]: 'DejaVuSansCondensed-Oblique.ttf',
};
// The font files as read, then the fontkit fonts pdfkit parsed from them on the first render: a document
// takes the parsed font (pdfkit accepts one) and makes its own subset, so later renders skip the parsing.
const fontSources = new Map<string, Buffer | object>();
function fontSource(name: string): Buffer | object {
  let source = fontSources.get(name);
  if (!source) {
    const require = createRequire(import.meta.url);
    const dir = require.resolve('dejavu-fonts-ttf/package.json').replace(/package\.json$/, 'ttf/');
    source = readFileSync(dir + FONT_FILES[name]!);
    fontSources.set(name, source);
  }
  return source;
}
function keepParsedFont(name: string, handle: EmbeddedFontHandle): void {
  fontSources.set(name, handle.font);
}
const MUTED = '#555555';
const RULE = '#bbbbbb';
const INK = '#000000';

/** Entry table columns: x of the left edge and width; amounts are right-aligned in theirs. */
const COLUMNS = {
  time: { x: LEFT, width: 40 },
  description: { x: LEFT + 42, width: 150 },
  reference: { x: LEFT + 196, width: 80 },
  status: { x: LEFT + 280, width: 44 },
  debit: { x: LEFT + 326, width: 62 },
  credit: { x: LEFT + 390, width: 62 },
  balance: { x: LEFT + 454, width: RIGHT - (LEFT + 454) },
} as const;

const YIELD_EVERY_ROWS = 250;

interface TextStyle {
  font?: string;
  size?: number;
  color?: string;
  align?: 'left' | 'right';
  /** Cut with an ellipsis (text) or shrink the font (figures, references) to fit this width. */
  width?: number;
  fit?: 'truncate' | 'shrink';
}

// Scripts written right to left or whose letters join (Hebrew, Arabic, Syriac, Thaana, N'Ko and their
// presentation forms) would need bidi and shaping, which this writer does not do: they print as "?", as does
// any character the font has no glyph for (CJK, Indic scripts, emoji...). CSV and JSON keep every character.
const UNSHAPED = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/u;
const PLAIN_ASCII = /^[\x20-\x7e]*$/;
function printable(text: string): string {
  if (PLAIN_ASCII.test(text)) return text; // nearly every cell: nothing to normalize or replace
  return text
    .normalize('NFC')
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[\p{Cc}\p{Cs}]/gu, '?')
    .replace(new RegExp(UNSHAPED.source, 'gu'), '?');
}

/** Thousands separators for display: "-1234567.50" -> "-1,234,567.50". */
export function groupDigits(decimal: string): string {
  const negative = decimal.startsWith('-');
  const [whole = '', fraction] = (negative ? decimal.slice(1) : decimal).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * The parts of a pdfkit embedded font (pdfkit 0.20 EmbeddedFont over a fontkit font) that the text writer
 * below uses: it encodes glyphs into the font's subset and records their widths and Unicode values exactly
 * as EmbeddedFont.encode does, so the embedded subset, its widths and its ToUnicode map (what a reader
 * extracts as text) stay right. pdfkit exposes the current font only as `doc._font`; the statement tests
 * read every PDF back with pdfjs, so a pdfkit change that breaks this shows up there.
 */
interface EmbeddedFontHandle {
  id: string;
  ascender: number;
  scale: number;
  ref(): unknown;
  font: { glyphForCodePoint(codePoint: number): { id: number; advanceWidth: number } };
  subset: { includeGlyph(glyphId: number): number };
  widths: number[];
  unicode: number[][];
}

interface Glyph {
  /** Glyph id in the subset, 4 hex digits, as pdfkit writes it. */
  hex: string;
  /** Advance width in thousandths of the font size. */
  width: number;
}

/** pdfkit's number format in content streams (PDFObject.number). */
function pdfNumber(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

const REPLACEMENT = '?'.codePointAt(0)!;

/**
 * Glyphs of one embedded font, looked up once per character. No kerning and no shaping: each character is
 * one glyph at its advance width (pdfkit's own text() runs fontkit's layout per call, about 20 us a cell,
 * which a 10,000-entry statement cannot afford).
 */
class FontMetrics {
  private readonly glyphs = new Map<number, Glyph>();

  constructor(readonly handle: EmbeddedFontHandle) {}

  glyph(codePoint: number): Glyph {
    let glyph = this.glyphs.get(codePoint);
    if (!glyph) {
      let source = this.handle.font.glyphForCodePoint(codePoint);
      let unicode = codePoint;
      if (source.id === 0 && codePoint !== REPLACEMENT) {
        source = this.handle.font.glyphForCodePoint(REPLACEMENT); // no glyph in the font: "?"
        unicode = REPLACEMENT;
      }
      const id = this.handle.subset.includeGlyph(source.id);
      const width = source.advanceWidth * this.handle.scale;
      this.handle.widths[id] ??= width;
      this.handle.unicode[id] ??= [unicode];
      glyph = { hex: id.toString(16).padStart(4, '0'), width };
      this.glyphs.set(codePoint, glyph);
    }
    return glyph;
  }

  /** Width in thousandths of the font size. */
  units(text: string): number {
    let units = 0;
    for (const char of text) units += this.glyph(char.codePointAt(0)!).width;
    return units;
  }

  /** The text-showing operator for `text`: one hex string of glyph ids. */
  showText(text: string): string {
    let hex = '';
    for (const char of text) hex += this.glyph(char.codePointAt(0)!).hex;
    return `<${hex}> Tj`;
  }
}

function rgb(hex: string): string {
  const channel = (offset: number) => pdfNumber(parseInt(hex.slice(offset, offset + 2), 16) / 255);
  return `${channel(1)} ${channel(3)} ${channel(5)} rg`;
}

/**
 * Cursor, page counter and (when rendering) the pdfkit document.
 *
 * Text is written as PDF text operators directly (pdfkit's text() costs about 20 us a cell: option
 * copying, kerning looked up by string keys, and a second kerned measurement it discards), with the same
 * glyphs, kerning and positions pdfkit would produce. The cells of a page are collected and written as one
 * text object; anything else drawn through pdfkit (rules, a new page) first flushes what is collected, so
 * the content keeps its drawing order.
 */
class Layout {
  pages = 1;
  y = CONTENT_TOP;
  private readonly fonts = new Map<string, FontMetrics>();
  private pending: string[] = [];
  private pendingFont = '';
  private pendingSize = 0;
  private pendingColor = '';
  private readonly registered = new Set<string>();

  constructor(readonly doc: PDFKit.PDFDocument | null) {}

  fits(height: number): boolean {
    return this.y + height <= CONTENT_BOTTOM;
  }

  newPage(): void {
    this.pages += 1;
    this.y = CONTENT_TOP;
    if (!this.doc) return;
    this.flush();
    this.registered.clear();
    this.doc.addPage();
  }

  /** Start a new page unless `height` fits; true when a page was started. */
  ensure(height: number): boolean {
    if (this.fits(height)) return false;
    this.newPage();
    return true;
  }

  text(value: string, x: number, y: number, style: TextStyle = {}): void {
    if (!this.doc) return;
    const metrics = this.metrics(style.font ?? REGULAR);
    const color = style.color ?? INK;
    let size = style.size ?? 9;
    let text = printable(value);
    let width = (metrics.units(text) * size) / 1000;
    if (style.width !== undefined && width > style.width) {
      if (style.fit === 'shrink') {
        size = Math.max(4, (size * style.width) / width);
      } else {
        text = this.truncate(metrics, text, size, style.width);
      }
      width = (metrics.units(text) * size) / 1000;
    }
    if (text.length === 0) return;
    const left = style.align === 'right' && style.width !== undefined ? x + style.width - width : x;
    this.write(metrics, size, color, text, left, y);
  }

  /** The longest prefix that fits `maxWidth` together with an ellipsis. */
  private truncate(metrics: FontMetrics, text: string, size: number, maxWidth: number): string {
    const room = (maxWidth * 1000) / size - metrics.units('…');
    let used = 0;
    let end = 0;
    for (const char of text) {
      const units = metrics.units(char);
      if (used + units > room) break;
      used += units;
      end += char.length;
    }
    return `${text.slice(0, end).trimEnd()}…`;
  }

  rule(y: number, color = RULE): void {
    if (!this.doc) return;
    this.flush();
    this.doc.save().moveTo(LEFT, y).lineTo(RIGHT, y).lineWidth(0.5).strokeColor(color).stroke().restore();
  }

  /** Write the collected cells as one text object, in pdfkit's coordinate flip (origin at the top left). */
  flush(): void {
    if (!this.doc || this.pending.length === 0) return;
    this.doc.addContent(`q\n1 0 0 -1 0 ${PAGE_HEIGHT} cm\nBT\n${this.pending.join('\n')}\nET\nQ`);
    this.pending = [];
    this.pendingFont = '';
    this.pendingSize = 0;
    this.pendingColor = '';
  }

  private write(metrics: FontMetrics, size: number, color: string, text: string, x: number, y: number): void {
    const handle = metrics.handle;
    if (!this.registered.has(handle.id)) {
      // the font becomes a resource of this page, as pdfkit's own text() does it
      (this.doc!.page.fonts as Record<string, unknown>)[handle.id] ??= handle.ref();
      this.registered.add(handle.id);
    }
    // pdfkit's default baseline ('top'): the text hangs from y by the font's ascender
    const baseline = PAGE_HEIGHT - y - (handle.ascender / 1000) * size;
    this.pending.push(`1 0 0 1 ${pdfNumber(x)} ${pdfNumber(baseline)} Tm`);
    if (handle.id !== this.pendingFont || size !== this.pendingSize) {
      this.pending.push(`/${handle.id} ${pdfNumber(size)} Tf`);
      this.pendingFont = handle.id;
      this.pendingSize = size;
    }
    if (color !== this.pendingColor) {
      this.pending.push(rgb(color));
      this.pendingColor = color;
    }
    this.pending.push(metrics.showText(text));
  }

  private metrics(font: string): FontMetrics {
    let metrics = this.fonts.get(font);
    if (!metrics) {
      this.doc!.font(font);
      const handle = (this.doc as unknown as { _font: EmbeddedFontHandle })._font;
      keepParsedFont(font, handle);
      metrics = new FontMetrics(handle);
      this.fonts.set(font, metrics);
    }
    return metrics;
  }
}

function heading(layout: Layout, title: string, keepWith: number): void {
  layout.y += SECTION_GAP;
  layout.ensure(HEADING_HEIGHT + keepWith);
  layout.text(title, LEFT, layout.y + 4, { font: BOLD, size: 11 });
  layout.rule(layout.y + HEADING_HEIGHT - 4, INK);
  layout.y += HEADING_HEIGHT;
}

function labelledAmount(layout: Layout, label: string, amount: string, currency: string, bold = false): void {
  layout.ensure(LINE_HEIGHT);
  const font = bold ? BOLD : REGULAR;
  layout.text(label, LEFT, layout.y, { font, width: 250, fit: 'truncate' });
  layout.text(`${groupDigits(amount)} ${currency}`, LEFT + 250, layout.y, { font, width: 150, align: 'right', fit: 'shrink' });
  layout.y += LINE_HEIGHT;
}

function entryColumnHeader(layout: Layout): void {
  const y = layout.y + 3;
  const style = { font: BOLD, size: 7.5, color: MUTED } as const;
  layout.text('Time', COLUMNS.time.x, y, style);
  layout.text('Description', COLUMNS.description.x, y, style);
  layout.text('Reference', COLUMNS.reference.x, y, style);
  layout.text('Status', COLUMNS.status.x, y, style);
  layout.text('Debit', COLUMNS.debit.x, y, { ...style, width: COLUMNS.debit.width, align: 'right' });
  layout.text('Credit', COLUMNS.credit.x, y, { ...style, width: COLUMNS.credit.width, align: 'right' });
  layout.text('Balance', COLUMNS.balance.x, y, { ...style, width: COLUMNS.balance.width, align: 'right' });
  layout.rule(layout.y + TABLE_HEADER_HEIGHT - 2);
  layout.y += TABLE_HEADER_HEIGHT;
}

function dayHeader(layout: Layout, date: string, openingBalance: string, continued: boolean): void {
  const weekday = WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()];
  const y = layout.y + 5;
  layout.text(`${weekday} ${date}${continued ? ' (continued)' : ''}`, LEFT, y, { font: BOLD, size: 8.5 });
  if (!continued) {
    layout.text(`Opening balance ${groupDigits(openingBalance)}`, LEFT + 250, y, { size: 8, color: MUTED, width: RIGHT - LEFT - 250, align: 'right' });
  }
  layout.y += DAY_HEADER_HEIGHT;
}

function entryRow(layout: Layout, entry: StatementEntry): void {
  const y = layout.y + 2;
  const size = 7.5;
  const amount = groupDigits(entry.amount);
  layout.text(entry.occurredAt.slice(11, 19), COLUMNS.time.x, y, { size });
  layout.text(entry.description, COLUMNS.description.x, y, {
    size,
    font: entry.isFee ? ITALIC : REGULAR,
    width: COLUMNS.description.width,
    fit: 'truncate',
  });
  layout.text(entry.reference, COLUMNS.reference.x, y, { size, width: COLUMNS.reference.width, fit: 'shrink' });
  layout.text(entry.statusAsOfPeriodEnd === 'SETTLED' ? 'Settled' : 'In flight', COLUMNS.status.x, y, {
    size,
    color: entry.statusAsOfPeriodEnd === 'SETTLED' ? INK : MUTED,
  });
  const column = entry.direction === 'DEBIT' ? COLUMNS.debit : COLUMNS.credit;
  layout.text(amount, column.x, y, { size, width: column.width, align: 'right', fit: 'shrink' });
  layout.text(groupDigits(entry.balanceAfter), COLUMNS.balance.x, y, { size, width: COLUMNS.balance.width, align: 'right', fit: 'shrink' });
  layout.y += ROW_HEIGHT;
}

/**
 * The whole document, top to bottom. A generator so that rendering can give the event loop a turn every
 * few hundred rows while counting pages stays synchronous.
 */
function* layoutStatement(layout: Layout, statement: Statement): Generator<void, void, void> {
  const { currency } = statement;
  layout.text('Account statement', LEFT, layout.y, { font: BOLD, size: 18 });
  layout.y += 28;
  layout.text(statement.holderName, LEFT, layout.y, { font: BOLD, size: 11, width: RIGHT - LEFT, fit: 'truncate' });
  layout.y += 16;
  const details: Array<[string, string]> = [
    ['Account', statement.accountDisplayName ? `${statement.accountDisplayName} (${statement.accountId})` : statement.accountId],
    ['Currency', currency],
    ['Period', `${statement.from} to ${statement.to} (UTC, both days included)`],
    ['Generated', statement.generatedAt],
  ];
  for (const [label, value] of details) {
    layout.text(`${label}:`, LEFT, layout.y, { color: MUTED });
    layout.text(value, LEFT + 70, layout.y, { width: RIGHT - LEFT - 70, fit: 'truncate' });
    layout.y += LINE_HEIGHT;
  }

  heading(layout, 'Deposit instructions', LINE_HEIGHT);
  if (statement.depositInstructions.length === 0) {
    layout.text('No active deposit instructions.', LEFT, layout.y, { color: MUTED });
    layout.y += LINE_HEIGHT;
  }
  for (const instruction of statement.depositInstructions) {
    layout.ensure(LINE_HEIGHT * (1 + instruction.fields.length) + 4);
    layout.text(`${instruction.rail.label} (${instruction.rail.type})`, LEFT, layout.y, { font: BOLD, width: RIGHT - LEFT, fit: 'truncate' });
    layout.y += LINE_HEIGHT;
    for (const field of instruction.fields) {
      layout.text(`${field.label}:`, LEFT + 12, layout.y, { color: MUTED, width: 140, fit: 'truncate' });
      layout.text(field.value, LEFT + 156, layout.y, { width: RIGHT - LEFT - 156, fit: 'shrink' });
      layout.y += LINE_HEIGHT;
    }
    layout.y += 4;
  }

  heading(layout, 'Balances', LINE_HEIGHT * 4);
  labelledAmount(layout, `Opening balance (start of ${statement.from})`, statement.openingBalance, currency);
  labelledAmount(layout, 'Total credits', statement.totalCredits, currency);
  labelledAmount(layout, 'Total debits', statement.totalDebits, currency);
  labelledAmount(layout, `Closing balance (end of ${statement.to})`, statement.closingBalance, currency, true);

  heading(layout, 'Summary', TABLE_HEADER_HEIGHT + LINE_HEIGHT);
  if (statement.summary.length === 0) {
    layout.text('No activity in this period.', LEFT, layout.y, { color: MUTED });
    layout.y += LINE_HEIGHT;
  } else {
    const header = { font: BOLD, size: 8, color: MUTED } as const;
    layout.text('Type', LEFT, layout.y + 3, header);
    layout.text('Entries', LEFT + 250, layout.y + 3, { ...header, width: 60, align: 'right' });
    layout.text(`Net total (${currency})`, LEFT + 310, layout.y + 3, { ...header, width: 150, align: 'right' });
    layout.rule(layout.y + TABLE_HEADER_HEIGHT - 2);
    layout.y += TABLE_HEADER_HEIGHT;
    for (const line of statement.summary) {
      layout.ensure(LINE_HEIGHT);
      layout.text(line.label, LEFT, layout.y, { width: 240, fit: 'truncate' });
      layout.text(String(line.count), LEFT + 250, layout.y, { width: 60, align: 'right' });
      layout.text(groupDigits(line.total), LEFT + 310, layout.y, { width: 150, align: 'right', fit: 'shrink' });
      layout.y += LINE_HEIGHT;
    }
  }

  heading(layout, 'Entries', TABLE_HEADER_HEIGHT + DAY_HEADER_HEIGHT + ROW_HEIGHT);
  if (statement.days.length === 0) {
    layout.text('No entries in this period.', LEFT, layout.y, { color: MUTED });
    layout.y += LINE_HEIGHT;
    return;
  }
  entryColumnHeader(layout);
  let rows = 0;
  for (const day of statement.days) {
    // keep a day's heading with its first entry
    if (layout.ensure(DAY_HEADER_HEIGHT + ROW_HEIGHT)) entryColumnHeader(layout);
    dayHeader(layout, day.date, day.openingBalance, false);
    for (const entry of day.entries) {
      if (layout.ensure(ROW_HEIGHT)) {
        entryColumnHeader(layout);
        dayHeader(layout, day.date, day.openingBalance, true);
      }
      entryRow(layout, entry);
      rows += 1;
      if (rows % YIELD_EVERY_ROWS === 0) yield;
    }
    if (layout.ensure(DAY_CLOSING_HEIGHT)) entryColumnHeader(layout);
    layout.rule(layout.y + 1);
    layout.text(`Closing balance ${day.date}`, LEFT + 250, layout.y + 4, { font: BOLD, size: 8, width: 140, align: 'right' });
    layout.text(groupDigits(day.closingBalance), COLUMNS.balance.x, layout.y + 4, {
      font: BOLD,
      size: 8,
      width: COLUMNS.balance.width,
      align: 'right',
      fit: 'shrink',
    });
    layout.y += DAY_CLOSING_HEIGHT;
  }
}

/** Exact page count of the rendered PDF, computed without drawing. */
export function estimatePdfPages(statement: Statement): number {
  const layout = new Layout(null);
  for (const _ of layoutStatement(layout, statement)) {
    // counting only
  }
  return layout.pages;
}

function drawFooters(doc: PDFKit.PDFDocument, statement: Statement): void {
  const { start, count } = doc.bufferedPageRange();
  const left = printable(`${statement.holderName} - ${statement.accountId} - ${statement.from} to ${statement.to}`);
  for (let index = start; index < start + count; index += 1) {
    doc.switchToPage(index);
    doc.font(REGULAR).fontSize(7.5).fillColor(MUTED);
    doc.text(left, LEFT, FOOTER_Y, { lineBreak: false });
    const label = `Page ${index - start + 1} of ${count}`;
    doc.text(label, RIGHT - doc.widthOfString(label), FOOTER_Y, { lineBreak: false });
  }
}

/** Render the statement to PDF bytes. Deterministic: the creation date is the statement's generatedAt. */
export async function renderStatementPdf(statement: Statement): Promise<Buffer> {
  const { default: PDFDocument } = await loadPdfkit();
  const doc = new PDFDocument({
    size: 'LETTER',
    margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
    bufferPages: true,
    info: {
      Title: `Account statement ${statement.accountId} ${statement.from} to ${statement.to}`,
      Author: printable(statement.holderName),
      Subject: 'Account statement',
      Creator: 'service-sandbox',
      Producer: 'service-sandbox (pdfkit)',
      CreationDate: new Date(statement.generatedAt),
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  for (const name of Object.keys(FONT_FILES)) doc.registerFont(name, fontSource(name) as Buffer);
  const layout = new Layout(doc);
  for (const _ of layoutStatement(layout, statement)) await yieldToEventLoop();
  layout.flush();
  if (layout.pages !== doc.bufferedPageRange().count) {
    throw new Error(`PDF layout counted ${layout.pages} pages but drew ${doc.bufferedPageRange().count}`);
  }
  drawFooters(doc, statement);
  doc.end();
  await finished;
  return Buffer.concat(chunks);
}
