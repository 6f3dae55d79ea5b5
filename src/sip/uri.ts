// SIP and tel URIs, name-addr header values and Via (RFC 3261 §19.1, §20.10, §20.42).
// These values come from peers, so parsing is strict and fails only with SipParseError.
import { isIP } from 'node:net';
import { SipParseError, headerParams } from './message.ts';

export interface SipUri {
  scheme: 'sip' | 'sips' | 'tel';
  /** Still %-escaped, as on the wire; null when the URI has no user part. */
  user: string | null;
  /** Host name or IP; IPv6 without brackets. Empty for tel: URIs. */
  host: string;
  port: number | null;
  /** URI parameters (transport, lr, user, ...), names lower-cased. */
  params: Map<string, string | null>;
  /** The raw `?headers` part without its `?`, or ''. */
  headers: string;
}

export interface NameAddr {
  display: string | null;
  uri: SipUri;
  /** Header parameters after the address (tag, expires, q, ...), names lower-cased. */
  params: Map<string, string | null>;
}

const HOST_RE = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/;
const USER_RE = /^[A-Za-z0-9\-_.!~*'()&=+$,;?/%:]+$/;
const PARAM_RE = /^[A-Za-z0-9\-_.!~*'()[\]/:&+$%]+$/;

function parseHostPort(text: string): { host: string; port: number | null } {
  let host = text;
  let portText: string | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1) throw new SipParseError('unterminated IPv6 reference');
    host = text.slice(1, close);
    if (isIP(host) !== 6) throw new SipParseError('invalid IPv6 reference');
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) throw new SipParseError('junk after IPv6 reference');
      portText = rest.slice(1);
    }
  } else {
    const colon = text.lastIndexOf(':');
    if (colon !== -1) {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
    }
    if (!HOST_RE.test(host)) throw new SipParseError(`invalid host ${JSON.stringify(host.slice(0, 60))}`);
  }
  if (portText === null) return { host, port: null };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw new SipParseError('invalid port');
  return { host, port: Number(portText) };
}

function parseParams(text: string): Map<string, string | null> {
  const params = new Map<string, string | null>();
  for (const part of text.split(';')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).toLowerCase();
    const value = eq === -1 ? null : part.slice(eq + 1);
    if (!PARAM_RE.test(name) || (value !== null && value !== '' && !PARAM_RE.test(value))) throw new SipParseError('invalid URI parameter');
    params.set(name, value);
  }
  return params;
}

