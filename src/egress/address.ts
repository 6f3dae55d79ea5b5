// Literal IP parsing for the egress policy.
//
// Attackers hide internal addresses behind unusual spellings ("127.1", "0x7f.1",
// "2130706433", "[::ffff:7f00:1]"), so every host is normalised here before the
// policy judges it. ipaddr.js parses both families, including the inet_aton IPv4
// forms (1-4 parts, decimal, 0-prefixed octal or 0x-prefixed hex) that resolvers
// and URL parsers connect to. What stays ours, and why:
// - Two WHATWG URL host quirks ipaddr.js does not follow: one trailing dot
//   ("127.0.0.1.") and a bare "0x" part (read as 0). The URL parser accepts
//   both, so the policy must see the address they reach.
// - IPv6 text is first checked by Node's strict parser (isIP): ipaddr.js is more
//   lenient (dotted tails with octal parts, for one), and an address the socket
//   layer would not take is a name, not a literal.
// - Brackets and zone ids ("%eth0", "%25eth0" in URLs, RFC 6874), which are URL
//   syntax rather than address syntax.
// - Which transition formats carry an IPv4 host (embeddedIPv4): ipaddr.js names
//   some of these ranges but does not extract the IPv4 host from 6to4 or the
//   deprecated IPv4-compatible form.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface HostLiteral {
  family: 4 | 6;
  /** Canonical form: dotted quad, or RFC 5952 compressed lower-case IPv6 (no brackets, no zone). */
  address: string;
  /** IPv6 zone id ("eth0" in "fe80::1%eth0"); never part of `address`, never judged. */
  zone?: string;
}

export type IPv4Embedding = 'ipv4-mapped' | 'ipv4-translated' | 'ipv4-compatible' | 'nat64' | '6to4';

/** Every character an inet_aton IPv4 spelling may hold: decimal, octal and 0x-hexadecimal parts, dots. */
const INET_ATON_CHARACTERS = /^[\da-fx.]+$/i;

/** An inet_aton IPv4 spelling in canonical dotted-quad form, or null when it is not one. */
function parseIPv4(text: string): string | null {
  // The WHATWG quirks (see above): one trailing dot, and "0x" alone meaning 0.
  const parts = text.replace(/(?<=.)\.$/, '').split('.').map((part) => (/^0x$/i.test(part) ? '0' : part));
  const spelled = parts.join('.');
  // A name (nearly every host) has a character no inet_aton spelling has: answered without asking
  // ipaddr.js, whose isValid throws and catches an exception for each name (a tenth of the CPU
  // of creating an assistant with five tool webhooks, see docs/performance.md).
  if (!INET_ATON_CHARACTERS.test(spelled)) return null;
  return ipaddr.IPv4.isValid(spelled) ? ipaddr.IPv4.parse(spelled).toString() : null;
}

/** Parse a zone-free IPv6 literal into its eight 16-bit groups. */
export function parseIPv6Groups(text: string): number[] | null {
  if (text.includes('%') || isIP(text) !== 6) return null;
  return ipaddr.IPv6.parse(text).parts.slice();
}

/** RFC 5952 text: lower case, no leading zeros, first longest run (>= 2) of zero groups as "::". */
export function formatIPv6(groups: readonly number[]): string {
  return new ipaddr.IPv6([...groups]).toRFC5952String();
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
  const v4 = parseIPv4(text);
  return v4 === null ? null : { family: 4, address: v4 };
}

const cidr = (text: string) => ipaddr.IPv6.parseCIDR(text);
const IPV4_MAPPED = cidr('::ffff:0:0/96');
const IPV4_TRANSLATED = cidr('::ffff:0:0:0/96');
const IPV4_COMPATIBLE = cidr('::/96');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');

const ipv4Of = (high: number, low: number) => ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]).toString();

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the transition
 * formats that deliver packets to that IPv4 host (so it must be judged as that host).
 * `::` and `::1` are excluded: they are the IPv6 unspecified and loopback addresses.
 */
export function embeddedIPv4(address: string): { kind: IPv4Embedding; ipv4: string } | null {
  if (address.includes('%') || isIP(address) !== 6) return null;
  const ip = ipaddr.IPv6.parse(address);
  const [, g1 = 0, g2 = 0, , , , g6 = 0, g7 = 0] = ip.parts;
  const low = ipv4Of(g6, g7);
  if (ip.match(IPV4_MAPPED)) return { kind: 'ipv4-mapped', ipv4: low };
  if (ip.match(IPV4_TRANSLATED)) return { kind: 'ipv4-translated', ipv4: low };
  if (ip.match(IPV4_COMPATIBLE) && !(g6 === 0 && g7 <= 1)) return { kind: 'ipv4-compatible', ipv4: low };
  if (ip.match(NAT64)) return { kind: 'nat64', ipv4: low };
  if (ip.match(SIX_TO_FOUR)) return { kind: '6to4', ipv4: ipv4Of(g1, g2) };
  return null;
}

// Candidates for hideAddresses: a dotted quad, or hex groups with at least two colons (an
// IPv6 address, possibly followed by ":port" as Node's socket errors write it), each then
// confirmed by isIP so that ordinary text is left alone.
const ADDRESS_LIKE = /\[?(?:[0-9a-f]{0,4}:){2,8}[0-9a-f]{0,4}(?:\.\d{1,3}){0,3}\]?|\b\d{1,3}(?:\.\d{1,3}){3}\b/gi;

/**
 * Text meant for a tenant without the IP addresses in it. Socket errors name the address a
 * host name resolved to ("connect ECONNREFUSED 10.1.2.3:443"); a tenant who chose the name
 * must not learn internal DNS answers that way. Each address becomes "(address hidden)".
 */
export function hideAddresses(text: string): string {
  return text.replace(ADDRESS_LIKE, (match) => {
    const bare = match.replace(/^\[|\]$/g, '');
    const withoutPort = bare.replace(/:\d{1,5}$/, '');
    return isIP(bare) || isIP(withoutPort) ? '(address hidden)' : match;
  });
}
