// SIP message parsing, serialisation and stream framing (RFC 3261 §7, §18.3).
// Input comes straight off the network, so every path ends either in a message
// or in a SipParseError; nothing here may throw anything else on hostile bytes.
import { MAX_HEADER_LINES, hasBareControl } from './header-text.ts';

/**
 * A request whose head could be read although the message is invalid (a malformed Request-Line,
 * another SIP version, a Content-Length that does not frame it): what to answer it with.
 */
export interface ParseAnswer {
  request: SipRequest;
  status: number;
}

export class SipParseError extends Error {
  override name = 'SipParseError';
  constructor(message: string, readonly answer?: ParseAnswer) {
    super(message);
  }
}

/** Hard cap for one message, head plus body, in either direction. */
export const MAX_MESSAGE_BYTES = 64 * 1024;

const COMPACT_NAMES: Record<string, string> = {
  i: 'Call-ID', m: 'Contact', v: 'Via', f: 'From', t: 'To', l: 'Content-Length',
  c: 'Content-Type', k: 'Supported', e: 'Content-Encoding', s: 'Subject',
  o: 'Event', r: 'Refer-To', u: 'Allow-Events', x: 'Session-Expires',
};

// Spellings that naive title-casing gets wrong, or that we emit ourselves.
const CANONICAL_NAMES = new Map(
  [
    'Call-ID', 'CSeq', 'WWW-Authenticate', 'Proxy-Authenticate', 'Authorization',
    'Proxy-Authorization', 'Authentication-Info', 'Max-Forwards', 'Min-Expires',
    'Content-Length', 'Content-Type', 'Content-Encoding', 'User-Agent', 'Record-Route',
    'Allow-Events', 'Session-Expires', 'Refer-To', 'Via', 'From', 'To', 'Contact',
    'Expires', 'Supported', 'Subject', 'Event', 'Server', 'Allow', 'Require', 'Route',
  ].map((n) => [n.toLowerCase(), n]),
);

const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
// Control characters other than HT are never legal in a start line; rejecting them
// also rules out smuggling a bare CR past our line splitting.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_RE = /[\x00-\x08\x0a-\x1f\x7f]/;

export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  const full = COMPACT_NAMES[lower] ?? name;
  return CANONICAL_NAMES.get(full.toLowerCase()) ?? full;
}

export interface SipHeader {
  name: string;
  value: string;
}

/** Ordered, repeatable header list; lookups ignore case and compact forms. */
export class SipHeaders {
  readonly #entries: SipHeader[] = [];

  get(name: string): string | undefined {
    const key = canonicalHeaderName(name).toLowerCase();
    return this.#entries.find((h) => h.name.toLowerCase() === key)?.value;
  }

  getAll(name: string): string[] {
    const key = canonicalHeaderName(name).toLowerCase();
    return this.#entries.filter((h) => h.name.toLowerCase() === key).map((h) => h.value);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  append(name: string, value: string): this {
    if (!TOKEN_RE.test(name)) throw new TypeError(`invalid SIP header name ${JSON.stringify(name)}`);
    if (hasBareControl(value)) throw new TypeError(`header ${name} contains CR, LF or a control character outside a quoted-pair`);
    this.#entries.push({ name: canonicalHeaderName(name), value });
    return this;
  }

  set(name: string, value: string): this {
    this.delete(name);
    return this.append(name, value);
  }

  delete(name: string): void {
    const key = canonicalHeaderName(name).toLowerCase();
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      if (this.#entries[i]?.name.toLowerCase() === key) this.#entries.splice(i, 1);
    }
  }

  entries(): readonly SipHeader[] {
    return this.#entries;
  }
}

export interface SipRequest {
  kind: 'request';
  method: string;
  uri: string;
  headers: SipHeaders;
  body: Buffer;
}

export interface SipResponse {
  kind: 'response';
  status: number;
  reason: string;
  headers: SipHeaders;
  body: Buffer;
}

