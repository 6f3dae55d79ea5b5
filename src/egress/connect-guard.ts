// The egress policy for connections the egress client does not make itself: WebSocket and
// streaming HTTP to a speech provider at a base URL a tenant chose. The caller keeps its own
// client (ws, undici) and passes it the `lookup` made here, so the address that is judged is
// the address that is dialled: there is no second resolution and no DNS-rebinding window.
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { parseHostLiteral } from './address.ts';
import { EgressError, type EgressLookup } from './client.ts';
import { checkAddress, type AllowList } from './policy.ts';

const SCHEMES = ['http:', 'https:', 'ws:', 'wss:'];

const defaultLookup: EgressLookup = (hostname) => dnsLookup(hostname, { all: true });

export interface ConnectGuard {
  /** For `net.connect`, `tls.connect`, `http.request`, `new WebSocket(url, { lookup })`, undici's `connect: { lookup }`. */
  lookup: LookupFunction;
}

/**
 * Judges the host of `rawUrl` before a connection is opened to it. A literal address is judged
 * now (Node never calls `lookup` for one) and a refused one throws EgressError `refused_address`;
 * a name is judged by the returned `lookup` when the connection resolves it, and the connection
 * fails with that EgressError when ANY of its addresses is refused (as the egress client decides).
 */
export function guardConnection(rawUrl: string, allow: AllowList, resolve: EgressLookup = defaultLookup): ConnectGuard {
  const url = URL.parse(rawUrl);
  if (!url || !SCHEMES.includes(url.protocol)) throw new EgressError('invalid_url', 'invalid URL: only http(s) and ws(s) are supported');
  if (url.username || url.password) throw new EgressError('invalid_url', 'credentials in the URL are not supported');
  const literal = parseHostLiteral(url.hostname);
  if (literal) {
    const verdict = checkAddress(literal.address, allow);
    if (!verdict.allowed) throw new EgressError('refused_address', `egress to ${url.hostname} refused: ${verdict.reason}`, verdict.category);
  }
  return { lookup: policyLookup(allow, resolve) };
}

/** A `lookup` that resolves every address of a name, refuses the name if any is refused, and answers in the shape asked for. */
export function policyLookup(allow: AllowList, resolve: EgressLookup = defaultLookup): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    resolve(hostname).then(
      (results) => {
        for (const result of results) {
          const verdict = checkAddress(result.address, allow);
          if (!verdict.allowed) {
            // The tenant chose the name: what it resolves to is not theirs to learn (the reason names only the policy).
            const refused = new EgressError('refused_address', `egress to ${hostname} refused by the egress policy`, verdict.category);
            callback(refused, options.all ? [] : '', 0);
            return;
          }
        }
        // Judged all of them; dial only those of the family the connection asked for.
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const wanted = family === 4 || family === 6 ? results.filter((r) => r.family === family) : results;
        const first = wanted[0];
        if (!first) {
          const none = Object.assign(new Error(`DNS lookup for ${hostname} returned no usable address`), { code: 'ENOTFOUND' });
          callback(none, options.all ? [] : '', 0);
        } else if (options.all) {
          callback(null, wanted.map((r) => ({ address: r.address, family: r.family })));
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : '', 0),
    );
  };
}
