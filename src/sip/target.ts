// Where a request goes: RFC 3263 resolution of a SIP URI (or a trunk) into hops, each
// checked against the egress policy before anything is sent to it.
import { EgressRefusedError } from './register.ts';
import type { AddressVerdict } from './register.ts';
import { ResolveError, resolveTarget } from './resolve.ts';
import type { SipResolver, SipTransport } from './resolve.ts';
import type { Hop } from './transaction/common.ts';
import type { SipUri } from './uri.ts';

export interface TargetPolicy {
  resolver?: SipResolver;
  /** The egress policy; every resolved address is judged before use. */
  checkAddress?: (ip: string) => AddressVerdict;
}

/** A SIP trunk as stored with the credentials: where to send, and the account. */
export interface Trunk {
  hostname: string;
  /** Without a port the name is resolved with SRV first (RFC 3263), as validation does. */
  port?: number | null;
  transport: SipTransport;
  username: string;
  password: string;
}

export function transportOf(uri: SipUri): SipTransport {
  const param = uri.params.get('transport')?.toLowerCase();
  if (uri.scheme === 'sips' || param === 'tls') return 'tls';
  return param === 'tcp' ? 'tcp' : 'udp';
}

export async function resolveHops(host: string, port: number | null | undefined, transport: SipTransport, policy: TargetPolicy): Promise<Hop[]> {
  const targets = await resolveTarget(host, port, transport, policy.resolver ? { resolver: policy.resolver } : {});
  const hops: Hop[] = [];
  let refusal: EgressRefusedError | null = null;
  for (const t of targets) {
    const verdict = policy.checkAddress ? policy.checkAddress(t.address) : { allowed: true as const };
    if (verdict.allowed) hops.push({ transport, address: t.address, port: t.port, servername: host });
    else refusal ??= new EgressRefusedError(t.address, verdict.reason);
  }
  if (hops.length === 0) throw refusal ?? new ResolveError(`could not resolve host ${host}`);
  return hops;
}

export function resolveUri(uri: SipUri, policy: TargetPolicy): Promise<Hop[]> {
  // RFC 3263 §4: an explicit maddr wins over the host.
  const host = uri.params.get('maddr') ?? uri.host;
  return resolveHops(host, uri.port, transportOf(uri), policy);
}

export function resolveTrunk(trunk: Trunk, policy: TargetPolicy): Promise<Hop[]> {
  return resolveHops(trunk.hostname.trim(), trunk.port, trunk.transport, policy);
}
