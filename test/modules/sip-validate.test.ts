import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A UDP socket of our own on loopback that counts what arrives (and never answers). */
async function udpTrap() {
  const sock = dgram.createSocket('udp4');
  let packets = 0;
  sock.on('message', () => (packets += 1));
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return { port: sock.address().port, packets: () => packets, close: () => new Promise<void>((r) => sock.close(() => r())) };
}

/** A loopback UDP port where nothing listens (bound, then released). */
async function silentUdpPort(): Promise<number> {
  const trap = await udpTrap();
  await trap.close();
  return trap.port;
}

let k: Kamailio;
before(async () => (k = await startKamailio()));
after(async () => k?.stop());

for (const dialect of DIALECTS) {
  describe(`SIP credentials validation against Kamailio (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let url: string;
    const body = (over: Record<string, unknown> = {}) => ({
      hostname: k.host, port: k.udpPort, username: k.username, password: k.password, maxAgentTasks: 1, ...over,
    });
    before(async () => {
      t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' }, { logLevel: 'debug' });
      a = await createTenant(t);
      url = `${a.orgPath}/sip/credentials/validate`;
    });
    after(() => t.close());

    it('the right password registers (UDP and TCP), leaves no binding and stores nothing', async () => {
      for (const over of [{}, { transport: 'tcp', port: k.tcpPort }]) {
        const res = await t.call('POST', url, { body: body(over) });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().success, true);
        assert.deepEqual(res.json().data, { successful: true, statusCode: 200, reason: 'OK' });
        assert.equal(await k.bindings(k.username), 0, 'the un-REGISTER removed the binding');
      }
      assert.equal((await t.call('GET', `${a.orgPath}/sip/credentials`)).json().totalElements, 0);
    });

    it('a wrong password is not successful, with the registrar status', async () => {
      const res = await t.call('POST', url, { body: body({ password: 'not-the-password' }) });
      assert.equal(res.statusCode, 200);
      const data = res.json().data;
      assert.equal(data.successful, false);
      assert.ok(data.statusCode === 401 || data.statusCode === 403, String(data.statusCode));
      assert.equal(data.reason, 'Forbidden');
      assert.equal(await k.bindings(k.username), 0);
    });

    it('the password appears in no response and no log line', async () => {
      const res = await t.call('POST', url, { body: body() });
      assert.equal(res.json().data.successful, true);
      const all = t.logs();
      assert.ok(all.includes('sip register: response'), 'the SIP exchange was logged at debug');
      assert.ok(!all.includes(k.password));
      assert.ok(!res.body.includes(k.password));
    });

    it('the body is exactly the SIP credentials plus transport', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [body({ port: 0 }), 'port'],
        [body({ port: 65536 }), 'port'],
        [body({ port: '5060' }), 'port'],
        [body({ maxAgentTasks: 0 }), 'maxAgentTasks'],
        [body({ transport: 'sctp' }), 'transport'],
        [body({ name: 'not here' }), 'name'],
        [body({ hostname: 'sip.example.com:5060' }), 'hostname'],
        [body({ hostname: 'sip://sip.example.com' }), 'hostname'],
        [body({ username: 'alice\r\nVia: x' }), 'username'],
        [body({ password: undefined }), 'password'],
      ];
      for (const [payload, path] of cases) {
        const res = await t.call('POST', url, { body: payload });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
        assert.ok(!res.body.includes(k.password));
      }
    });

    it('needs sip:write', async () => {
      const viewer = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'v', role: 'viewer' } });
      const res = await t.call('POST', url, { body: body(), token: viewer.json().data.token });
      assert.equal(res.statusCode, 403);
    });

    // Dialect-independent (no database work) and slow by nature, so it runs once.
    if (dialect === DIALECTS[0]) {
      it('a loopback port where something reads and never answers is a timeout, answered within 10 s', async () => {
        const silent = await udpTrap();
        try {
          const started = Date.now();
          const res = await t.call('POST', url, { body: body({ port: silent.port }) });
          const elapsed = Date.now() - started;
          assert.equal(res.statusCode, 200);
          assert.deepEqual(res.json().data, { successful: false, statusCode: null, reason: 'timeout' });
          assert.ok(elapsed < 10_000, `${elapsed} ms`);
        } finally {
          await silent.close();
        }
      });

      it('a loopback UDP port where nothing listens is answered at once: the ICMP port unreachable, not a timeout', async () => {
        const port = await silentUdpPort();
        const started = Date.now();
        const res = await t.call('POST', url, { body: body({ port }) });
        const elapsed = Date.now() - started;
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json().data, { successful: false, statusCode: null, reason: `connection refused by 127.0.0.1:${port} (ICMP port unreachable)` });
        assert.ok(elapsed < 4_000, `${elapsed} ms, far from the 8 s of a timeout`);
      });
    }
  });

  describe(`SIP credentials validation without PARLEY_EGRESS_ALLOW (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
    });
    after(() => t.close());

    it('refuses loopback with a 400 on hostname, and sends nothing', async () => {
      const trap = await udpTrap();
      try {
        const targets = [
          { hostname: k.host, port: k.udpPort },
          { hostname: '127.0.0.1', port: trap.port },
          { hostname: 'localhost', port: trap.port },
          { hostname: '[::ffff:127.0.0.1]', port: trap.port },
        ];
        for (const target of targets) {
          const res = await t.call('POST', `${a.orgPath}/sip/credentials/validate`, {
            body: { ...target, username: k.username, password: k.password, maxAgentTasks: 1 },
          });
          assert.equal(res.statusCode, 400, res.body);
          const error = res.json().error;
          assert.equal(error.code, 'VALIDATION_FAILED');
          const detail = error.details.find((d: { path: string }) => d.path === 'hostname');
          assert.ok(detail, res.body);
          assert.match(detail.message, /refused by the egress policy .*; nothing was sent/);
          // What the name resolved to stays in the log (test/security/secrets.test.ts checks it).
          if (target.hostname === 'localhost') assert.doesNotMatch(res.body, /127\.0\.0\.1|::1/);
        }
        const stored = await t.call('POST', `${a.orgPath}/sip/credentials`, {
          body: { name: 'Loopback', hostname: '127.0.0.1', port: trap.port, username: k.username, password: k.password },
        });
        assert.equal(stored.statusCode, 201, 'storing is not sending');
        const res = await t.call('POST', `${stored.headers.location as string}/validate`);
        assert.equal(res.statusCode, 400, res.body);
        assert.deepEqual(res.json().error.details.map((d: { path: string }) => d.path), ['hostname']);
        await sleep(300);
        assert.equal(trap.packets(), 0, 'no packet reached our listener');
        // The listener does count: one datagram of our own arrives.
        const probe = dgram.createSocket('udp4');
        await new Promise<void>((resolve, reject) => probe.send('probe', trap.port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
        probe.close();
        await sleep(100);
        assert.equal(trap.packets(), 1);
        assert.equal(await k.bindings(k.username), 0);
      } finally {
        await trap.close();
      }
    });
  });
}
