import type { DocumentPart } from '../http/openapi-document.js';

// What sessions add to the OpenAPI document (docs/openapi.md#what-each-area-adds): their ids, and the Retry-After of a
// refused creation (docs/sessions.md#limits). The app adds it beside the modules' parts: sessions have no descriptor.

const SESSION_ID = { description: 'The id of a session', example: 'ses_0123456789abcdef' };

export const sessionsDocument: DocumentPart = {
  parameters: { 'GET /_emulator/sessions/{id} id': SESSION_ID, 'DELETE /_emulator/sessions/{id} id': SESSION_ID },
  responseHeaders: {
    'POST /_emulator/sessions': {
      '429': {
        'Retry-After': {
          description: 'Seconds until a session slot can be expected (from how long ended sessions lived; 5 before any ended), or 1 when sent scenarios wait to be read',
          schema: { type: 'integer', minimum: 1, example: 2 },
        },
      },
    },
  },
};
