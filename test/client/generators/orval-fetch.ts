// orval's mutator (docs/openapi.md#orval): every generated call goes through this function, which signs the
// request and reads the answer by its Content-Type (JSON, or the bytes of a file as a Blob), returning the
// { data, status, headers } orval's fetch client expects.
import { baseUrl, signedFetch } from './common.js';

// orval's mutator contract: the caller names the answer type it generated; the body is unknown until read.
export function signedOrvalFetch<T>(url: string, options: RequestInit): Promise<T>;
export async function signedOrvalFetch(url: string, options: RequestInit): Promise<unknown> {
  const response = await signedFetch(`${baseUrl}${url}`, options);
  const type = response.headers.get('content-type') ?? '';
  const data = [204, 205, 304].includes(response.status) ? undefined : type.includes('json') ? await response.json() : await response.blob();
  return { data, status: response.status, headers: response.headers };
}