export type SipMessage = SipRequest | SipResponse;

const LF = 0x0a;
const CR = 0x0d;

interface Head {
  start: Omit<SipRequest, 'headers' | 'body'> | Omit<SipResponse, 'headers' | 'body'>;
  headers: SipHeaders;
  contentLength: number | null;
}

interface StartLine {
  start: Head['start'];
  /** A request line we can answer although it is invalid: the status and why. */
  defect: { status: number; reason: string } | null;
}

// Liberal enough to answer: method, Request-URI (with LWS in it), SIP version, trailing LWS.
const LENIENT_REQUEST_LINE = /^(\S+)[ \t]+(\S.*?)[ \t]+(SIP\/\d+\.\d+)[ \t]*$/i;

function parseStartLine(line: string): StartLine {
  if (CONTROL_RE.test(line)) throw new SipParseError('start line contains control characters');
  if (/^SIP\//i.test(line)) {
    const m = /^(\S+) (\S*)(?: (.*))?$/.exec(line);
    if (!m || !/^SIP\/2\.0$/i.test(m[1] ?? '')) throw new SipParseError(`malformed status line ${JSON.stringify(line.slice(0, 80))}`);
    const code = m[2] ?? '';
    if (!/^\d{3}$/.test(code)) throw new SipParseError(`non-numeric status code ${JSON.stringify(code.slice(0, 20))}`);
    const status = Number(code);
    if (status < 100 || status > 699) throw new SipParseError(`status code ${status} out of range`);
    return { start: { kind: 'response', status, reason: (m[3] ?? '').trim() }, defect: null };
  }
  const strict = /^(\S+) (\S+) (SIP\/2\.0)$/i.exec(line);
  const m = strict ?? LENIENT_REQUEST_LINE.exec(line);
  if (!m) throw new SipParseError(`malformed request line ${JSON.stringify(line.slice(0, 80))}`);
  const [, method = '', uri = '', version = ''] = m;
  if (!TOKEN_RE.test(method)) throw new SipParseError(`invalid method ${JSON.stringify(method.slice(0, 20))}`);
  const start = { kind: 'request' as const, method, uri };
  // RFC 4475 §3.1.2.8-10 and 16: answered 400 (LWS in or around the Request-URI) or 505.
  if (!/^SIP\/2\.0$/i.test(version)) return { start, defect: { status: 505, reason: `unsupported SIP version ${version.slice(0, 20)}` } };
  if (!strict) return { start, defect: { status: 400, reason: 'malformed request line' } };
  return { start, defect: null };
}

function parseContentLength(values: string[]): number | null {
  let result: number | null = null;
  for (const raw of values) {
    const v = raw.trim();
    if (!/^\d+$/.test(v)) throw new SipParseError(`invalid Content-Length ${JSON.stringify(v.slice(0, 20))}`);
    // Compare digit strings before Number() so huge values cannot round.
    const n = v.length > 7 ? Infinity : Number(v);
    if (n > MAX_MESSAGE_BYTES) throw new SipParseError(`Content-Length ${v.slice(0, 20)} exceeds the ${MAX_MESSAGE_BYTES} byte limit`);
    // Disagreeing duplicates are the classic request-smuggling trick.
    if (result !== null && result !== n) throw new SipParseError('conflicting Content-Length headers');
    result = n;
  }
  return result;
}

