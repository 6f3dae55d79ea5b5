import { parseHostLiteral } from '../../egress/address.ts';
import { checkAddress, type AllowList } from '../../egress/policy.ts';
import type { ErrorDetail } from '../../http/errors.ts';
import { toolSchemaProblems } from './tool-schema.ts';

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
// Headers the service itself sets on every tool request; a configured one would fight them.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'x-request-id', 'traceparent']);
const KEYS = new Set(['name', 'serverUrl', 'schema', 'headers', 'timeoutSeconds', 'signingSecret']);
const MAX_HEADERS = 32;

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
  if (literal) {
    const verdict = checkAddress(literal.address, allow);
    if (!verdict.allowed) return [{ path, message: `is refused by the egress policy (${verdict.reason})` }];
  }
  return [];
}

/** Validates tool_webhook parameters as the contract says; header and secret values are checked by the caller. */
export function toolWebhookProblems(parameters: Record<string, unknown>, path: string, allow: AllowList): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const key of Object.keys(parameters)) {
    if (!KEYS.has(key)) problems.push({ path: `${path}.${key}`, message: 'is not an allowed field for tool_webhook' });
  }
  const { name, serverUrl, schema, headers, timeoutSeconds, signingSecret } = parameters;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    problems.push({ path: `${path}.name`, message: 'is required: 1-64 letters, digits, _ or -' });
  }
  problems.push(...(serverUrl === undefined ? [{ path: `${path}.serverUrl`, message: 'is required' }] : urlProblems(serverUrl, `${path}.serverUrl`, allow)));
  problems.push(...(schema === undefined ? [{ path: `${path}.schema`, message: 'is required' }] : toolSchemaProblems(schema, name, `${path}.schema`)));
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      problems.push({ path: `${path}.headers`, message: 'must be an object of header name to string value' });
    } else {
      const entries = Object.entries(headers);
      if (entries.length > MAX_HEADERS) problems.push({ path: `${path}.headers`, message: `must have at most ${MAX_HEADERS} headers` });
      for (const [header, value] of entries) {
        const at = `${path}.headers.${header}`;
        if (!HEADER_NAME.test(header)) problems.push({ path: at, message: 'is not a valid header name' });
        else if (RESERVED_HEADERS.has(header.toLowerCase())) problems.push({ path: at, message: 'is set by Parley itself and cannot be configured' });
        if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > 8192) {
          problems.push({ path: at, message: 'must be a string without line breaks, at most 8192 characters' });
        }
      }
    }
  }
  if (timeoutSeconds !== undefined && (!Number.isInteger(timeoutSeconds) || (timeoutSeconds as number) < 1 || (timeoutSeconds as number) > 60)) {
    problems.push({ path: `${path}.timeoutSeconds`, message: 'must be an integer from 1 to 60 (default 10)' });
  }
  if (signingSecret !== undefined && (typeof signingSecret !== 'string' || signingSecret.length < 1 || signingSecret.length > 512)) {
    problems.push({ path: `${path}.signingSecret`, message: 'must be a string of 1 to 512 characters' });
  }
  return problems;
}