/** Parses `sip:`, `sips:` or `tel:` URIs. */
export function parseUri(text: string): SipUri {
  if (text.length > 1024) throw new SipParseError('URI too long');
  const m = /^(sips?|tel):(.*)$/i.exec(text.trim());
  if (!m) throw new SipParseError(`unsupported URI ${JSON.stringify(text.slice(0, 60))}`);
  const scheme = (m[1] ?? '').toLowerCase() as SipUri['scheme'];
  let rest = m[2] ?? '';
  let headers = '';
  // `?` starts the headers, unless it is in the user part (RFC 4475's intmeth URI): then an `@`
  // follows it, and no `@` precedes it.
  const lastAt = rest.lastIndexOf('@');
  const q = rest.indexOf('?');
  const userHasQuestionMark = q !== -1 && lastAt > q && !rest.slice(0, q).includes('@');
  const headersAt = userHasQuestionMark ? rest.indexOf('?', lastAt) : q;
  if (headersAt !== -1) {
    headers = rest.slice(headersAt + 1);
    rest = rest.slice(0, headersAt);
  }
  if (scheme === 'tel') {
    const semi = rest.indexOf(';');
    const number = semi === -1 ? rest : rest.slice(0, semi);
    if (!/^\+?[0-9A-Fa-f*#.()-]{1,64}$/.test(number)) throw new SipParseError('invalid tel URI');
    return { scheme, user: number, host: '', port: null, params: parseParams(semi === -1 ? '' : rest.slice(semi + 1)), headers };
  }
  const at = rest.lastIndexOf('@');
  let user: string | null = null;
  if (at !== -1) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
    if (!USER_RE.test(user)) throw new SipParseError('invalid URI user part');
  }
  const semi = rest.indexOf(';');
  const { host, port } = parseHostPort(semi === -1 ? rest : rest.slice(0, semi));
  return { scheme, user, host, port, params: parseParams(semi === -1 ? '' : rest.slice(semi + 1)), headers };
}

export function formatHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

export function formatUri(uri: SipUri): string {
  const params = [...uri.params].map(([k, v]) => (v === null ? `;${k}` : `;${k}=${v}`)).join('');
  const headers = uri.headers ? `?${uri.headers}` : '';
  if (uri.scheme === 'tel') return `tel:${uri.user ?? ''}${params}${headers}`;
  const user = uri.user === null ? '' : `${uri.user}@`;
  const port = uri.port === null ? '' : `:${uri.port}`;
  return `${uri.scheme}:${user}${formatHost(uri.host)}${port}${params}${headers}`;
}

/** The user part with %-escapes decoded (bad escapes are kept as they are). */
export function decodeUser(user: string): string {
  try {
    return decodeURIComponent(user);
  } catch {
    return user;
  }
}

// RFC 3261 §25.1 "user": unreserved and user-unreserved characters stay, the rest is %-escaped.
export function escapeUser(user: string): string {
  return Array.from(new TextEncoder().encode(user), (b) => {
    const ch = String.fromCharCode(b);
    return /[A-Za-z0-9\-_.!~*'()&=+$,;?/]/.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

function unquote(display: string): string {
  const t = display.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return t.slice(1, -1).replace(/\\(.)/g, '$1');
  return t;
}

/** Parses a From, To, Contact, Route or Refer-To value: `"Name" <uri>;params` or `uri;params`. */
export function parseNameAddr(value: string): NameAddr {
  const text = value.trim();
  const lt = text.indexOf('<');
  if (lt !== -1) {
    const gt = text.indexOf('>', lt);
    if (gt === -1) throw new SipParseError('unterminated <uri>');
    const display = unquote(text.slice(0, lt));
    return { display: display === '' ? null : display, uri: parseUri(text.slice(lt + 1, gt)), params: headerParams(text.slice(gt)) };
  }
  // Without angle brackets every ";param" belongs to the header, not the URI (RFC 3261 §20.10).
  const semi = text.indexOf(';');
  const uri = parseUri(semi === -1 ? text : text.slice(0, semi));
  return { display: null, uri, params: headerParams(semi === -1 ? '' : `x${text.slice(semi)}`) };
}

export function formatNameAddr(addr: { display?: string | null; uri: SipUri | string; params?: Map<string, string | null> }): string {
  const uri = typeof addr.uri === 'string' ? addr.uri : formatUri(addr.uri);
  const display = addr.display ? `"${addr.display.replace(/[\\"]/g, '\\$&')}" ` : '';
  const params = [...(addr.params ?? new Map<string, string | null>())].map(([k, v]) => (v === null ? `;${k}` : `;${k}=${v}`)).join('');
  return `${display}<${uri}>${params}`;
}

export interface Via {
  transport: string;
  host: string;
  port: number | null;
  params: Map<string, string | null>;
}

export function parseVia(value: string): Via {
  // Any version, so that a request of another one can still be answered 505 (RFC 4475 §3.1.2.16).
  const m = /^SIP\s*\/\s*\d+\.\d+\s*\/\s*([A-Za-z]+)\s+([^;\s]+)\s*(;.*)?$/i.exec(value.trim());
  if (!m) throw new SipParseError(`invalid Via ${JSON.stringify(value.slice(0, 60))}`);
  const { host, port } = parseHostPort(m[2] ?? '');
  return { transport: (m[1] ?? '').toUpperCase(), host, port, params: headerParams(`x${m[3] ?? ''}`) };
}
