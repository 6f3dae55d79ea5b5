// HTTP Digest for SIP (RFC 2617, RFC 7616, RFC 8760): challenge parsing and
// Authorization / Proxy-Authorization values. Challenges come from whatever
// server the user pointed us at, so parsing is strict and never trusts lengths.
import { createHash, randomBytes } from 'node:crypto';
import { SipParseError } from './message.ts';

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

// Strongest first; a -sess variant is no stronger, plain is simpler for servers.
const ALGORITHM_RANK: Record<DigestAlgorithm, number> = { 'SHA-256': 4, 'SHA-256-sess': 3, MD5: 2, 'MD5-sess': 1 };
const HASH_OF: Record<DigestAlgorithm, string> = { MD5: 'md5', 'MD5-sess': 'md5', 'SHA-256': 'sha256', 'SHA-256-sess': 'sha256' };

export interface AuthChallenge {
  scheme: string;
  /** Parameter names lower-cased, values unquoted. */
  params: Map<string, string>;
  token68?: string;
}

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  /** Normalised when known; the raw value otherwise (then unsupported). */
  algorithm: string;
  /** Whether the server named an algorithm; if not we do not name one either. */
  algorithmGiven: boolean;
  qop: string[];
  stale: boolean;
  userhash: boolean;
}

const TOKEN_CHAR = /[A-Za-z0-9\-.!%*_+`'~]/;
// Sticky so matching starts exactly at lastIndex without copying the rest.
const TOKEN68_AT = /([A-Za-z0-9\-._~+/]+=*)[ \t]*(?=,|$)/y;

/** Parses one WWW-Authenticate / Proxy-Authenticate value, which may hold several challenges. */
export function parseAuthChallenges(value: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  let cur: AuthChallenge | null = null;
  let i = 0;
  const n = value.length;
  const skipWs = (): void => {
    while (i < n && (value[i] === ' ' || value[i] === '\t')) i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < n && TOKEN_CHAR.test(value[i] ?? '')) i++;
    return value.slice(start, i);
  };
  const readQuoted = (): string => {
    let s = '';
    for (i++; i < n; i++) {
      const ch = value[i];
      if (ch === '"') {
        i++;
        return s;
      }
      if (ch === '\\') i++;
      if (i < n) s += value[i];
    }
    throw new SipParseError('unterminated quoted string in challenge');
  };

  for (;;) {
    while (i < n && /[ \t,]/.test(value[i] ?? '')) i++;
    if (i >= n) break;
    const tok = readToken();
    if (!tok) throw new SipParseError(`unexpected ${JSON.stringify(value[i])} at offset ${i} in challenge`);
    skipWs();
    if (value[i] === '=') {
      if (!cur) throw new SipParseError(`parameter ${tok} before any auth scheme`);
      i++;
      skipWs();
      const quoted = value[i] === '"';
      const val = quoted ? readQuoted() : readToken();
      if (!quoted && val === '') throw new SipParseError(`parameter ${tok} has no value`);
      const key = tok.toLowerCase();
      // RFC 7235 §2.1: a parameter occurs at most once per challenge.
      if (cur.params.has(key)) throw new SipParseError(`parameter ${key} repeated in one challenge`);
      cur.params.set(key, val);
    } else {
      cur = { scheme: tok, params: new Map() };
      out.push(cur);
      // "Scheme token68" (e.g. Basic/Negotiate blobs) ends at a comma or the end.
      TOKEN68_AT.lastIndex = i;
      const t68 = TOKEN68_AT.exec(value);
      if (t68?.[1]) {
        cur.token68 = t68[1];
        i += t68[0].length;
      }
    }
  }
  return out;
}

function normaliseAlgorithm(raw: string | undefined): string {
  if (raw === undefined) return 'MD5';
  const known = (Object.keys(ALGORITHM_RANK) as DigestAlgorithm[]).find((a) => a.toLowerCase() === raw.toLowerCase());
  return known ?? raw;
}

/** Digest challenges from one or more header values; malformed or incomplete ones are skipped. */
export function parseDigestChallenges(values: string | readonly string[]): DigestChallenge[] {
  const out: DigestChallenge[] = [];
  for (const value of typeof values === 'string' ? [values] : values) {
    let parsed: AuthChallenge[];
    try {
      parsed = parseAuthChallenges(value);
    } catch (err) {
      if (err instanceof SipParseError) continue;
      throw err;
    }
    for (const c of parsed) {
      const realm = c.params.get('realm');
      const nonce = c.params.get('nonce');
      if (c.scheme.toLowerCase() !== 'digest' || realm === undefined || nonce === undefined) continue;
      const opaque = c.params.get('opaque');
      const qop = (c.params.get('qop') ?? '').split(',').map((q) => q.trim().toLowerCase()).filter(Boolean);
      out.push({
        realm,
        nonce,
        ...(opaque === undefined ? {} : { opaque }),
        algorithm: normaliseAlgorithm(c.params.get('algorithm')),
        algorithmGiven: c.params.has('algorithm'),
        qop,
        stale: c.params.get('stale')?.toLowerCase() === 'true',
        userhash: c.params.get('userhash')?.toLowerCase() === 'true',
      });
    }
  }
  return out;
}

function isSupported(c: DigestChallenge): c is DigestChallenge & { algorithm: DigestAlgorithm } {
  if (!(c.algorithm in ALGORITHM_RANK)) return false;
  return c.qop.length === 0 || c.qop.includes('auth') || c.qop.includes('auth-int');
}

/** Picks the strongest challenge we can answer, or null if there is none. */
export function chooseDigestChallenge(challenges: readonly DigestChallenge[]): DigestChallenge | null {
  let best: DigestChallenge | null = null;
  let bestScore = -1;
  for (const c of challenges) {
    if (!isSupported(c)) continue;
    // qop=auth protects against replay better than the RFC 2069 form; it only breaks ties.
    const score = ALGORITHM_RANK[c.algorithm] * 2 + (c.qop.length > 0 ? 1 : 0);
    if (score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

export interface DigestResponseInput {
  challenge: DigestChallenge;
  username: string;
  password: string;
  method: string;
  /** The digest-uri: for SIP, the Request-URI exactly as sent. */
  uri: string;
  body?: Buffer;
  /** Nonce count for this nonce, starting at 1. */
  nc?: number;
  /** Fixed only by tests; fresh random otherwise. */
  cnonce?: string;
}

function quote(s: string): string {
  return `"${s.replace(/[\\"]/g, '\\$&')}"`;
}

