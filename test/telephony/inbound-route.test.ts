import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SipResolver } from '../../src/sip/resolve.ts';
import type { NumberTrunk, TelephonyDirectory } from '../../src/telephony/directory.ts';
import { numbersOf, routeInbound } from '../../src/telephony/inbound-route.ts';

describe('the numbers an INVITE user part may name', () => {
  it('reads E.164 with the plus, escaped or not, and bare international digits', () => {
    assert.deepEqual(numbersOf('+4930123456'), ['+4930123456']);
    assert.deepEqual(numbersOf('%2B4930123456'), ['+4930123456']);
    assert.deepEqual(numbersOf('4930123456'), ['+4930123456']);
    assert.deepEqual(numbersOf('+1 212-555-0100'), ['+12125550100']);
  });

  it('names no number for an account name, a short code, an empty user or none', () => {
    for (const user of ['alice', 'parley', '112', '', null]) assert.deepEqual(numbersOf(user), [], String(user));
  });
});

/** Names resolved from a table, as DNS would answer them; nothing leaves the process. */
const resolver = (names: Record<string, string>): SipResolver => ({
  resolveSrv: async () => [],
  lookup: async (name) => (names[name] ? [{ address: names[name], family: 4 }] : []),
});

/** A directory over fixed rows (oldest first), every number answered by an assistant of its organization. */
function directory(rows: NumberTrunk[]): TelephonyDirectory {
  return {
    numberTrunks: async (numbers) => rows.filter((r) => numbers.includes(r.number)),
    answerer: async (organizationId) => ({ kind: 'assistant', id: `assistant-of-${organizationId}` }),
    dialRoute: async () => null,
  };
}

const trunk = (organizationId: string, hostname: string, number = '+12125550300'): NumberTrunk =>
  ({ organizationId, number, credentialId: `cred-${organizationId}`, hostname, port: 5060, transport: 'udp', maxCalls: 1 });
const invite = (source: string, user = '+12125550300') =>
  ({ requestUri: `sip:${user}@parley.example`, to: { user }, source: { address: source, port: 5060 } }) as Parameters<typeof routeInbound>[1];

describe('routing an INVITE when organizations share a trunk address', () => {
  const names = resolver({ 'sbc.shared.example': '192.0.2.40', 'b-alias.example': '192.0.2.40', 'sip.other.example': '198.51.100.7' });

  it('two organizations claiming the number on trunks at the INVITE\'s address (names the API cannot compare): neither gets the call', async () => {
    // B came first under a name of its own for the SBC; A wrote the SBC's usual name.
    const route = await routeInbound(directory([trunk('org-b', 'b-alias.example'), trunk('org-a', 'sbc.shared.example')]), invite('192.0.2.40'), names);
    assert.equal(route, 'ambiguous');
  });

  it('the same number on trunks at other addresses: the INVITE\'s trunk decides, whoever came first', async () => {
    const rows = [trunk('org-b', 'sip.other.example'), trunk('org-a', 'sbc.shared.example')];
    const fromSbc = await routeInbound(directory(rows), invite('192.0.2.40'), names);
    assert.equal(typeof fromSbc === 'object' && fromSbc.organizationId, 'org-a');
    const fromOther = await routeInbound(directory(rows), invite('::ffff:198.51.100.7'), names);
    assert.equal(typeof fromOther === 'object' && fromOther.organizationId, 'org-b');
    assert.equal(await routeInbound(directory(rows), invite('203.0.113.9'), names), 'not_from_trunk');
  });
});
