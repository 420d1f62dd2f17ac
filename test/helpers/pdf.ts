import PDFDocument from 'pdfkit';

// Test PDFs generated on the spot with pdfkit (not downloaded: tests need no network). pdfkit's userPassword /
// ownerPassword options encrypt the file.

export interface PdfOptions {
  pages?: number;
  userPassword?: string;
  ownerPassword?: string;
  /** Extra text per page, to grow the file. */
  text?: string;
}

export function makePdf(options: PdfOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const encryption =
      options.userPassword !== undefined || options.ownerPassword !== undefined
        ? { userPassword: options.userPassword, ownerPassword: options.ownerPassword, pdfVersion: '1.7' as const }
        : {};
    const doc = new PDFDocument({ autoFirstPage: false, compress: false, info: { CreationDate: new Date(0) }, ...encryption });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    const pages = options.pages ?? 1;
    for (let page = 1; page <= pages; page += 1) {
      doc.addPage();
      doc.text(`Sandbox test document, page ${page} of ${pages}. ${options.text ?? ''}`);
    }
    doc.end();
  });
}

/**
 * Grow a PDF to `size` bytes with a trailing PDF comment line: PDF readers skip comments, so the file
 * stays a valid one-page document (used for the size limits).
 */
export function padPdf(pdf: Buffer, size: number): Buffer {
  const filler = size - pdf.length - 2;
  if (filler < 0) throw new Error('the PDF is already larger than the requested size');
  return Buffer.concat([pdf, Buffer.from(`%${'x'.repeat(filler)}\n`)]);
}

/** A document entry value for the entry write (docs/onboarding.md#writing-entries). */
export function documentValue(bytes: Buffer, fileName = 'document.pdf'): { fileName: string; contentType: 'application/pdf'; contentBase64: string } {
  return { fileName, contentType: 'application/pdf', contentBase64: bytes.toString('base64') };
}

/**
 * A PDF written object by object (`objects[0]` is object 1, the catalog), with a correct cross-reference table:
 * for page trees pdfkit would never write, such as a `/Count` that is not the number of pages, or a cycle.
 */
export function rawPdf(objects: string[]): Buffer {
  let text = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = text.length;
    text += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, 'latin1');
}

/** A page tree whose root `/Pages` (object 2) says `count` over `leaves` real pages (objects 3 onwards). */
export function pageTreePdf(count: number, leaves: number): Buffer {
  const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>';
  const kids = Array.from({ length: leaves }, (_, index) => `${index + 3} 0 R`).join(' ');
  return rawPdf(['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`, ...Array<string>(leaves).fill(page)]);
}
