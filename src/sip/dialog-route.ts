// How a request inside a dialog is addressed (RFC 3261 §12.2.1.1): Request-URI and Route
// from the route set and remote target, and the hop it is sent to (§8.1.2).
import { splitHeaderList } from './message.ts';
import type { Hop } from './transaction/common.ts';
import { resolveUri } from './target.ts';
import type { TargetPolicy } from './target.ts';
import { formatUri, parseNameAddr, parseUri } from './uri.ts';

export interface Addressed {
  requestUri: string;
  routes: string[];
}

/** Loose routing when the first route has `lr`; the strict-routing form otherwise. */
export function addressRequest(remoteTarget: string, routeSet: readonly string[]): Addressed {
  const first = routeSet[0];
  if (first === undefined) return { requestUri: remoteTarget, routes: [] };
  const firstUri = parseNameAddr(first).uri;
  if (firstUri.params.has('lr')) return { requestUri: remoteTarget, routes: [...routeSet] };
  // RFC 3261 §12.2.1.1: a strict router gets the request URI and the target goes last.
  const requestUri = formatUri({ ...firstUri, headers: '' });
  return { requestUri, routes: [...routeSet.slice(1), `<${remoteTarget}>`] };
}

/** Where the request goes first: the top Route, else the Request-URI. */
export async function firstHop(addressed: Addressed, policy: TargetPolicy): Promise<Hop> {
  const next = addressed.routes[0] !== undefined ? parseNameAddr(addressed.routes[0]).uri : parseUri(addressed.requestUri);
  const hops = await resolveUri(next, policy);
  return hops[0] as Hop;
}

/** The route set a UAC learns from a 2xx (Record-Route reversed), or a UAS from the INVITE. */
export function routeSetOf(recordRoutes: readonly string[], role: 'uac' | 'uas'): string[] {
  const all = recordRoutes.flatMap(splitHeaderList);
  return role === 'uac' ? all.reverse() : all;
}
