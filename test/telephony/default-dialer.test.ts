// PARLEY_DIALER defaults to sip for parley serve. A default must not stop the API from
// starting: when the SIP port cannot be bound, serve warns and runs without SIP; an explicit
// PARLEY_DIALER=sip fails the start saying why. Both dialects: the app is built on each.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { buildTestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';

/** Holds a UDP port on 127.0.0.1 (what a softphone or another Parley on 5060 does). */
async function takenPort(): Promise<{ port: number; release(): Promise<void> }> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return { port: sock.address().port, release: () => new Promise((resolve) => sock.close(() => resolve())) };
}

describe('the default dialer', () => {
  it('is sip, and knows whether PARLEY_DIALER was given', () => {
    assert.deepEqual([loadConfig({}).dialer, loadConfig({}).dialerExplicit], ['sip', false]);
    assert.deepEqual([loadConfig({ PARLEY_DIALER: 'sip' }).dialer, loadConfig({ PARLEY_DIALER: 'sip' }).dialerExplicit], ['sip', true]);
    assert.equal(loadConfig({ PARLEY_DIALER: 'none' }).dialer, 'none');
  });

  for (const dialect of DIALECTS) {
    it(`serves with SIP on a free port and says so (${dialect})`, { timeout: 30_000 }, async () => {
      const t = await buildTestApp(dialect, { PARLEY_DIALER: '', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '23190-23199' }, { logLevel: 'info' });
      try {
        assert.match(t.logs(), /SIP dialer on udp and tcp 127\.0\.0\.1:\d+ .*RTP ports 23190-23199; PARLEY_DIALER=none turns it off/);
      } finally {
        await t.close();
      }
    });

    it(`warns and serves without SIP when the default cannot bind its port; an explicit sip fails the start (${dialect})`, { timeout: 30_000 }, async () => {
      const held = await takenPort();
      try {
        const t = await buildTestApp(dialect, { PARLEY_DIALER: '', PARLEY_SIP_PORT: String(held.port) });
        try {
          assert.match(t.logs(), new RegExp(`SIP dialer off: could not bind 127\\.0\\.0\\.1:${held.port} `));
          const health = await t.app.inject({ method: 'GET', url: '/healthz' });
          assert.equal(health.statusCode, 200, 'the API serves');
        } finally {
          await t.close();
        }
        await assert.rejects(buildTestApp(dialect, { PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: String(held.port) }),
          new RegExp(`PARLEY_DIALER=sip: the SIP endpoint could not bind 127\\.0\\.0\\.1:${held.port} .*PARLEY_DIALER=none`));
      } finally {
        await held.release();
      }
    });
  }
});
