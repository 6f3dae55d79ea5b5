import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResolveError, orderSrv, resolveTarget } from '../../src/sip/resolve.ts';
import type { AddressRecord, SipResolver, SrvRecord } from '../../src/sip/resolve.ts';

const notFound = (): Error => Object.assign(new Error('not found'), { code: 'ENOTFOUND' });

/** In-memory DNS that records every question, so tests can assert what was (not) asked. */
function fakeDns(srv: Record<string, SrvRecord[]>, hosts: Record<string, string[]>): SipResolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolveSrv(name) {
      asked.push(`SRV ${name}`);
      const found = srv[name];
      return found ? Promise.resolve(found) : Promise.reject(notFound());
    },
    lookup(host) {
      asked.push(`A ${host}`);
      const found = hosts[host];
      if (!found) return Promise.reject(notFound());
      return Promise.resolve(found.map((address): AddressRecord => ({ address, family: address.includes(':') ? 6 : 4 })));
    },
  };
}

describe('resolveTarget', () => {
  it('uses literal IPs as they are, on the transport default port', async () => {
    const dns = fakeDns({}, {});
    assert.deepEqual(await resolveTarget('192.0.2.7', null, 'udp', { resolver: dns }), [{ address: '192.0.2.7', port: 5060, family: 4 }]);
    assert.deepEqual(await resolveTarget('192.0.2.7', undefined, 'tls', { resolver: dns }), [{ address: '192.0.2.7', port: 5061, family: 4 }]);
    assert.deepEqual(await resolveTarget('[2001:db8::1]', 5080, 'tcp', { resolver: dns }), [{ address: '2001:db8::1', port: 5080, family: 6 }]);
    assert.deepEqual(await resolveTarget('::1', null, 'udp', { resolver: dns }), [{ address: '::1', port: 5060, family: 6 }]);
    assert.deepEqual(dns.asked, []);
  });

  it('rejects malformed hosts and ports without asking DNS', async () => {
    const dns = fakeDns({}, {});
    for (const host of ['[192.0.2.1]', '[nope]', 'a b.example', 'x'.repeat(300), '', 'host:5060', '-bad.example']) {
      await assert.rejects(resolveTarget(host, null, 'udp', { resolver: dns }), ResolveError, host);
    }
    await assert.rejects(resolveTarget('example.com', 70000, 'udp', { resolver: dns }), /invalid port/);
    assert.deepEqual(dns.asked, []);
  });

  it('skips SRV when a port is given: the port wins', async () => {
    const dns = fakeDns({ '_sip._udp.example.com': [{ name: 'srv.example.com', port: 5999, priority: 0, weight: 0 }] }, { 'example.com': ['192.0.2.1', '2001:db8::2'] });
    assert.deepEqual(await resolveTarget('example.com', 5070, 'udp', { resolver: dns }), [
      { address: '192.0.2.1', port: 5070, family: 4 },
      { address: '2001:db8::2', port: 5070, family: 6 },
    ]);
    assert.deepEqual(dns.asked, ['A example.com']);
  });

  it('queries the SRV name that matches the transport', async () => {
    for (const [transport, name] of [['udp', '_sip._udp.'], ['tcp', '_sip._tcp.'], ['tls', '_sips._tcp.']] as const) {
      const dns = fakeDns({ [`${name}example.com`]: [{ name: 'pbx.example.com', port: 7000, priority: 1, weight: 1 }] }, { 'pbx.example.com': ['192.0.2.9'] });
      assert.deepEqual(await resolveTarget('example.com', null, transport, { resolver: dns }), [{ address: '192.0.2.9', port: 7000, family: 4 }]);
      assert.deepEqual(dns.asked, [`SRV ${name}example.com`, 'A pbx.example.com']);
    }
  });

  it('orders SRV targets by priority, then weight', async () => {
    const dns = fakeDns(
      {
        '_sip._udp.example.com': [
          { name: 'backup.example.com', port: 5060, priority: 20, weight: 100 },
          { name: 'light.example.com', port: 5060, priority: 10, weight: 10 },
          { name: 'heavy.example.com.', port: 5062, priority: 10, weight: 90 },
        ],
      },
      { 'backup.example.com': ['192.0.2.3'], 'light.example.com': ['192.0.2.2'], 'heavy.example.com': ['192.0.2.1'] },
    );
    // random() = 0.5 picks inside the heavy record's share (10..100 of 100).
    const got = await resolveTarget('example.com', null, 'udp', { resolver: dns, random: () => 0.5 });
    assert.deepEqual(got.map((t) => `${t.address}:${t.port}`), ['192.0.2.1:5062', '192.0.2.2:5060', '192.0.2.3:5060']);
    const low = await resolveTarget('example.com', null, 'udp', { resolver: dns, random: () => 0.05 });
    assert.deepEqual(low.map((t) => t.address), ['192.0.2.2', '192.0.2.1', '192.0.2.3']);
  });

  it('picks by weight in proportion, zero weights last', () => {
    let seed = 42;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const records = [{ name: 'zero', port: 1, priority: 0, weight: 0 }, { name: 'a', port: 1, priority: 0, weight: 25 }, { name: 'b', port: 1, priority: 0, weight: 75 }];
    let bFirst = 0;
    for (let i = 0; i < 2000; i++) {
      const order = orderSrv(records, random).map((r) => r.name);
      assert.equal(order[2], 'zero');
      if (order[0] === 'b') bFirst++;
    }
    assert.ok(bFirst > 1350 && bFirst < 1650, `b first ${bFirst} of 2000`);
  });

  it('falls back to A/AAAA on the default port when there is no SRV', async () => {
    const dns = fakeDns({}, { 'example.com': ['192.0.2.5'] });
    assert.deepEqual(await resolveTarget('example.com', null, 'tls', { resolver: dns }), [{ address: '192.0.2.5', port: 5061, family: 4 }]);
    assert.deepEqual(dns.asked, ['SRV _sips._tcp.example.com', 'A example.com']);
  });

  it('fails clearly when nothing resolves', async () => {
    await assert.rejects(resolveTarget('nowhere.invalid', null, 'udp', { resolver: fakeDns({}, {}) }), /could not resolve host nowhere.invalid/);
    const deadSrv = fakeDns({ '_sip._udp.example.com': [{ name: 'gone.example.com', port: 5060, priority: 0, weight: 0 }] }, { 'example.com': ['192.0.2.1'] });
    await assert.rejects(resolveTarget('example.com', null, 'udp', { resolver: deadSrv }), /could not resolve host example.com/);
    const refused = fakeDns({ '_sip._udp.example.com': [{ name: '.', port: 0, priority: 0, weight: 0 }] }, { 'example.com': ['192.0.2.1'] });
    await assert.rejects(resolveTarget('example.com', null, 'udp', { resolver: refused }), /does not offer SIP over udp/);
  });

  it('drops bogus addresses from the resolver and duplicates', async () => {
    const dns = fakeDns({}, { 'example.com': ['192.0.2.1', 'not-an-ip', '192.0.2.1'] });
    assert.deepEqual(await resolveTarget('example.com', 5060, 'udp', { resolver: dns }), [{ address: '192.0.2.1', port: 5060, family: 4 }]);
  });
});
