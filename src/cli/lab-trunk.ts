import { ParleyError } from './api-client.ts';
import type { Org } from './ascode/kinds.ts';

/** The name of the SIP credentials parley lab keeps in the organization: found again by it on the next run. */
export const LAB_CREDENTIAL_NAME = 'parley lab';

export interface LabTrunk {
  hostname: string;
  port: number;
  username: string;
  password: string;
}

export interface Provisioned {
  credentialId: string;
  numberId: string;
  /** What this run created, as against found from a run before and updated. */
  created: { credential: boolean; number: boolean };
}

interface Item {
  id: string;
  name?: string;
  number?: string;
}

async function find(items: AsyncIterable<unknown>, match: (item: Item) => boolean): Promise<Item | null> {
  for await (const item of items as AsyncIterable<Item>) if (match(item)) return item;
  return null;
}

/** A refusal of the loopback trunk by the egress policy, with what to change. */
function explained(err: unknown): unknown {
  if (err instanceof ParleyError && err.status === 400 && err.details.some((d) => d.path.includes('hostname'))) {
    return new Error(`${err.message}: parley serve refuses SIP to 127.0.0.1 unless PARLEY_EGRESS_ALLOW includes 127.0.0.0/8 (restart it with that set)`);
  }
  return err;
}

/**
 * The SIP credentials of the lab's trunk (registered, so calls to the number reach Parley) and
 * the number on them: created, or those of a run before updated to this run's port and password.
 */
export async function provisionTrunk(org: Org, trunk: LabTrunk, number: string): Promise<Provisioned> {
  const body = { name: LAB_CREDENTIAL_NAME, hostname: trunk.hostname, port: trunk.port, transport: 'udp' as const, username: trunk.username, password: trunk.password, register: true, maxAgentTasks: 2 };
  try {
    const oldCredential = await find(org.paginate('listSipCredentials'), (c) => c.name === LAB_CREDENTIAL_NAME);
    const credentialId = oldCredential
      ? (await org.updateSipCredential({ path: { sipCredentialId: oldCredential.id }, body }), oldCredential.id)
      : (await org.createSipCredential({ body })).id;
    const numberBody = { number, sipCredentialId: credentialId, name: `${LAB_CREDENTIAL_NAME} ${number}` };
    const oldNumber = await find(org.paginate('listSipNumbers'), (n) => n.number === number);
    const numberId = oldNumber
      ? (await org.updateSipNumber({ path: { sipNumberId: oldNumber.id }, body: numberBody }), oldNumber.id)
      : (await org.createSipNumber({ body: numberBody })).id;
    return { credentialId, numberId, created: { credential: !oldCredential, number: !oldNumber } };
  } catch (err) {
    throw explained(err);
  }
}

/** Removes the number and the credentials; what cannot go (an agent still uses the number) is said, not failed on. */
export async function removeTrunk(org: Org, provisioned: Provisioned): Promise<string[]> {
  const left: string[] = [];
  try {
    await org.deleteSipNumber({ path: { sipNumberId: provisioned.numberId } });
  } catch (err) {
    left.push(`the number (${provisioned.numberId}): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (left.length === 0) {
    try {
      await org.deleteSipCredential({ path: { sipCredentialId: provisioned.credentialId } });
    } catch (err) {
      left.push(`the SIP credentials "${LAB_CREDENTIAL_NAME}" (${provisioned.credentialId}): ${err instanceof Error ? err.message : String(err)}`);
    }
  } else {
    left.push(`the SIP credentials "${LAB_CREDENTIAL_NAME}" (${provisioned.credentialId}), which carry it`);
  }
  return left;
}
