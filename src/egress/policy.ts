// Egress address policy: which resolved addresses outbound traffic may reach.
//
// Contract: loopback, private, link-local, metadata and other non-public ranges
// are refused unless PARLEY_EGRESS_ALLOW (comma-separated CIDRs) names them.
// This module only judges; it never resolves or connects.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { embeddedIPv4, parseHostLiteral } from './address.ts';
import type { HostLiteral } from './address.ts';

export type AddressCategory =
  | 'loopback' | 'private' | 'shared' | 'link-local' | 'metadata' | 'unspecified'
  | 'multicast' | 'broadcast' | 'reserved' | 'documentation' | 'benchmark' | 'invalid';

export type AddressVerdict =
  | { allowed: true }
  | { allowed: false; reason: string; category: AddressCategory };

export interface AllowList {
  /** Normalised CIDRs, for logging/diagnostics. */
  readonly entries: readonly string[];
  /** True when the address (any literal spelling) falls in one of the entries. */
  includes(address: string): boolean;
  /** True when an entry is exactly this one address (/32 or /128). */
  names(address: string): boolean;
}

// Order matters: the first match names the category, so the specific metadata
// and broadcast addresses come before the wider ranges that contain them.
const RANGES: ReadonlyArray<readonly [AddressCategory, string]> = [
  ['metadata', '169.254.169.254/32'], // AWS/GCP/Azure/OpenStack instance metadata
  ['metadata', '169.254.170.2/32'], // AWS ECS task metadata
  ['metadata', '100.100.100.200/32'], // Alibaba Cloud metadata
  ['metadata', 'fd00:ec2::254/128'], // AWS IMDS over IPv6
  ['broadcast', '255.255.255.255/32'],
  ['unspecified', '0.0.0.0/8'],
  ['loopback', '127.0.0.0/8'],
  ['private', '10.0.0.0/8'],
  ['private', '172.16.0.0/12'],
  ['private', '192.168.0.0/16'],
  ['shared', '100.64.0.0/10'], // carrier-grade NAT, often the cluster network
  ['link-local', '169.254.0.0/16'],
  ['multicast', '224.0.0.0/4'],
  ['reserved', '192.0.0.0/24'], // IETF protocol assignments
  ['reserved', '192.88.99.0/24'], // deprecated 6to4 relay anycast
  ['reserved', '240.0.0.0/4'],
  ['documentation', '192.0.2.0/24'],
  ['documentation', '198.51.100.0/24'],
  ['documentation', '203.0.113.0/24'],
  ['benchmark', '198.18.0.0/15'],
  ['unspecified', '::/128'],
  ['loopback', '::1/128'],
  ['private', 'fc00::/7'], // unique local
  ['private', '64:ff9b:1::/48'], // local-use NAT64 (RFC 8215): translator-specific, not judgeable
  ['link-local', 'fe80::/10'],
  ['reserved', 'fec0::/10'], // deprecated site-local
  ['reserved', '100::/64'], // discard-only
  ['reserved', '2001::/32'], // Teredo: tunnels to an obfuscated IPv4 we cannot judge
  ['multicast', 'ff00::/8'],
  ['documentation', '2001:db8::/32'],
  ['documentation', '3fff::/20'],
  ['benchmark', '2001:2::/48'],
];

