import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { parseAuthChallenges } from '../../src/sip/digest.ts';
import { SipHeaders, SipStreamFramer, parseMessage, serializeMessage } from '../../src/sip/message.ts';
import type { SipRequest, SipResponse } from '../../src/sip/message.ts';
import { DEFAULT_REGISTER_TIMEOUT_MS, EgressRefusedError, registerCheck } from '../../src/sip/register.ts';
import type { RegisterCheckInput } from '../../src/sip/register.ts';
import type { SipResolver } from '../../src/sip/resolve.ts';
import { TLS_CERT, TLS_KEY } from '../fixtures/tls.ts';
import { startKamailio } from '../helpers/kamailio.ts';
import type { Kamailio } from '../helpers/kamailio.ts';

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Every name resolves to the given loopback addresses; nothing touches real DNS. */
const resolverFor = (...addresses: string[]): SipResolver => ({
  resolveSrv: () => Promise.reject(Object.assign(new Error('none'), { code: 'ENODATA' })),
  lookup: () => Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))),
});

function reply(req: SipRequest, status: number, reason: string, extra: Record<string, string> = {}): SipResponse {
  const headers = new SipHeaders();
  for (const v of req.headers.getAll('Via')) headers.append('Via', v);
  for (const name of ['From', 'Call-ID', 'CSeq']) headers.append(name, req.headers.get(name) ?? '');
  headers.append('To', `${req.headers.get('To') ?? ''};tag=fake`);
  for (const [k, v] of Object.entries(extra)) headers.append(k, v);
  return { kind: 'response', status, reason, headers, body: Buffer.alloc(0) };
}

/** A UDP socket we own that records what arrives and answers as `script` says. */
async function udpRegistrar(host: string, port: number, script: (req: SipRequest, n: number, send: (r: SipResponse) => void) => void = () => undefined) {
  const sock = dgram.createSocket('udp4');
  const seen: Array<{ req: SipRequest; raw: string; at: number }> = [];
  sock.on('message', (buf, from) => {
    const req = parseMessage(buf) as SipRequest;
    seen.push({ req, raw: buf.toString(), at: Date.now() });
    script(req, seen.length, (res) => sock.send(serializeMessage(res), from.port, from.address));
  });
  await new Promise<void>((resolve) => sock.bind(port, host, resolve));
  return { port: sock.address().port, seen, close: () => new Promise<void>((r) => sock.close(() => r())) };
}

describe('registerCheck against Kamailio', () => {
  let k: Kamailio;
  const input = (over: Partial<RegisterCheckInput>): RegisterCheckInput => ({ hostname: k.host, port: k.udpPort, transport: 'udp', username: k.username, password: k.password, ...over });
  before(async () => (k = await startKamailio()));
  after(async () => k?.stop());

  it('succeeds over UDP, leaves no binding and never logs the password', async () => {
    const logged: string[] = [];
    const result = await registerCheck(input({}), { log: { debug: (obj, msg) => logged.push(JSON.stringify([obj, msg])) } });
    assert.deepEqual(result, { successful: true, statusCode: 200, reason: 'OK' });
    assert.equal(await k.bindings(k.username), 0);
    assert.ok(logged.length > 3);
    assert.ok(!logged.join('\n').includes(k.password));
  });

  it('succeeds over TCP and leaves no binding', async () => {
    assert.deepEqual(await registerCheck(input({ port: k.tcpPort, transport: 'tcp' })), { successful: true, statusCode: 200, reason: 'OK' });
    assert.equal(await k.bindings(k.username), 0);
  });

  it('reports a wrong password with the registrar code', async () => {
    for (const transport of ['udp', 'tcp'] as const) {
      const result = await registerCheck(input({ transport, port: transport === 'udp' ? k.udpPort : k.tcpPort, password: 'wrong' }));
      assert.equal(result.successful, false);
      assert.ok(result.statusCode === 401 || result.statusCode === 403, String(result.statusCode));
      assert.equal(result.reason, 'Forbidden');
    }
  });

  it('checks every address before sending and sends nothing when all are refused', async () => {
    const trap = await udpRegistrar('127.0.0.1', 0);
    const asked: string[] = [];
    const checkAddress = (ip: string) => (asked.push(ip), { allowed: false as const, reason: 'loopback is private' });
    try {
      await assert.rejects(
        registerCheck(input({ hostname: 'registrar.test', port: trap.port }), { resolver: resolverFor('127.0.0.1', '::1'), checkAddress }),
        (err: unknown) => err instanceof EgressRefusedError && err.address === '127.0.0.1' && err.reason === 'loopback is private',
      );
      await assert.rejects(registerCheck(input({}), { checkAddress }), EgressRefusedError);
      await sleep(200);
      assert.deepEqual(asked, ['127.0.0.1', '::1', '127.0.0.1']);
      assert.equal(trap.seen.length, 0);
      assert.equal(await k.bindings(k.username), 0);
    } finally {
      await trap.close();
    }
  });

  it('skips refused addresses and uses the allowed ones', async () => {
    const trap = await udpRegistrar('127.0.0.2', k.udpPort);
    try {
      const checkAddress = (ip: string) => (ip === '127.0.0.2' ? { allowed: false as const, reason: 'no' } : { allowed: true as const });
      const result = await registerCheck(input({ hostname: 'registrar.test' }), { resolver: resolverFor('127.0.0.2', '127.0.0.1'), checkAddress });
      assert.equal(result.successful, true);
      assert.equal(trap.seen.length, 0);
    } finally {
      await trap.close();
    }
  });
});

