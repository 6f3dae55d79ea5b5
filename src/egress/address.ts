// Literal IP parsing for the egress policy.
//
// Attackers hide internal addresses behind unusual spellings ("127.1", "0x7f.1",
// "2130706433", "[::ffff:7f00:1]"), so every host is normalised here before the
// policy judges it. IPv4 follows inet_aton / the WHATWG URL host parser (1-4
// parts, each decimal, 0-prefixed octal or 0x-prefixed hex) because that is
// what resolvers and URL parsers will actually connect to.
import { isIP } from 'node:net';

export interface HostLiteral {
  family: 4 | 6;
  /** Canonical form: dotted quad, or RFC 5952 compressed lower-case IPv6 (no brackets, no zone). */
  address: string;
  /** IPv6 zone id ("eth0" in "fe80::1%eth0"); never part of `address`, never judged. */
  zone?: string;
}

export type IPv4Embedding = 'ipv4-mapped' | 'ipv4-translated' | 'ipv4-compatible' | 'nat64' | '6to4';

// One inet_aton component: hex ("0x" alone is 0, as in WHATWG), octal, or decimal.
const V4_PART = /^(?:0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$/;

function parsePart(part: string): number | null {
  if (!V4_PART.test(part)) return null;
  if (part.length >= 2 && (part[1] === 'x' || part[1] === 'X')) {
    return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  }
  if (part.length > 1 && part.startsWith('0')) return Number.parseInt(part, 8);
  return Number.parseInt(part, 10);
}

/** inet_aton-style IPv4 parse to a 32-bit unsigned integer, or null if not an IPv4 literal. */
export function parseIPv4Number(text: string): number | null {
  const parts = text.split('.');
  // A single trailing dot is tolerated ("127.0.0.1."), as the URL parser does.
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length < 1 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    const value = parsePart(part);
    if (value === null || !Number.isFinite(value)) return null;
    values.push(value);
  }
  const last = values.pop() ?? 0;
  // The last part fills all remaining bytes: a.b.c.d, a.b.(16 bits), a.(24 bits), (32 bits).
  if (last >= 256 ** (5 - parts.length)) return null;
  let result = last;
  for (const [i, value] of values.entries()) {
    if (value > 255) return null;
    result += value * 256 ** (3 - i);
  }
  return result;
}

export function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** Parse a zone-free IPv6 literal into its eight 16-bit groups. */
export function parseIPv6Groups(text: string): number[] | null {
  if (text.includes('%') || isIP(text) !== 6) return null;
  let hex = text;
  const lastColon = hex.lastIndexOf(':');
  const tail = hex.slice(lastColon + 1);
  if (tail.includes('.')) {
    // isIP has already validated the dotted tail as a strict dotted quad.
    const v4 = parseIPv4Number(tail) ?? 0;
    hex = `${hex.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head = '', rest] = hex.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(zeros).fill('0'), ...right].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

/** RFC 5952 text: lower case, no leading zeros, longest run (>= 2) of zero groups as "::". */
export function formatIPv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const text = groups.map((g) => g.toString(16));
  if (bestStart < 0) return text.join(':');
  return `${text.slice(0, bestStart).join(':')}::${text.slice(bestStart + bestLen).join(':')}`;
}

/**
 * Parse a host as an IP literal. Accepts any inet_aton IPv4 spelling and IPv6 with
 * or without brackets and with an optional zone id ("%eth0", or "%25eth0" as in URLs).
 * Returns null for anything that is not an IP literal (i.e. a name to resolve).
 */
export function parseHostLiteral(host: string): HostLiteral | null {
  let text = host;
  const bracketed = text.startsWith('[') && text.endsWith(']');
  if (bracketed) text = text.slice(1, -1);
  if (text.includes(':')) {
    let zone: string | undefined;
    const pct = text.indexOf('%');
    if (pct >= 0) {
      zone = text.slice(pct + 1);
      text = text.slice(0, pct);
      if (zone.startsWith('25') && bracketed) zone = zone.slice(2); // RFC 6874 "%25" escape
      if (zone === '' || /[\s[\]/%]/.test(zone)) return null;
    }
    const groups = parseIPv6Groups(text);
    if (!groups) return null;
    const literal: HostLiteral = { family: 6, address: formatIPv6(groups) };
    if (zone !== undefined) literal.zone = zone;
    return literal;
  }
  if (bracketed) return null; // brackets are only for IPv6
  const v4 = parseIPv4Number(text);
  return v4 === null ? null : { family: 4, address: formatIPv4(v4) };
}

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the transition
 * formats that deliver packets to that IPv4 host (so it must be judged as that host).
 * `::` and `::1` are excluded: they are the IPv6 unspecified and loopback addresses.
 */
export function embeddedIPv4(address: string): { kind: IPv4Embedding; ipv4: string } | null {
  const g = parseIPv6Groups(address);
  if (!g) return null;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = g;
  const low = formatIPv4(g6 * 65536 + g7);
  const firstFourZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (firstFourZero && g4 === 0 && g5 === 0xffff) return { kind: 'ipv4-mapped', ipv4: low };
  if (firstFourZero && g4 === 0xffff && g5 === 0) return { kind: 'ipv4-translated', ipv4: low };
  if (firstFourZero && g4 === 0 && g5 === 0 && !(g6 === 0 && g7 <= 1)) return { kind: 'ipv4-compatible', ipv4: low };
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return { kind: 'nat64', ipv4: low };
  if (g0 === 0x2002) return { kind: '6to4', ipv4: formatIPv4((g1 ?? 0) * 65536 + (g2 ?? 0)) };
  return null;
}
