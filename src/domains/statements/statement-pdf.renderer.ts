import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import PDFDocument from 'pdfkit';
import type { Statement, StatementEntry } from './statements.schema.js';

// The PDF form of a statement (contract 9), drawn with pdfkit: title, holder, account, period, deposit
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

const REGULAR = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const ITALIC = 'Helvetica-Oblique';
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

// Standard PDF fonts speak WinAnsi only: other characters become "?" in the PDF (CSV and JSON keep them).
const WIN_ANSI_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
function printable(text: string): string {
  let out = '';
  for (const char of text.normalize('NFC').replace(/[\r\n\t]+/g, ' ')) {
    const code = char.codePointAt(0)!;
    out += (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRAS.has(char) ? char : '?';
  }
  return out;
}

/** Thousands separators for display: "-1234567.50" -> "-1,234,567.50". */
export function groupDigits(decimal: string): string {
  const negative = decimal.startsWith('-');
  const [whole = '', fraction] = (negative ? decimal.slice(1) : decimal).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Cursor, page counter and (when rendering) the pdfkit document. */
class Layout {
  pages = 1;
  y = CONTENT_TOP;
  private font = '';
  private size = 0;
  private color = '';
  /** Character widths at size 1, per font. */
  private readonly widths = new Map<string, Map<string, number>>();

  constructor(readonly doc: PDFKit.PDFDocument | null) {}

  fits(height: number): boolean {
    return this.y + height <= CONTENT_BOTTOM;
  }

  newPage(): void {
    this.pages += 1;
    this.y = CONTENT_TOP;
    this.doc?.addPage();
  }

  /** Start a new page unless `height` fits; true when a page was started. */
  ensure(height: number): boolean {
    if (this.fits(height)) return false;
    this.newPage();
    return true;
  }

  text(value: string, x: number, y: number, style: TextStyle = {}): void {
    const doc = this.doc;
    if (!doc) return;
    const font = style.font ?? REGULAR;
    const color = style.color ?? INK;
    let size = style.size ?? 9;
    this.use(font, size, color);
    let text = printable(value);
    let width = this.measure(text);
    if (style.width !== undefined && width > style.width) {
      if (style.fit === 'shrink') {
        size = Math.max(4, (size * style.width) / width);
        this.use(font, size, color);
      } else {
        text = this.truncate(text, style.width);
      }
      width = this.measure(text);
    }
    const left = style.align === 'right' && style.width !== undefined ? x + style.width - width : x;
    // textWidth/wordCount spare pdfkit a second measurement of the same string (used only for links and
    // underlines, which are not drawn here)
    doc.text(text, left, y, { lineBreak: false, textWidth: width, wordCount: 1 } as PDFKit.Mixins.TextOptions);
  }

  /**
   * Width of a string in the current font and size from a per-font table of character widths. Kerning is
   * left out: it only ever narrows text in the standard fonts (figures are not kerned at all), so a string
   * measured to fit does fit. Measuring each row with pdfkit's kerned widthOfString was the hot spot of
   * large statements.
   */
  private measure(text: string): number {
    let table = this.widths.get(this.font);
    if (!table) this.widths.set(this.font, (table = new Map()));
    let units = 0;
    for (const char of text) {
      let width = table.get(char);
      if (width === undefined) {
        width = this.doc!.widthOfString(char) / this.size;
        table.set(char, width);
      }
      units += width;
    }
    return units * this.size;
  }

  /** The longest prefix that fits `maxWidth` together with an ellipsis. */
  private truncate(text: string, maxWidth: number): string {
    const room = maxWidth - this.measure('…');
    let used = 0;
    let end = 0;
    for (const char of text) {
      const width = this.measure(char);
      if (used + width > room) break;
      used += width;
      end += char.length;
    }
    return `${text.slice(0, end).trimEnd()}…`;
  }

  rule(y: number, color = RULE): void {
    if (!this.doc) return;
    this.doc.save().moveTo(LEFT, y).lineTo(RIGHT, y).lineWidth(0.5).strokeColor(color).stroke().restore();
  }

  private use(font: string, size: number, color: string): void {
    const doc = this.doc!;
    if (font !== this.font) doc.font((this.font = font));
    if (size !== this.size) doc.fontSize((this.size = size));
    if (color !== this.color) doc.fillColor((this.color = color));
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
  const layout = new Layout(doc);
  for (const _ of layoutStatement(layout, statement)) await yieldToEventLoop();
  if (layout.pages !== doc.bufferedPageRange().count) {
    throw new Error(`PDF layout counted ${layout.pages} pages but drew ${doc.bufferedPageRange().count}`);
  }
  drawFooters(doc, statement);
  doc.end();
  await finished;
  return Buffer.concat(chunks);
}