interface Range {
  category: AddressCategory;
  cidr: string;
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

/**
 * A CIDR or bare address in standard notation (config must not use inet_aton shorthand or
 * zone ids, which ipaddr.js would accept), as ipaddr.js's [address, prefix] pair.
 */
function parseCidr(text: string): Range['range'] | null {
  const slash = text.indexOf('/');
  let address = slash >= 0 ? text.slice(0, slash) : text;
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const version = address.includes('%') ? 0 : isIP(address);
  if (version !== 4 && version !== 6) return null;
  const max = version === 4 ? 32 : 128;
  const prefixText = slash >= 0 ? text.slice(slash + 1) : String(max);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return null;
  return [ipaddr.parse(address), Number(prefixText)];
}

const TABLE: Range[] = RANGES.map(([category, cidr]) => {
  const range = parseCidr(cidr);
  if (!range) throw new Error(`egress policy table has a bad CIDR: ${cidr}`);
  return { category, cidr, range };
});

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Within a range of its own family (IPv4 rules never match IPv4-mapped IPv6: embeddedIPv4 does that, explicitly). */
const within = (ip: ipaddr.IPv4 | ipaddr.IPv6, [net, bits]: Range['range']) => ip.kind() === net.kind() && ip.match(net, bits);

function categorize(ip: HostLiteral): Range | undefined {
  const parsed = ipaddr.parse(ip.address);
  return TABLE.find((r) => within(parsed, r.range));
}

/**
 * Parse a PARLEY_EGRESS_ALLOW-style list: comma-separated CIDRs, bare IPs meaning
 * /32 or /128. Empty or undefined gives an empty list. Throws on any bad entry so a
 * typo fails loudly at startup instead of silently allowing or refusing traffic.
 */
export function parseAllowList(csv: string | undefined): AllowList {
  const ranges: Range['range'][] = [];
  const entries: string[] = [];
  const singles = new Set<string>();
  for (const raw of (csv ?? '').split(',')) {
    const text = raw.trim();
    if (text === '') continue;
    const range = parseCidr(text);
    if (!range) {
      throw new Error(
        `PARLEY_EGRESS_ALLOW: "${text}" is not a valid CIDR (expected e.g. 10.0.0.0/8, 192.168.1.5, fd00::/8 or ::1)`,
      );
    }
    const [address, prefix] = range;
    ranges.push(range);
    entries.push(`${address.toString()}/${prefix}`);
    if (prefix === (address.kind() === 'ipv4' ? 32 : 128)) singles.add(address.toString());
  }
  // Transition formats reach their embedded IPv4 host, so naming that host covers them too.
  const embeddedOf = (ip: HostLiteral): string | null => (ip.family === 6 ? (embeddedIPv4(ip.address)?.ipv4 ?? null) : null);
  const covered = (address: string) => {
    const ip = ipaddr.parse(address);
    return ranges.some((range) => within(ip, range));
  };
  return Object.freeze({
    entries: Object.freeze(entries),
    includes(address: string): boolean {
      const ip = parseHostLiteral(address);
      if (!ip) return false;
      if (covered(ip.address)) return true;
      const embedded = embeddedOf(ip);
      return embedded !== null && covered(embedded);
    },
    names(address: string): boolean {
      const ip = parseHostLiteral(address);
      if (!ip) return false;
      const embedded = embeddedOf(ip);
      return singles.has(ip.address) || (embedded !== null && singles.has(embedded));
    },
  });
}

function refuse(category: AddressCategory, detail: string): AddressVerdict {
  return { allowed: false, category, reason: `${category}: ${detail}; not in PARLEY_EGRESS_ALLOW` };
}

/** The non-public range an address falls in (directly or via its embedded IPv4), if any. */
function findRefusal(literal: HostLiteral): { category: AddressCategory; detail: string } | null {
  const own = categorize(literal);
  if (own) return { category: own.category, detail: `${literal.address} is in ${own.cidr}` };
  if (literal.family === 4) return null;
  const embedded = embeddedIPv4(literal.address);
  if (embedded) {
    const inner = categorize({ family: 4, address: embedded.ipv4 });
    if (!inner) return null;
    const detail = `${literal.address} (${embedded.kind} for ${embedded.ipv4}) is in ${inner.cidr}`;
    return { category: inner.category, detail };
  }
  if (!ipaddr.IPv6.parse(literal.address).match(GLOBAL_UNICAST_V6)) {
    return { category: 'reserved', detail: `${literal.address} is outside global unicast 2000::/3` };
  }
  return null;
}

/**
 * Judge one (resolved) address. Public addresses are allowed. A non-public one is
 * allowed only when the allow list covers it; metadata addresses additionally need
 * an entry naming exactly that address, so a broad entry such as 0.0.0.0/0 or
 * 169.254.0.0/16 cannot accidentally expose cloud credentials.
 */
export function checkAddress(ip: string, allow: AllowList): AddressVerdict {
  const literal = parseHostLiteral(ip);
  if (!literal) return refuse('invalid', `"${ip.slice(0, 64)}" is not an IP address`);
  const refusal = findRefusal(literal);
  if (!refusal) return { allowed: true };
  const allowed = refusal.category === 'metadata' ? allow.names(literal.address) : allow.includes(literal.address);
  return allowed ? { allowed: true } : refuse(refusal.category, refusal.detail);
}
