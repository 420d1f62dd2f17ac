// The information a given user's onboarding writes (docs/decisions.md#scenario-given): fixed values that pass every
// requirement of its type (docs/onboarding.md), so the same file makes the same user every time. The document is a
// one-page PDF (the one docs/onboarding.md's walkthrough uses).

const DOCUMENT_PDF =
  'JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA2MTIgNzkyXSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA1MiA+PgpzdHJlYW0KQlQgL0YxIDE4IFRmIDcyIDcyMCBUZCAoU2FuZGJveCB0ZXN0IGRvY3VtZW50KSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCjUgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhID4+CmVuZG9iagp4cmVmCjAgNgowMDAwMDAwMDAwIDY1NTM1IGYgCjAwMDAwMDAwMDkgMDAwMDAgbiAKMDAwMDAwMDA1OCAwMDAwMCBuIAowMDAwMDAwMTE1IDAwMDAwIG4gCjAwMDAwMDAyNDEgMDAwMDAgbiAKMDAwMDAwMDM0MyAwMDAwMCBuIAp0cmFpbGVyCjw8IC9TaXplIDYgL1Jvb3QgMSAwIFIgPj4Kc3RhcnR4cmVmCjQxMwolJUVPRgo=';

const ADDRESS = { line1: '410 Terry Avenue', city: 'Seattle', region: 'WA', postalCode: '98109', country: 'US' };

function document(fileName: string) {
  return { fileName, contentType: 'application/pdf', contentBase64: DOCUMENT_PDF };
}

/** The entries of POST /v1/information-requests/{id}/entries for a user of this type and name. */
export function onboardingEntries(type: 'BUSINESS' | 'PERSON', name: string): Array<{ key: string; value: unknown }> {
  if (type === 'BUSINESS') {
    return [
      { key: 'businessName', value: name },
      { key: 'registrationNumber', value: 'C-7310482' },
      { key: 'incorporationCountry', value: 'US' },
      { key: 'address', value: ADDRESS },
      {
        key: 'beneficialOwners',
        value: [
          { name: 'Nancy Davolio', dateOfBirth: '1978-12-08', ownershipPercent: 55 },
          { name: 'Andrew Fuller', dateOfBirth: '1972-02-19', ownershipPercent: 45 },
        ],
      },
      { key: 'formationDocument', value: document('certificate-of-incorporation.pdf') },
    ];
  }
  return [
    { key: 'legalName', value: name },
    { key: 'dateOfBirth', value: '1990-05-17' },
    { key: 'address', value: ADDRESS },
    { key: 'taxId', value: { country: 'US', number: '123-45-6789' } },
    { key: 'identityDocument', value: document('passport.pdf') },
  ];
}