/** Parses the head occupying buf[start, end): start line and header lines, no blank line. */
function parseHead(buf: Buffer, start: number, end: number, sawBlankLine = true): Head {
  const lines: string[] = [];
  let pos = start;
  while (pos < end) {
    // Refused before any header is read: a head of thousands of tiny lines costs only this scan.
    if (lines.length > MAX_HEADER_LINES) throw new SipParseError(`more than ${MAX_HEADER_LINES} header lines`);
    let nl = buf.indexOf(LF, pos);
    if (nl === -1 || nl > end) nl = end;
    const stop = nl > pos && buf[nl - 1] === CR ? nl - 1 : nl;
    lines.push(buf.toString('utf8', pos, stop));
    pos = nl + 1;
  }
  // A datagram may end in a stray CR after its last header line.
  while (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const [first, ...rest] = lines;
  if (first === undefined || first === '') throw new SipParseError('empty message');
  const { start: startLine, defect } = parseStartLine(first);

  const unfolded: string[] = [];
  for (const line of rest) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      // RFC 3261 §7.3.1 folding: the line break plus leading whitespace is one SP.
      if (unfolded.length === 0) throw new SipParseError('continuation line before any header');
      unfolded[unfolded.length - 1] += ' ' + line.trim();
    } else {
      unfolded.push(line);
    }
  }

  const headers = new SipHeaders();
  for (const [i, line] of unfolded.entries()) {
    if (hasBareControl(line)) throw new SipParseError(`header line ${i + 1} contains control characters`);
    const colon = line.indexOf(':');
    if (colon === -1) {
      const hint = sawBlankLine ? '' : ' (missing blank line between headers and body?)';
      throw new SipParseError(`header line ${i + 1} has no ":"${hint}`);
    }
    const name = line.slice(0, colon).trimEnd();
    if (!TOKEN_RE.test(name)) throw new SipParseError(`invalid header name ${JSON.stringify(name.slice(0, 40))}`);
    headers.append(name, line.slice(colon + 1).trim());
  }
  const head: Head = { start: startLine, headers, contentLength: null };
  if (defect) throw invalid(head, defect.reason, defect.status);
  try {
    head.contentLength = parseContentLength(headers.getAll('Content-Length'));
  } catch (err) {
    throw invalid(head, (err as Error).message);
  }
  return head;
}

/** The parse error of a message whose head was read: a request carries what to answer it with. */
function invalid(head: Head, reason: string, status = 400): SipParseError {
  if (head.start.kind !== 'request') return new SipParseError(reason);
  return new SipParseError(reason, { request: { ...head.start, headers: head.headers, body: Buffer.alloc(0) }, status });
}

function skipKeepalives(buf: Buffer, pos: number, end: number): number {
  while (pos < end && (buf[pos] === CR || buf[pos] === LF)) pos++;
  return pos;
}

/**
 * Finds the blank line ending the head (CRLF or bare LF line ends, mixed freely).
 * Returns the index of the head's last byte + 1 and where the body starts.
 */
function findHeadEnd(buf: Buffer, from: number, end: number, headStart: number): { headEnd: number; bodyStart: number } | null {
  for (let i = buf.indexOf(LF, from); i !== -1 && i < end; i = buf.indexOf(LF, i + 1)) {
    if (i - 1 >= headStart && buf[i - 1] === LF) return { headEnd: i - 1, bodyStart: i + 1 };
    if (i - 2 >= headStart && buf[i - 1] === CR && buf[i - 2] === LF) return { headEnd: i - 2, bodyStart: i + 1 };
  }
  return null;
}

function build(head: Head, body: Buffer): SipMessage {
  return { ...head.start, headers: head.headers, body };
}

/**
 * Parses one complete message, e.g. a UDP datagram.
 * Framing rules: leading CR/LF (keepalives) are skipped; lines may end in CRLF or
 * bare LF. A datagram that ends without the blank line is accepted only when it
 * declares no body (Content-Length absent or 0); otherwise it cannot be framed.
 * Without Content-Length the body is the rest of the datagram; with it, extra
 * trailing bytes are ignored (RFC 3261 §18.3) and missing ones are an error.
 */
