import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAddress, parseAllowList } from '../../src/egress/policy.ts';
import { EgressError, resolveEgressTarget } from '../../src/egress/client.ts';

// Fake DNS: nothing here is ever contacted; resolveEgressTarget only judges.
const DNS: Record<string, string[]> = {
  'internal.example': ['127.0.0.1'],
  'mixed.example': ['93.184.216.34', '10.0.0.5'],
  'mixed6.example': ['2606:4700::1111', 'fd00::5'],
  'localhost': ['127.0.0.1', '::1'],
  'imds.example': ['::ffff:169.254.169.254'],
  'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
};
const lookups: string[] = [];
function lookup(hostname: string): Promise<{ address: string; family: number }[]> {
  lookups.push(hostname);
  const found = DNS[hostname];
  if (!found) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  return Promise.resolve(found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
}

// [url, category refused with an empty allow list, PARLEY_EGRESS_ALLOW value that names it]
const TABLE: ReadonlyArray<readonly [string, string, string]> = [
  ['http://127.0.0.1/', 'loopback', '127.0.0.0/8'],
  ['http://127.1/', 'loopback', '127.0.0.1'],
  ['http://0x7f.1/', 'loopback', '127.0.0.0/8'],
  ['http://0177.0.0.1/', 'loopback', '127.0.0.0/8'],
  ['http://2130706433/', 'loopback', '127.0.0.0/8'],
  ['https://0x7f000001:8443/', 'loopback', '127.0.0.0/8'],
  ['http://[::1]/', 'loopback', '::1'],
  ['http://[0:0:0:0:0:0:0:1]/', 'loopback', '::1/128'],
  ['http://[::ffff:127.0.0.1]/', 'loopback', '127.0.0.1'],
  ['http://[::ffff:7f00:1]/', 'loopback', '127.0.0.0/8'],
  ['http://[::127.0.0.1]/', 'loopback', '127.0.0.0/8'],
  ['http://10.1.2.3/', 'private', '10.0.0.0/8'],
  ['http://172.16.0.1/', 'private', '172.16.0.0/12'],
  ['http://172.31.255.255/', 'private', '172.16.0.0/12'],
  ['http://192.168.1.1/', 'private', '192.168.0.0/16'],
  ['http://0xc0.0xa8.1.1/', 'private', '192.168.1.1'],
  ['http://3232235777/', 'private', '192.168.0.0/16'],
  ['http://[fd12:3456::1]/', 'private', 'fc00::/7'],
  ['http://[64:ff9b::a00:1]/', 'private', '10.0.0.0/8'],
  ['http://100.64.0.1/', 'shared', '100.64.0.0/10'],
  ['http://169.254.1.1/', 'link-local', '169.254.0.0/16'],
  ['http://[fe80::1]/', 'link-local', 'fe80::/10'],
  ['http://169.254.169.254/latest/meta-data/', 'metadata', '169.254.169.254'],
  ['http://169.254.43518/', 'metadata', '169.254.169.254/32'],
  ['http://[::ffff:a9fe:a9fe]/', 'metadata', '169.254.169.254'],
  ['http://[2002:a9fe:a9fe::]/', 'metadata', '169.254.169.254'],
  ['http://169.254.170.2/v2/credentials', 'metadata', '169.254.170.2'],
  ['http://100.100.100.200/', 'metadata', '100.100.100.200/32'],
  ['http://[fd00:ec2::254]/', 'metadata', 'fd00:ec2::254'],
  ['http://0.0.0.0/', 'unspecified', '0.0.0.0/8'],
  ['http://0/', 'unspecified', '0.0.0.0'],
  ['http://[::]/', 'unspecified', '::/128'],
  ['http://224.0.0.1/', 'multicast', '224.0.0.0/4'],
  ['http://[ff02::1]/', 'multicast', 'ff00::/8'],
  ['http://255.255.255.255/', 'broadcast', '255.255.255.255'],
  ['http://192.0.0.8/', 'reserved', '192.0.0.0/24'],
  ['http://240.0.0.1/', 'reserved', '240.0.0.0/4'],
  ['http://192.0.2.10/', 'documentation', '192.0.2.0/24'],
  ['http://198.51.100.7/', 'documentation', '198.51.100.0/24'],
  ['http://203.0.113.9/', 'documentation', '203.0.113.0/24'],
  ['http://[2001:db8::1]/', 'documentation', '2001:db8::/32'],
  ['http://198.18.0.1/', 'benchmark', '198.18.0.0/15'],
  ['https://internal.example/hook', 'loopback', '127.0.0.0/8'],
  ['http://mixed.example/', 'private', '10.0.0.5'],
  ['http://mixed6.example/', 'private', 'fd00::/8'],
  ['http://localhost:8080/', 'loopback', '127.0.0.0/8, ::1'],
  ['http://imds.example/', 'metadata', '169.254.169.254'],
];

void test('every internal target is refused with an empty allow list, before any connection', async () => {
  assert.ok(TABLE.length >= 30);
  const empty = parseAllowList(undefined);
  for (const [url, category] of TABLE) {
    await assert.rejects(resolveEgressTarget(url, empty, lookup), (err: unknown) => {
      assert.ok(err instanceof EgressError, url);
      assert.equal(err.kind, 'refused_address', url);
      assert.equal(err.code, category, url);
      // The category and the address are for the log (detail); the message a tenant may read says only that the policy refused.
      assert.match(err.detail ?? '', new RegExp(` ${category}:`), url);
      assert.match(err.message, /refused by the egress policy$/, url);
      return true;
    });
  }
});

void test('every internal target is allowed when the allow list names it', async () => {
  for (const [url, , allow] of TABLE) {
    const target = await resolveEgressTarget(url, parseAllowList(allow), lookup);
    assert.ok(target.addresses.length > 0, url);
  }
});

void test('literal hosts are never sent to DNS; names are resolved once', async () => {
  lookups.length = 0;
  await resolveEgressTarget('http://0x7f.1/', parseAllowList('127.0.0.0/8'), lookup);
  await resolveEgressTarget('http://[::1]/', parseAllowList('::1'), lookup);
  assert.deepEqual(lookups, []);
  const target = await resolveEgressTarget('http://public.example/', parseAllowList(''), lookup);
  assert.deepEqual(lookups, ['public.example']);
  assert.deepEqual(target.addresses.map((a) => a.address), DNS['public.example']);
});

void test('naming some other range does not unlock a target', () => {
  assert.equal(checkAddress('127.0.0.1', parseAllowList('10.0.0.0/8')).allowed, false);
  assert.equal(checkAddress('::1', parseAllowList('127.0.0.0/8')).allowed, false);
  // Metadata needs the exact address: broad ranges must not expose cloud credentials.
  for (const broad of ['0.0.0.0/0', '169.254.0.0/16', '169.254.169.0/24']) {
    assert.equal(checkAddress('169.254.169.254', parseAllowList(broad)).allowed, false, broad);
    assert.equal(checkAddress('169.254.169.253', parseAllowList(broad)).allowed, true, broad);
  }
  assert.equal(checkAddress('fd00:ec2::254', parseAllowList('fc00::/7')).allowed, false);
});

void test('public addresses are allowed (judged only, never contacted)', () => {
  const empty = parseAllowList('');
  const publics = [
    '8.8.8.8', '1.1.1.1', '93.184.216.34', '11.0.0.1', '172.15.255.255', '172.32.0.1', '100.63.255.255',
    '100.128.0.1', '169.253.255.255', '192.169.0.1', '198.20.0.1', '223.255.255.255', '2606:4700:4700::1111',
    '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1',
  ];
  for (const ip of publics) assert.deepEqual(checkAddress(ip, empty), { allowed: true }, ip);
});

void test('non-public IPv6 outside the tables is still refused', () => {
  const empty = parseAllowList('');
  for (const ip of ['1::1', '4000::1', 'fec0::1', '100::1', '2001::1', '64:ff9b:1::1']) {
    assert.equal(checkAddress(ip, empty).allowed, false, ip);
  }
  assert.deepEqual(checkAddress('not-an-ip', empty).allowed, false);
});

void test('parseAllowList normalises entries and rejects bad CIDRs clearly', () => {
  assert.deepEqual(parseAllowList(' 10.0.0.0/8, ::1 ,, [fd00::]/8,192.168.1.5 ').entries, [
    '10.0.0.0/8', '::1/128', 'fd00::/8', '192.168.1.5/32',
  ]);
  assert.deepEqual(parseAllowList('').entries, []);
  for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/', '10/8', '127.1', '::1/129', 'fe80::1%eth0', '10.0.0.0/+8']) {
    assert.throws(() => parseAllowList(`127.0.0.0/8,${bad}`), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /PARLEY_EGRESS_ALLOW/);
      assert.ok(err.message.includes(bad));
      return true;
    });
  }
});
