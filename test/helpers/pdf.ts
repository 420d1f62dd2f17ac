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