describe('registerCheck against Kamailio using SHA-256 digests', () => {
  let k: Kamailio;
  before(async () => (k = await startKamailio({ algorithm: 'SHA-256' })));
  after(async () => k?.stop());

  it('answers a SHA-256 challenge', async () => {
    const result = await registerCheck({ hostname: k.host, port: k.udpPort, transport: 'udp', username: k.username, password: k.password });
    assert.deepEqual(result, { successful: true, statusCode: 200, reason: 'OK' });
    assert.equal(await k.bindings(k.username), 0);
  });
});

describe('registerCheck without a working registrar', () => {
  it('times out where a registrar reads and never answers, within the given budget', async () => {
    assert.equal(DEFAULT_REGISTER_TIMEOUT_MS, 10_000);
    const silent = await udpRegistrar('127.0.0.1', 0);
    try {
      const started = Date.now();
      const result = await registerCheck({ hostname: '127.0.0.1', port: silent.port, transport: 'udp', username: 'a', password: 'b', timeoutMs: 3000 });
      const elapsed = Date.now() - started;
      assert.deepEqual(result, { successful: false, statusCode: null, reason: 'timeout' });
      assert.ok(elapsed >= 2900 && elapsed < 10_000, `${elapsed} ms`);
      assert.ok(silent.seen.length >= 3, 'the REGISTER was retransmitted meanwhile');
    } finally {
      await silent.close();
    }
  });

  it('answers at once where nothing listens on UDP: the port unreachable of a connected socket', async () => {
    const closed = await udpRegistrar('127.0.0.1', 0);
    await closed.close(); // the port is now free: the kernel answers the REGISTER with ICMP port unreachable
    const started = performance.now();
    const result = await registerCheck({ hostname: '127.0.0.1', port: closed.port, transport: 'udp', username: 'a', password: 'b' });
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { successful: false, statusCode: null, reason: `connection refused by 127.0.0.1:${closed.port} (ICMP port unreachable)` });
    // ICMP comes back in a millisecond on loopback; the bound leaves a busy machine seconds, and is far from the 8 s a timeout takes.
    assert.ok(elapsed < 4000, `${elapsed} ms`);
  });

  it('reports a refused TCP connection', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const result = await registerCheck({ hostname: '127.0.0.1', port, transport: 'tcp', username: 'a', password: 'b', timeoutMs: 3000 });
    assert.equal(result.successful, false);
    assert.equal(result.statusCode, null);
    assert.match(result.reason, /connection refused/);
  });

  it('reports a name that does not resolve, and bad input', async () => {
    const nx: SipResolver = { resolveSrv: () => Promise.reject(new Error('x')), lookup: () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' })) };
    const base = { port: null, transport: 'udp', username: 'a', password: 'b' } as const;
    assert.deepEqual(await registerCheck({ ...base, hostname: 'nope.invalid' }, { resolver: nx }), { successful: false, statusCode: null, reason: 'could not resolve host nope.invalid' });
    assert.equal((await registerCheck({ ...base, hostname: '127.0.0.1', username: 'a\r\nVia: x' })).reason, 'invalid username');
  });
});

