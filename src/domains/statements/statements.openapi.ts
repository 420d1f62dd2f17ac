import { ID_PREFIXES } from '../../lib/ids.js';
import type { DocumentPart, Json } from '../../http/openapi-document.js';

// What the statements domain adds to the OpenAPI document (docs/openapi.md#what-each-area-adds): the statement answer is
// one of two shapes by format, and a statement link names its file in its url.

const STATEMENT = 'GET /v1/accounts/{accountId}/statement';

export const statementsDocument: DocumentPart = {
  parameters: {
    fileId: { description: 'The statement file, as named by the url of a StatementLink (GET /v1/accounts/{accountId}/statement with format csv or pdf)' },
  },
  idPrefixes: { fileId: `${ID_PREFIXES.statementFile}_` },
  // a statement link names its file in its url
  exampleIds: (value: Json) => {
    const file = typeof value.url === 'string' ? /\/v1\/statement-files\/([^/?]+)/.exec(value.url) : null;
    return file ? [file[1]!] : [];
  },
  operations: {
    [STATEMENT]: (operation: Json) => {
      const media = operation.responses?.['200']?.content?.['application/json'];
      if (!media?.schema?.anyOf) return;
      media.schema = {
        oneOf: media.schema.anyOf,
        description: 'format json (the default): the Statement; format csv or pdf: a StatementLink to the rendered file (interface 4.3).',
      };
      operation.responses['200'].description = 'The statement (format json) or a signed link to its file (format csv or pdf)';
    },
  },
};