export function parseMessage(input: Buffer | string): SipMessage {
  const buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  if (buf.length > MAX_MESSAGE_BYTES) throw new SipParseError(`message of ${buf.length} bytes exceeds the ${MAX_MESSAGE_BYTES} byte limit`);
  const headStart = skipKeepalives(buf, 0, buf.length);
  if (headStart === buf.length) throw new SipParseError('empty message');
  const found = findHeadEnd(buf, headStart, buf.length, headStart);
  const head = parseHead(buf, headStart, found?.headEnd ?? buf.length, found !== null);
  if (!found) {
    if ((head.contentLength ?? 0) > 0) throw invalid(head, 'missing blank line between headers and body');
    return build(head, Buffer.alloc(0));
  }
  const available = buf.length - found.bodyStart;
  const length = head.contentLength ?? available;
  // RFC 4475 §3.1.2.2: over UDP this is answered 400.
  if (length > available) throw invalid(head, `Content-Length ${length} exceeds the ${available} body bytes received`);
  return build(head, Buffer.from(buf.subarray(found.bodyStart, found.bodyStart + length)));
}

/** Serialises with CRLF line ends; Content-Length always reflects the body. */
export function serializeMessage(msg: SipMessage): Buffer {
  let startLine: string;
  if (msg.kind === 'request') {
    if (!TOKEN_RE.test(msg.method)) throw new TypeError(`invalid method ${JSON.stringify(msg.method)}`);
    if (!/^[^\s\0]+$/.test(msg.uri)) throw new TypeError(`invalid request URI ${JSON.stringify(msg.uri)}`);
    startLine = `${msg.method} ${msg.uri} SIP/2.0`;
  } else {
    if (!Number.isInteger(msg.status) || msg.status < 100 || msg.status > 699) throw new TypeError(`invalid status ${msg.status}`);
    if (/[\r\n\0]/.test(msg.reason)) throw new TypeError('reason phrase contains CR, LF or NUL');
    startLine = `SIP/2.0 ${msg.status} ${msg.reason}`;
  }
  const lines = [startLine];
  for (const h of msg.headers.entries()) {
    if (h.name !== 'Content-Length') lines.push(`${h.name}: ${h.value}`);
  }
  lines.push(`Content-Length: ${msg.body.length}`, '', '');
  const out = Buffer.concat([Buffer.from(lines.join('\r\n'), 'utf8'), msg.body]);
  if (out.length > MAX_MESSAGE_BYTES) throw new TypeError(`message exceeds the ${MAX_MESSAGE_BYTES} byte limit`);
  return out;
}

/**
 * Splits a TCP/TLS byte stream into messages. Content-Length frames the body;
 * RFC 3261 §18.3 makes it mandatory on streams, and a missing one is read as 0.
 * After the first SipParseError the stream cannot be resynchronised, so the
 * framer stays failed and the caller should close the connection.
 */
export class SipStreamFramer {
  #buf = Buffer.alloc(0);
  #len = 0;
  #scanFrom = 0;
  #pending: { head: Head; bodyStart: number; total: number } | null = null;
  #failure: SipParseError | null = null;
  #startLineChecked = 0;
  #startLineOk = false;

  get bufferedBytes(): number {
    return this.#len;
  }