describe('registerCheck wire behaviour (scripted registrar)', () => {
  it('retransmits over UDP from T1, doubling, and stops on an answer', async () => {
    const reg = await udpRegistrar('127.0.0.1', 0, (req, n, send) => {
      if (n >= 3) send(reply(req, 200, 'OK'));
    });
    try {
      const result = await registerCheck({ hostname: '127.0.0.1', port: reg.port, transport: 'udp', username: 'a', password: 'b' }, { timers: { t1: 80, t2: 4000 } });
      assert.equal(result.successful, true);
      const [a, b, c] = reg.seen;
      assert.ok(a && b && c);
      assert.equal(a.raw, b.raw, 'a retransmission is the same request');
      const [gap1, gap2] = [b.at - a.at, c.at - b.at];
      // Timers never fire early, but a loaded machine delays when each datagram is read here,
      // so only generous lower bounds hold without luck (nominal: 80 and 160 ms).
      assert.ok(gap1 >= 50 && gap2 >= 120, `gaps ${gap1} ${gap2}`);
      assert.equal(reg.seen.at(-1)?.req.headers.get('Expires'), '0');
    } finally {
      await reg.close();
    }
  });

  it('keeps waiting after a 1xx and retransmits only at T2', async () => {
    let provisionalAt = 0;
    const reg = await udpRegistrar('127.0.0.1', 0, (req, n, send) => {
      if (n > 1 && req.headers.get('Expires') !== '0') return; // a copy that crossed the 100
      send(reply(req, 100, 'Trying'));
      provisionalAt ||= Date.now();
      setTimeout(() => send(reply(req, 200, 'OK')), 400);
    });
    try {
      const result = await registerCheck({ hostname: '127.0.0.1', port: reg.port, transport: 'udp', username: 'a', password: 'b' }, { timers: { t1: 50, t2: 4000 } });
      assert.deepEqual(result, { successful: true, statusCode: 200, reason: 'OK' });
      // Once the 100 has had time to arrive (a loaded machine may send one copy across it),
      // nothing is retransmitted until T2: only the un-REGISTER follows.
      const later = new Map(reg.seen.filter((s) => s.at > provisionalAt + 100).map((s) => [s.raw, s.req.headers.get('Expires')]));
      assert.deepEqual([...later.values()], ['0'], 'no retransmissions after the 1xx');
    } finally {
      await reg.close();
    }
  });

  describe('over TLS', () => {
    let server: tls.Server;
    let port = 0;
    const seen: SipRequest[] = [];
    before(async () => {
      server = tls.createServer({ key: TLS_KEY, cert: TLS_CERT }, (sock) => {
        const framer = new SipStreamFramer();
        sock.on('error', () => undefined);
        sock.on('data', (chunk: Buffer) => {
          for (const m of framer.push(chunk)) {
            const req = m as SipRequest;
            seen.push(req);
            const auth = req.headers.get('Authorization');
            const p = auth ? parseAuthChallenges(auth)[0]?.params : undefined;
            const expected = p && md5(`${md5('alice:registrar.test:s3cret')}:n1:${p.get('nc')}:${p.get('cnonce')}:auth:${md5(`REGISTER:${p.get('uri')}`)}`);
            const res = p && p.get('response') === expected ? reply(req, 200, 'OK') : reply(req, 401, 'Unauthorized', { 'WWW-Authenticate': 'Digest realm="registrar.test", nonce="n1", qop="auth"' });
            sock.write(serializeMessage(res));
          }
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as net.AddressInfo).port;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));
    const check = (hostname: string, ca?: string) =>
      registerCheck({ hostname, port, transport: 'tls', username: 'alice', password: 's3cret', timeoutMs: 3000 }, { resolver: resolverFor('127.0.0.1'), ...(ca ? { tls: { ca } } : {}) });

    it('rejects an untrusted certificate by default', async () => {
      const result = await check('registrar.test');
      assert.equal(result.successful, false);
      assert.match(result.reason, /self-signed certificate/);
    });

    it('rejects a certificate for another name', async () => {
      assert.match((await check('other.test', TLS_CERT)).reason, /does not match certificate's altnames/);
    });

    it('registers, answers the challenge and unregisters the same contact', async () => {
      seen.length = 0;
      assert.deepEqual(await check('registrar.test', TLS_CERT), { successful: true, statusCode: 200, reason: 'OK' });
      assert.equal(seen.length, 3, 'challenge, authenticated REGISTER, un-REGISTER reusing the nonce');
      const h = (i: number, name: string): string => seen[i]?.headers.get(name) ?? '';
      assert.deepEqual(seen.map((_, i) => h(i, 'CSeq')), ['1 REGISTER', '2 REGISTER', '3 REGISTER']);
      assert.deepEqual(seen.map((_, i) => h(i, 'Expires')), ['60', '60', '0']);
      assert.equal(new Set(seen.map((_, i) => h(i, 'Call-ID'))).size, 1);
      assert.equal(new Set(seen.map((_, i) => h(i, 'Contact'))).size, 1);
      assert.equal(new Set(seen.map((_, i) => /branch=(z9hG4bK\w+)/.exec(h(i, 'Via'))?.[1])).size, 3);
      assert.match(h(0, 'Via'), /^SIP\/2\.0\/TLS 127\.0\.0\.1:\d+;branch=z9hG4bK\w+;rport$/);
      assert.match(h(0, 'Contact'), /^<sip:alice@127\.0\.0\.1:\d+;transport=tls>$/);
      assert.equal(h(0, 'To'), '<sip:alice@registrar.test>');
      assert.match(h(0, 'From'), /^<sip:alice@registrar\.test>;tag=\w+$/);
      assert.equal(h(0, 'Max-Forwards'), '70');
      assert.equal(h(0, 'User-Agent'), 'Parley');
      assert.equal(seen[0]?.uri, `sip:registrar.test:${port};transport=tls`);
      assert.equal(h(0, 'Authorization'), '');
      assert.match(h(1, 'Authorization'), /nc=00000001/);
      assert.match(h(2, 'Authorization'), /nc=00000002/);
    });
  });
});
