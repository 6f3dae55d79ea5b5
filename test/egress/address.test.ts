import { test } from 'node:test';
import assert from 'node:assert/strict';
import { embeddedIPv4, formatIPv6, parseHostLiteral, parseIPv6Groups } from '../../src/egress/address.ts';

// Every spelling a resolver or URL parser would turn into the same host must
// normalise to one canonical address, or the policy could be bypassed.
const SPELLINGS: ReadonlyArray<readonly [string, 4 | 6, string]> = [
  ['127.0.0.1', 4, '127.0.0.1'],
  ['127.1', 4, '127.0.0.1'],
  ['127.0.1', 4, '127.0.0.1'],
  ['0x7f.1', 4, '127.0.0.1'],
  ['0X7F.0.0.1', 4, '127.0.0.1'],
  ['0177.0.0.1', 4, '127.0.0.1'],
  ['0177.1', 4, '127.0.0.1'],
  ['2130706433', 4, '127.0.0.1'],
  ['0x7f000001', 4, '127.0.0.1'],
  ['017700000001', 4, '127.0.0.1'],
  ['127.0.0.1.', 4, '127.0.0.1'],
  ['10.0x10.0100.1', 4, '10.16.64.1'],
  ['169.254.43518', 4, '169.254.169.254'],
  ['0', 4, '0.0.0.0'],
  ['0x', 4, '0.0.0.0'],
  ['4294967295', 4, '255.255.255.255'],
  ['::1', 6, '::1'],
  ['[::1]', 6, '::1'],
  ['[0:0:0:0:0:0:0:1]', 6, '::1'],
  ['0000:0000:0000:0000:0000:0000:0000:0001', 6, '::1'],
  ['[::ffff:127.0.0.1]', 6, '::ffff:7f00:1'],
  ['[::ffff:7f00:1]', 6, '::ffff:7f00:1'],
  ['::FFFF:7F00:0001', 6, '::ffff:7f00:1'],
  ['[FE80::1]', 6, 'fe80::1'],
  ['2001:DB8:0:0:1:0:0:1', 6, '2001:db8::1:0:0:1'],
  ['1:0:0:2:0:0:0:3', 6, '1:0:0:2::3'],
  ['1:2:3:4:5:6:7:8', 6, '1:2:3:4:5:6:7:8'],
  ['1::', 6, '1::'],
  ['::', 6, '::'],
];

void test('parseHostLiteral normalises every IPv4 and IPv6 spelling', () => {
  for (const [host, family, address] of SPELLINGS) {
    assert.deepEqual(parseHostLiteral(host), { family, address }, host);
  }
});

void test('zone ids are split off (including the %25 URL escape) and never part of the address', () => {
  assert.deepEqual(parseHostLiteral('fe80::1%eth0'), { family: 6, address: 'fe80::1', zone: 'eth0' });
  assert.deepEqual(parseHostLiteral('[fe80::1%25eth0]'), { family: 6, address: 'fe80::1', zone: 'eth0' });
  assert.deepEqual(parseHostLiteral('[fe80::1%2]'), { family: 6, address: 'fe80::1', zone: '2' });
  assert.equal(parseHostLiteral('fe80::1%'), null);
  assert.equal(parseHostLiteral('fe80::1%a b'), null);
});

void test('names and malformed literals are not IP literals', () => {
  // null means "resolve it as a name"; whatever it resolves to is judged afterwards.
  const notLiterals = [
    '', 'example.com', 'localhost', '1.2.3.4.5', '256.0.0.1', '1.2.3.256', '1.0x1000000',
    '4294967296', '08.0.0.1', '0x1g', '1..1', '.1', '-1', '+1', '1e3', ' 127.0.0.1',
    '[127.0.0.1]', '::1::', '1:2:3:4:5:6:7:8:9', '[::1', 'fe80::1%eth0%x', ':::',
  ];
  for (const host of notLiterals) assert.equal(parseHostLiteral(host), null, JSON.stringify(host));
});

void test('parseIPv6Groups expands, formatIPv6 compresses the first longest zero run', () => {
  assert.deepEqual(parseIPv6Groups('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  assert.deepEqual(parseIPv6Groups('1::8'), [1, 0, 0, 0, 0, 0, 0, 8]);
  assert.equal(parseIPv6Groups('fe80::1%eth0'), null);
  assert.equal(formatIPv6([1, 0, 0, 2, 0, 0, 3, 4]), '1::2:0:0:3:4');
  assert.equal(formatIPv6([1, 0, 2, 3, 4, 5, 6, 7]), '1:0:2:3:4:5:6:7'); // a single zero is not compressed
  assert.equal(formatIPv6([0, 0, 0, 0, 0, 0, 0, 0]), '::');
});

void test('embeddedIPv4 finds the IPv4 host of every transition format', () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ['::ffff:7f00:1', 'ipv4-mapped', '127.0.0.1'],
    ['::ffff:0:a00:1', 'ipv4-translated', '10.0.0.1'],
    ['::a9fe:a9fe', 'ipv4-compatible', '169.254.169.254'],
    ['64:ff9b::c0a8:101', 'nat64', '192.168.1.1'],
    ['64:ff9b::127.0.0.1', 'nat64', '127.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4', '169.254.169.254'],
    ['2002:7f00:1:5::', '6to4', '127.0.0.1'],
  ];
  for (const [address, kind, ipv4] of cases) assert.deepEqual(embeddedIPv4(address), { kind, ipv4 }, address);
  // :: and ::1 are IPv6's own unspecified/loopback, not IPv4-compatible 0.0.0.0/0.0.0.1.
  for (const plain of ['::', '::1', '2606:4700::1111', 'fe80::1', 'not-an-ip']) assert.equal(embeddedIPv4(plain), null, plain);
});

void test('IPv6 spellings ipaddr.js alone would accept but the socket layer refuses are names, not literals', () => {
  // ipaddr.js reads the dotted tail's "0177" as decimal 177; Node (and so the connection) refuses
  // the whole text. Judging it as 177.0.0.1 would judge an address nothing connects to.
  for (const host of ['::ffff:0177.0.0.1', '[::ffff:0x7f.0.0.1]', '::ffff:127.1']) {
    assert.equal(parseHostLiteral(host), null, host);
  }
});

void test('the WHATWG quirks ipaddr.js does not follow are still read as the URL parser reads them', () => {
  // new URL() connects these to 127.0.0.1 and 0.0.0.0: the policy must see the same.
  assert.equal(new URL('http://127.0.0.1./').hostname, '127.0.0.1');
  assert.equal(new URL('http://0x/').hostname, '0.0.0.0');
  assert.deepEqual(parseHostLiteral('0x7f.0.0.1.'), { family: 4, address: '127.0.0.1' });
  assert.deepEqual(parseHostLiteral('0x.0x.0x.0x'), { family: 4, address: '0.0.0.0' });
  assert.equal(parseHostLiteral('.'), null);
});