  /** What part of a message has begun to arrive and is still incomplete (keepalive CRLFs are nothing). */
  get receiving(): 'nothing' | 'head' | 'body' {
    if (this.#pending) return 'body';
    return this.#len > 0 ? 'head' : 'nothing';
  }

  push(chunk: Buffer): SipMessage[] {
    if (this.#failure) throw this.#failure;
    try {
      this.#append(chunk);
      const out: SipMessage[] = [];
      for (let msg = this.#next(); msg; msg = this.#next()) out.push(msg);
      return out;
    } catch (err) {
      this.#failure = err instanceof SipParseError ? err : new SipParseError(`unframeable stream: ${String(err)}`);
      this.#len = 0;
      throw this.#failure;
    }
  }

  #append(chunk: Buffer): void {
    const need = this.#len + chunk.length;
    if (need > this.#buf.length) {
      // Grow geometrically so one-byte writes stay linear overall.
      const bigger = Buffer.alloc(Math.max(need, this.#buf.length * 2, 4096));
      this.#buf.copy(bigger, 0, 0, this.#len);
      this.#buf = bigger;
    }
    chunk.copy(this.#buf, this.#len);
    this.#len = need;
  }

  #next(): SipMessage | null {
    if (!this.#pending) {
      const headStart = skipKeepalives(this.#buf, 0, this.#len);
      if (headStart > 0) this.#consume(headStart);
      if (this.#len === 0) return null;
      this.#checkFirstLine();
      const found = findHeadEnd(this.#buf, Math.max(this.#scanFrom - 2, 0), this.#len, 0);
      if (!found) {
        if (this.#len > MAX_MESSAGE_BYTES) throw new SipParseError(`no end of headers within ${MAX_MESSAGE_BYTES} bytes`);
        this.#scanFrom = this.#len;
        return null;
      }
      const head = parseHead(this.#buf, 0, found.headEnd);
      const total = found.bodyStart + (head.contentLength ?? 0);
      if (total > MAX_MESSAGE_BYTES) throw new SipParseError(`message of ${total} bytes exceeds the ${MAX_MESSAGE_BYTES} byte limit`);
      this.#pending = { head, bodyStart: found.bodyStart, total };
    }
    const { head, bodyStart, total } = this.#pending;
    if (this.#len < total) return null;
    const body = Buffer.from(this.#buf.subarray(bodyStart, total));
    this.#pending = null;
    this.#consume(total);
    return build(head, body);
  }

  // Fails fast on a stream that is clearly not SIP (binary, a TLS record on a
  // plain socket, ...) instead of buffering 64 KiB of it first. Only bytes not
  // yet checked are looked at, so tiny chunks cannot make this quadratic.
  #checkFirstLine(): void {
    if (this.#startLineOk) return;
    const from = this.#startLineChecked;
    const nl = this.#buf.indexOf(LF, from);
    const end = nl === -1 || nl >= this.#len ? this.#len : nl;
    if (CONTROL_RE.test(this.#buf.toString('latin1', from, end).replace(/\r$/, ''))) {
      throw new SipParseError('garbage on stream: control characters in start line');
    }
    this.#startLineChecked = end;
    if (end < this.#len) {
      parseStartLine(this.#buf.toString('utf8', 0, end).replace(/\r$/, ''));
      this.#startLineOk = true;
    }
  }

  #consume(n: number): void {
    this.#buf.copy(this.#buf, 0, n, this.#len);
    this.#len -= n;
    this.#scanFrom = 0;
    this.#startLineChecked = 0;
    this.#startLineOk = false;
  }
}

/** Splits a comma-separated header value, ignoring commas in quotes or <...>. */
export function splitHeaderList(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let cur = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] ?? '';
    if (quoted && ch === '\\') {
      cur += ch + (value[i + 1] ?? '');
      i++;
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '<') depth++;
    else if (!quoted && ch === '>') depth = Math.max(0, depth - 1);
    else if (!quoted && depth === 0 && ch === ',') {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** `;name=value` parameters of one header element (outside <...>), names lower-cased. */
export function headerParams(element: string): Map<string, string | null> {
  const params = new Map<string, string | null>();
  const gt = element.lastIndexOf('>');
  const tail = gt === -1 ? element : element.slice(gt + 1);
  const semi = tail.indexOf(';');
  if (semi === -1) return params;
  for (const part of tail.slice(semi + 1).split(';')) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (!name) continue;
    const raw = eq === -1 ? null : part.slice(eq + 1).trim();
    params.set(name, raw !== null && raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw);
  }
  return params;
}

export function parseCSeq(value: string): { seq: number; method: string } {
  const m = /^(\d{1,10})\s+([A-Za-z0-9\-.!%*_+`'~]+)$/.exec(value.trim());
  const seq = Number(m?.[1]);
  if (!m || seq > 2 ** 31 - 1) throw new SipParseError(`invalid CSeq ${JSON.stringify(value.slice(0, 40))}`);
  return { seq, method: m[2] ?? '' };
}
