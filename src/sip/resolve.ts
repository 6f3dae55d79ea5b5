// RFC 3263 §4 server location for a client that already knows its transport:
// literal IPs are used as they are, an explicit port skips SRV, otherwise SRV
// (ordered per RFC 2782) with a fallback to A/AAAA on the default port. NAPTR is
// not consulted because the caller always names the transport.
import dns from 'node:dns/promises';
import { isIP } from 'node:net';

export type SipTransport = 'udp' | 'tcp' | 'tls';

export interface SrvRecord {
  name: string;
  port: number;
  priority: number;
  weight: number;
}

export interface AddressRecord {
  address: string;
  family: 4 | 6;
}

/** What we need from DNS; injectable so tests never touch the network. */
export interface SipResolver {
  resolveSrv(name: string): Promise<SrvRecord[]>;
  /** A and AAAA records (or the system's view of them) for a host name. */
  lookup(hostname: string): Promise<AddressRecord[]>;
}

export interface ResolvedTarget {
  address: string;
  port: number;
  family: 4 | 6;
}

/** The host could not be turned into any address (bad syntax or no records). */
export class ResolveError extends Error {
  override name = 'ResolveError';
}

export const systemResolver: SipResolver = {
  resolveSrv: (name) => dns.resolveSrv(name),
  async lookup(hostname) {
    const found = await dns.lookup(hostname, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  },
};

export function defaultPort(transport: SipTransport): number {
  return transport === 'tls' ? 5061 : 5060;
}

function srvName(host: string, transport: SipTransport): string {
  const prefix = transport === 'tls' ? '_sips._tcp.' : transport === 'tcp' ? '_sip._tcp.' : '_sip._udp.';
  return prefix + host;
}

/** Returns the literal IP inside `host` (bare or `[v6]`), or null for a name. */
export function literalIp(host: string): AddressRecord | null {
  const inner = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(inner);
  if (family === 0) {
    if (inner !== host) throw new ResolveError(`invalid IPv6 literal ${host}`);
    return null;
  }
  if (family === 4 && inner !== host) throw new ResolveError(`invalid IPv6 literal ${host}`);
  return { address: inner, family: family === 6 ? 6 : 4 };
}

const HOSTNAME_RE = /^(?=.{1,253}\.?$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** RFC 2782: by priority, then weighted random within one priority. */
export function orderSrv(records: readonly SrvRecord[], random: () => number = Math.random): SrvRecord[] {
  const byPriority = new Map<number, SrvRecord[]>();
  for (const r of records) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const out: SrvRecord[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    // Zero-weight records go last so they are only used when the others are.
    const pool = (byPriority.get(priority) ?? []).slice().sort((a, b) => Number(a.weight === 0) - Number(b.weight === 0));
    while (pool.length > 0) {
      const total = pool.reduce((sum, r) => sum + r.weight, 0);
      let index = 0;
      if (total > 0) {
        const pick = random() * total;
        let running = 0;
        index = pool.findIndex((r) => (running += r.weight) > pick);
        if (index === -1) index = pool.length - 1;
      }
      out.push(...pool.splice(index, 1));
    }
  }
  return out;
}

function isNoData(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOTFOUND' || code === 'ENODATA' || code === 'NOTFOUND' || code === 'NODATA' || code === 'EAI_NONAME' || code === 'EAI_NODATA';
}

async function addressesOf(resolver: SipResolver, name: string, port: number): Promise<ResolvedTarget[]> {
  try {
    const found = await resolver.lookup(name);
    // Re-derive the family from the text so a confused resolver cannot mislabel it.
    return found.flatMap((a): ResolvedTarget[] => {
      const family = isIP(a.address);
      return family === 0 ? [] : [{ address: a.address, family: family === 6 ? 6 : 4, port }];
    });
  } catch (err) {
    if (isNoData(err)) return [];
    throw err;
  }
}

export interface ResolveOptions {
  resolver?: SipResolver;
  random?: () => number;
}

/** Ordered candidate addresses for `host`; throws ResolveError when there are none. */
export async function resolveTarget(
  host: string,
  port: number | null | undefined,
  transport: SipTransport,
  options: ResolveOptions = {},
): Promise<ResolvedTarget[]> {
  if (port !== null && port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    throw new ResolveError(`invalid port ${port}`);
  }
  const literal = literalIp(host);
  if (literal) return [{ ...literal, port: port ?? defaultPort(transport) }];
  if (!HOSTNAME_RE.test(host)) throw new ResolveError(`invalid host name ${JSON.stringify(host.slice(0, 80))}`);

  const resolver = options.resolver ?? systemResolver;
  let out: ResolvedTarget[] = [];
  if (port === null || port === undefined) {
    // Any SRV failure (no records, SERVFAIL, ...) means "use A/AAAA" (RFC 3263 §4.2).
    const srv = await resolver.resolveSrv(srvName(host, transport)).catch((): SrvRecord[] => []);
    // A single "." target means the service is decidedly not offered (RFC 2782).
    if (srv.length === 1 && (srv[0]?.name === '.' || srv[0]?.name === '')) {
      throw new ResolveError(`${host} does not offer SIP over ${transport}`);
    }
    for (const record of orderSrv(srv, options.random)) {
      const targetLiteral = literalIp(record.name);
      if (targetLiteral) out.push({ ...targetLiteral, port: record.port });
      else out.push(...(await addressesOf(resolver, record.name.replace(/\.$/, ''), record.port)));
    }
    if (srv.length > 0 && out.length === 0) throw new ResolveError(`could not resolve host ${host}`);
  }
  if (out.length === 0) out = await addressesOf(resolver, host, port ?? defaultPort(transport));
  if (out.length === 0) throw new ResolveError(`could not resolve host ${host}`);

  const seen = new Set<string>();
  return out.filter((t) => {
    const key = `${t.address}|${t.port}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