/** Builds the value of an Authorization or Proxy-Authorization header. */
export function buildDigestAuthorization(input: DigestResponseInput): string {
  const { challenge: ch, username, password, method, uri } = input;
  if (!isSupported(ch)) throw new Error(`unsupported digest challenge (algorithm ${ch.algorithm}, qop ${ch.qop.join(',') || 'none'})`);
  for (const [what, v] of [['username', username], ['uri', uri], ['method', method]] as const) {
    if (/[\r\n\0]/.test(v)) throw new Error(`digest ${what} contains CR, LF or NUL`);
  }
  const hashName = HASH_OF[ch.algorithm];
  const H = (data: string | Buffer): string => createHash(hashName).update(data).digest('hex');
  const qop = ch.qop.includes('auth') ? 'auth' : ch.qop.includes('auth-int') ? 'auth-int' : null;
  const sess = ch.algorithm.endsWith('-sess');
  const cnonce = input.cnonce ?? randomBytes(16).toString('hex');
  const nc = (input.nc ?? 1).toString(16).padStart(8, '0');

  let ha1 = H(`${username}:${ch.realm}:${password}`);
  if (sess) ha1 = H(`${ha1}:${ch.nonce}:${cnonce}`);
  const ha2 = qop === 'auth-int' ? H(`${method}:${uri}:${H(input.body ?? Buffer.alloc(0))}`) : H(`${method}:${uri}`);
  const response = qop ? H(`${ha1}:${ch.nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : H(`${ha1}:${ch.nonce}:${ha2}`);

  const parts = [
    `username=${quote(ch.userhash ? H(`${username}:${ch.realm}`) : username)}`,
    `realm=${quote(ch.realm)}`,
    `nonce=${quote(ch.nonce)}`,
    `uri=${quote(uri)}`,
    `response=${quote(response)}`,
  ];
  if (ch.algorithmGiven) parts.push(`algorithm=${ch.algorithm}`);
  if (qop || sess) parts.push(`cnonce=${quote(cnonce)}`);
  if (ch.opaque !== undefined) parts.push(`opaque=${quote(ch.opaque)}`);
  if (qop) parts.push(`qop=${qop}`, `nc=${nc}`);
  if (ch.userhash) parts.push('userhash=true');
  return `Digest ${parts.join(', ')}`;
}
