import type { CallSourceKind } from '../calls/store.ts';
import type { IncomingCall } from '../sip/inbound.ts';
import { literalIp, resolveTarget, systemResolver, type SipResolver, type SipTransport } from '../sip/resolve.ts';
import type { NumberTrunk, TelephonyDirectory } from './directory.ts';
import { readNumber } from './numbers.ts';

/** Where an incoming INVITE goes: the SIP number it names, its credentials, and who answers. */
export interface InboundRoute {
  organizationId: string;
  number: string;
  credentialId: string;
  maxCalls: number;
  answerer: { kind: CallSourceKind; id: string };
}

/**
 * Why an INVITE has no route; each is answered 404 (docs/sip.md, "Inbound calls"). `ambiguous`:
 * the number is claimed by more than one organization on trunks at the INVITE's address.
 */
export type NoRoute = 'no_number' | 'not_from_trunk' | 'no_assistant' | 'ambiguous';

/**
 * The E.164 number a user part may mean, as readNumber reads it (the calling number is read
 * the same way): written with the plus (`+4930123456`, `%2B…`), or the bare digits many trunks
 * send (`4930123456`), read as international.
 */
export function numbersOf(user: string | null): string[] {
  const number = user ? readNumber(user) : null;
  return number ? [number] : [];
}

/** The request URI's user part, %-decoded; null for a URI without one. */
function requestUser(requestUri: string): string | null {
  const user = /^sips?:([^@;?]+)@/i.exec(requestUri.trim())?.[1];
  if (!user) return null;
  try {
    return decodeURIComponent(user);
  } catch {
    return user;
  }
}

/** Every address the credentials' host names (SRV targets included when no port is stored). */
async function addressesOf(hostname: string, port: number, transport: SipTransport, resolver: SipResolver): Promise<Set<string>> {
  const literal = literalIp(hostname);
  if (literal) return new Set([literal.address]);
  const targets = await resolveTarget(hostname, port, transport, { resolver }).catch(() => []);
  return new Set(targets.map((t) => t.address));
}

/** `::ffff:192.0.2.1` (a dual-stack socket's view of an IPv4 peer) is 192.0.2.1. */
const plainAddress = (address: string): string => address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');

/**
 * Finds the SIP number an INVITE is for: its request URI user or its To user names the number
 * (the request URI first: a registered Contact's INVITE carries the number in To), and it
 * must come from an address of that number's credentials' host. The same number may belong
 * to several organizations on different trunks; the first (oldest) whose trunk the INVITE came
 * from is the one. Two organizations whose trunks for that number both include the INVITE's
 * address (names that resolve alike, which the API's check of the written host cannot see)
 * get neither: the call would otherwise go to whichever claimed the number first.
 */
export async function routeInbound(directory: TelephonyDirectory, call: Pick<IncomingCall, 'requestUri' | 'to' | 'source'>, resolver: SipResolver = systemResolver): Promise<InboundRoute | NoRoute> {
  const candidates = [...new Set([...numbersOf(requestUser(call.requestUri)), ...numbersOf(call.to.user)])];
  if (!candidates.length) return 'no_number';
  const rows = await directory.numberTrunks(candidates);
  if (!rows.length) return 'no_number';
  const source = plainAddress(call.source.address);
  const fromSource = async (row: NumberTrunk) => (await addressesOf(row.hostname, row.port, row.transport, resolver)).has(source);
  for (const [i, row] of rows.entries()) {
    if (!(await fromSource(row))) continue;
    for (const other of rows.slice(i + 1)) {
      if (other.number === row.number && other.organizationId !== row.organizationId && (await fromSource(other))) return 'ambiguous';
    }
    const answerer = await directory.answerer(row.organizationId, row.number);
    if (typeof answerer === 'string') return 'no_assistant';
    return { organizationId: row.organizationId, number: row.number, credentialId: row.credentialId, maxCalls: row.maxCalls, answerer };
  }
  return 'not_from_trunk';
}
