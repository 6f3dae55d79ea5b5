import type { Ajv } from 'ajv';
import { parseHostLiteral } from '../../egress/address.ts';
import { checkAddress, type AllowList } from '../../egress/policy.ts';
import type { ErrorDetail } from '../../http/errors.ts';
import { toolSchemaProblems } from './tool-schema.ts';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
// Headers the service itself sets on every tool request; a configured one would fight them.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'x-request-id', 'traceparent']);

/** Problems with a URL the service will call: http(s), no credentials, and not a refused literal address. */
export function urlProblems(value: unknown, path: string, allow: AllowList): ErrorDetail[] {
  if (typeof value !== 'string' || value.length > 2048) return [{ path, message: 'must be an http(s) URL of at most 2048 characters' }];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [{ path, message: 'is not a valid URL' }];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [{ path, message: 'must use http or https' }];
  if (url.username || url.password) return [{ path, message: 'must not carry credentials; use headers instead' }];
  // A literal address can be judged now; names are judged on every request, on the resolved address.
  const literal = parseHostLiteral(url.hostname);
  if (literal && !checkAddress(literal.address, allow).allowed) return [{ path, message: 'is refused by the egress policy (a private, loopback or reserved address)' }];
  return [];
}

/**
 * The checks of tool_webhook parameters that a JSON schema cannot make (the shape is checked by
 * the body schema): the URL and the egress policy, the tool specification, header names.
 */
export function toolWebhookProblems(parameters: { name: string; serverUrl: string; schema: string; headers?: Record<string, string> | undefined }, path: string, allow: AllowList, ajv: Ajv): ErrorDetail[] {
  const problems: ErrorDetail[] = [...urlProblems(parameters.serverUrl, `${path}.serverUrl`, allow)];
  problems.push(...toolSchemaProblems(parameters.schema, parameters.name, `${path}.schema`, ajv));
  for (const [header, value] of Object.entries(parameters.headers ?? {})) {
    const at = `${path}.headers.${header}`;
    if (!HEADER_NAME.test(header)) problems.push({ path: at, message: 'is not a valid header name' });
    else if (RESERVED_HEADERS.has(header.toLowerCase())) problems.push({ path: at, message: 'is set by Parley itself and cannot be configured' });
    if (/[\r\n\0]/.test(value)) problems.push({ path: at, message: 'must be a string without line breaks, at most 8192 characters' });
  }
  return problems;
}
