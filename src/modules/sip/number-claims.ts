import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { lockFor } from '../../db/claim-lock.ts';
import type { Db } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import type { Transaction } from 'kysely';
import { conflict } from '../../http/errors.ts';

/**
 * The trunk address credentials name, as claims of a number are compared: a host name without
 * case or trailing dot, an IP address in one spelling (IPv6 as RFC 5952 writes it, an
 * IPv4-mapped address as its IPv4 address). Nothing is resolved: see assertNumberUnclaimed.
 */
export function trunkAddress(hostname: string): string {
  const inner = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(inner) === 6) {
    const address = ipaddr.IPv6.parse(inner);
    return address.isIPv4MappedAddress() ? address.toIPv4Address().toString() : address.toRFC5952String();
  }
  return inner.toLowerCase().replace(/\.$/, '');
}

/**
 * A number may be claimed on one trunk address by one organization only: the INVITEs of a
 * shared SBC or proxy come from one address for every tenant, and a second claim would let the
 * organization that came first answer the other's callers (docs/sip.md, "SIP numbers"). Checked
 * inside the write's transaction, under a lock on the number (PostgreSQL; SQLite's writes are
 * one at a time), so two organizations claiming it at once cannot both pass. A 409 names the
 * number and the address, never the other organization.
 */
export async function assertNumberUnclaimed(trx: Transaction<Database>, dialect: Db['dialect'], organizationId: string, number: string, hostname: string): Promise<void> {
  await lockFor(trx, dialect, `sip_number:${number}`);
  const claims = await trx.selectFrom('sip_numbers as n')
    .innerJoin('sip_credentials as cr', 'cr.id', 'n.sip_credential_id')
    .select('cr.hostname')
    .where('n.number', '=', number).where('n.organization_id', '!=', organizationId)
    .execute();
  const address = trunkAddress(hostname);
  if (claims.some((claim) => trunkAddress(claim.hostname) === address)) {
    throw conflict(`Another organization already has ${number} on the trunk address ${address}`, [{
      path: 'number',
      message: `${number} is a SIP number of another organization on credentials for ${address}: calls from that address to the number reach one organization only. Ask the trunk's operator which organization it belongs to`,
    }]);
  }
}
