// What the endpoint checks of a request before it acts on it (RFC 3261 §8.2.1-8.2.2): the fields
// every request needs, its method, its Request-URI, and the syntax of the address headers that
// dialogs are built from. RFC 4475 §3.1.2's invalid messages are refused here with the status
// the RFC asks for; its valid ones (§3.1.1) pass.
import { parseCSeq, splitHeaderList } from './message.ts';
import type { SipRequest } from './message.ts';
import { ALLOW } from './requests.ts';
import { parseUri, parseVia } from './uri.ts';

export interface Refusal {
  status: number;
  reason?: string;
  headers?: Array<[string, string]>;
}

/** Methods of RFC 3261 and its extensions that we know; others are answered 501, these (when not taken) 405. */
const KNOWN_METHODS = new Set(['INVITE', 'ACK', 'CANCEL', 'BYE', 'OPTIONS', 'INFO', 'REFER', 'NOTIFY', 'UPDATE', 'PRACK', 'REGISTER', 'SUBSCRIBE', 'MESSAGE', 'PUBLISH']);

export const isKnownMethod = (method: string): boolean => KNOWN_METHODS.has(method);

// Tokens and LWS, as RFC 3261 has it, and (liberal) UTF-8 that some phones send unquoted; never an
// ASCII separator such as the comma of RFC 4475 §3.1.2.15.
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const UNQUOTED_DISPLAY = /^[^\x00-\x08\x0a-\x1f\x7f()<>@,;:\\"/[\]?={}]+$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const bad = (reason: string): Refusal => ({ status: 400, reason });

/** Why `req` must be refused before any other processing, or null when it may proceed. */
export function inspectRequest(req: SipRequest): Refusal | null {
  for (const name of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) if (!req.headers.get(name)) return bad(`Missing ${name}`);
  let cseqMethod: string;
  try {
    cseqMethod = parseCSeq(req.headers.get('CSeq') ?? '').method;
  } catch {
    return bad('Invalid CSeq');
  }
  // Before the CSeq comparison: an unknown method is a 501 whatever its CSeq says (RFC 4475 §3.1.2.18).
  if (!isKnownMethod(req.method)) return { status: 501, headers: [['Allow', ALLOW]] };
  if (cseqMethod !== req.method) return bad('CSeq method does not match');
  const uri = requestUriProblem(req.uri);
  if (uri) return uri;
  for (const via of req.headers.getAll('Via')) if (!validVia(via)) return bad('Invalid Via');
  for (const name of ['From', 'To']) if (!validAddress(req.headers.get(name) ?? '', false)) return bad(`Invalid ${name}`);
  for (const contact of req.headers.getAll('Contact')) if (contact !== '' && !validAddress(contact, true)) return bad('Invalid Contact');
  if (req.method === 'INVITE' && !req.headers.get('Contact')) return bad('Missing Contact');
  return null;
}

function requestUriProblem(text: string): Refusal | null {
  if (text.startsWith('<')) return bad('Request-URI in angle brackets');
  if (!SCHEME.test(text)) return bad('Invalid Request-URI');
  if (!/^(sips?|tel):/i.test(text)) return { status: 416, reason: 'Unsupported URI Scheme' };
  let headers = '';
  try {
    headers = parseUri(text).headers;
  } catch {
    // Liberal: a host or user our reader does not take (an underscore in a PBX's name) is routed by what can be read.
  }
  return headers === '' ? null : bad('Request-URI with headers');
}

/** Quoted strings and <...> blanked out (same length), so separators inside them are not seen; null when a quote is left open. */
function mask(value: string): string | null {
  let out = '';
  let quoted = false;
  let angle = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] ?? '';
    if (quoted) {
      if (ch === '\\') {
        out += '  ';
        i++;
        continue;
      }
      if (ch === '"') quoted = false;
      out += ch === '"' ? '"' : ' ';
    } else if (angle) {
      if (ch === '>') angle = false;
      out += ch === '>' ? '>' : 'u';
    } else {
      if (ch === '"') quoted = true;
      if (ch === '<') angle = true;
      out += ch;
    }
  }
  return quoted || angle ? null : out;
}

/** Each list element and each `;param` non-empty (RFC 4475 §3.1.2.1's `;;,;,,`). */
function emptyParts(masked: string): boolean {
  return masked.split(',').some((element) => element.trim() === '' || element.split(';').some((p, i) => i > 0 && p.trim() === ''));
}

function validVia(value: string): boolean {
  const masked = mask(value);
  if (masked === null || emptyParts(masked)) return false;
  try {
    for (const element of splitHeaderList(value)) parseVia(element);
  } catch {
    return false;
  }
  return true;
}

/**
 * From, To and Contact: `display <uri>;params` or `uri;params`. The display name is a quoted
 * string or tokens (RFC 4475 §3.1.2.15's unquoted comma is not), the URI inside <> carries no LWS
 * (§3.1.2.14), and a URI outside <> has no `?` or `,` (§3.1.2.13).
 */
function validAddress(value: string, list: boolean): boolean {
  const masked = mask(value);
  if (masked === null) return false; // an unterminated quote (§3.1.2.6) or <
  if (list && masked.trim() === '*') return true;
  const elements: Array<[string, string]> = [];
  if (list) {
    let from = 0;
    for (const element of masked.split(',')) {
      elements.push([element, value.slice(from, from + element.length)]);
      from += element.length + 1;
    }
  } else {
    elements.push([masked, value]);
  }
  return elements.every(([m, raw]) => validElement(m, raw));
}

function validElement(masked: string, raw: string): boolean {
  if (masked.trim() === '') return false;
  const lt = masked.indexOf('<');
  let params: string;
  if (lt !== -1) {
    const gt = masked.indexOf('>', lt);
    const display = raw.slice(0, lt).trim();
    if (display !== '' && !/^"(?:[^"\\]|\\.)*"$/s.test(display) && !UNQUOTED_DISPLAY.test(display)) return false;
    const uri = raw.slice(lt + 1, gt);
    if (uri !== uri.trim() || !uriParses(uri)) return false;
    params = masked.slice(gt + 1);
  } else {
    const semi = masked.indexOf(';');
    const uri = raw.slice(0, semi === -1 ? raw.length : semi).trim();
    if (/[?,\s]/.test(uri) || !uriParses(uri)) return false;
    params = semi === -1 ? '' : masked.slice(semi);
  }
  if (params.trim() === '') return true;
  if (!params.trimStart().startsWith(';')) return false;
  return params.trimStart().slice(1).split(';').every((p) => p.trim() !== '');
}

/** Liberal on purpose: peers write hosts and users our strict reader refuses; only the framing of the header is judged here. */
const uriParses = (uri: string): boolean => SCHEME.test(uri) && !/\s/.test(uri);
