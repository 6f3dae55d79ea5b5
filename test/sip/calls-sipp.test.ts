// placeCall against sipp phones on loopback (no proxy in between): each scenario is the
// far end, and sipp's exit code says whether it saw exactly what it expected.
import assert from 'node:assert/strict';
import type net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { applyAnswer, offerMedia } from '../../src/sip/call-media.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import { SipStreamFramer, serializeMessage } from '../../src/sip/message.ts';
import type { PlaceCallOptions } from '../../src/sip/outbound.ts';
import { RtpPortPool } from '../../src/sip/rtp/ports.ts';
import { buildOffer } from '../../src/sip/sdp.ts';
import { TLS_CERT, TLS_KEY } from '../fixtures/tls.ts';
import { freeTcpPort, freeUdpPort } from '../helpers/kamailio.ts';
import { reply } from '../helpers/raw-sip-peer.ts';
import { loopbackOnly, next, within } from '../helpers/sip-media.ts';
import { startSipp } from '../helpers/sipp.ts';
import type { Sipp } from '../helpers/sipp.ts';

const OFFER = buildOffer({ address: '127.0.0.1', port: 20398, sessionId: 1, sessionVersion: 1 });

describe('outbound calls against sipp', () => {
  let endpoint: SipEndpoint;
  const sipps: Sipp[] = [];
  const pool = new RtpPortPool({ min: 20300, max: 20349 }, '127.0.0.1');
  const call = (port: number, over: Partial<PlaceCallOptions> = {}): PlaceCallOptions => ({
    trunk: { hostname: '127.0.0.1', port, transport: 'udp', username: 'parley', password: 'trunk-secret' },
    target: '+15550001',
    from: '+15550002',
    sdpOffer: OFFER,
    ringTimeoutMs: 10_000,
    ...over,
  });
  const sipp = async (...args: Parameters<typeof startSipp>): Promise<Sipp> => {
    const s = await startSipp(...args);
    sipps.push(s);
    return s;
  };
  const passed = async (s: Sipp): Promise<void> => {
    const { code, log } = await within(s.done, 15_000, 'sipp');
    assert.equal(code, 0, log);
  };

  before(async () => {
    // A short T1 keeps the timeout cases quick; loopback needs no more.
    endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, timers: { t1: 50, t2: 400, t4: 500 } });
  });
  after(async () => {
    await Promise.all(sipps.map((s) => s.stop()));
    await endpoint?.close();
  });

  for (const [status, reason] of [[486, 'Busy Here'], [603, 'Decline']] as const) {
    it(`reports ${status} ${reason} as rejected, and ACKs it`, async () => {
      const s = await sipp({ scenario: 'uas-reject.xml', vars: { STATUS: String(status), REASON: reason } });
      const progress: number[] = [];
      const result = await endpoint.placeCall(call(s.port, { onProgress: (p) => progress.push(p.status) }));
      assert.deepEqual(result, { outcome: 'rejected', status, reason });
      assert.deepEqual(progress, [100]);
      await passed(s);
    });
  }

  it('CANCELs when the ring timeout passes (the phone sees the CANCEL)', async () => {
    const s = await sipp({ scenario: 'uas-ring.xml' });
    const ringing: number[] = [];
    const result = await endpoint.placeCall(call(s.port, { ringTimeoutMs: 400, onProgress: (p) => ringing.push(p.status) }));
    assert.deepEqual(result, { outcome: 'cancelled', by: 'ring-timeout', status: 487, reason: 'Request Terminated' });
    assert.deepEqual(ringing, [180]);
    await passed(s);
  });

  it('CANCELs when the AbortSignal fires while ringing', async () => {
    const s = await sipp({ scenario: 'uas-ring.xml' });
    const abort = new AbortController();
    const result = await endpoint.placeCall(call(s.port, { signal: abort.signal, onProgress: (p) => p.status === 180 && abort.abort() }));
    assert.deepEqual(result, { outcome: 'cancelled', by: 'signal', status: 487, reason: 'Request Terminated' });
    await passed(s);
  });

  it('answers a 401 digest challenge once (sipp verifies the digest), then hangs up on abort', async () => {
    const s = await sipp({ scenario: 'uas-auth.xml', keys: { auth_user: 'parley', auth_password: 'trunk-secret' } });
    const abort = new AbortController();
    const result = await endpoint.placeCall(call(s.port, { signal: abort.signal }));
    assert.equal(result.outcome, 'answered');
    assert.match(result.remoteSdp, /m=audio \d+ RTP\/AVP 0/);
    abort.abort(); // after the answer, aborting sends BYE
    assert.deepEqual(await within(result.dialog.ended, 5000, 'dialog end'), { by: 'local', reason: 'hangup' });
    await passed(s);
  });

  it('does not retry a refused digest: a wrong password ends in the final answer', async () => {
    const s = await sipp({ scenario: 'uas-auth.xml', keys: { auth_user: 'parley', auth_password: 'another-secret' } });
    const result = await endpoint.placeCall(call(s.port));
    assert.deepEqual(result, { outcome: 'rejected', status: 403, reason: 'Forbidden' });
  });

  it('starts early media on a 183, answers a hold re-INVITE and OPTIONS in the dialog, and sees the BYE', async () => {
    const s = await sipp({ scenario: 'uas-hold.xml' });
    const { session, sdp } = await offerMedia({ pool, mediaAddress: '127.0.0.1', allowAddress: loopbackOnly, playout: 'manual' });
    try {
      const early: string[] = [];
      const result = await endpoint.placeCall(call(s.port, {
        sdpOffer: sdp,
        onProgress: (p) => {
          if (p.sdp) early.push(applyAnswer(session, p.sdp).codec);
        },
      }));
      assert.equal(result.outcome, 'answered');
      assert.deepEqual(early, ['PCMA'], 'the 183 SDP chose PCMA and media started then');
      assert.equal(session.send(Buffer.alloc(160, 0xd5)), true);
      const [held] = await next<[{ negotiated: { direction: string } | null }]>(result.dialog, 'sdp');
      assert.equal(held.negotiated?.direction, 'recvonly', 'the peer went sendonly, so we only receive');
      assert.deepEqual(await within(result.dialog.ended, 5000, 'BYE'), { by: 'remote', reason: 'BYE' });
      await passed(s);
    } finally {
      session.close();
    }
  });

  it('fails with a transport error when the trunk refuses the TCP connection', async () => {
    const port = await freeTcpPort(); // nothing listens there any more
    const result = await endpoint.placeCall({ ...call(port), trunk: { ...call(port).trunk, transport: 'tcp' } });
    assert.equal(result.outcome, 'failed');
    assert.equal(result.outcome === 'failed' && result.reason, 'transport');
    assert.match(result.outcome === 'failed' ? result.message : '', /connection refused by 127\.0\.0\.1/);
  });

  it('fails with a timeout when nothing answers over UDP (Timer B)', async () => {
    const port = await freeUdpPort();
    const quick = await SipEndpoint.start({ host: '127.0.0.1', port: 0, timers: { t1: 10 } });
    try {
      const started = Date.now();
      const result = await quick.placeCall(call(port));
      assert.deepEqual(result, { outcome: 'failed', reason: 'timeout', message: 'no answer from the trunk' });
      assert.ok(Date.now() - started >= 64 * 10, 'not before Timer B');
    } finally {
      await quick.close();
    }
  });

  it('places a call over TLS, verifying the trunk certificate', async () => {
    const seen: string[] = [];
    const server = tls.createServer({ key: TLS_KEY, cert: TLS_CERT }, (sock) => {
      const framer = new SipStreamFramer();
      sock.on('data', (chunk: Buffer) => {
        for (const msg of framer.push(chunk)) {
          if (msg.kind !== 'request') continue;
          seen.push(`${msg.method} ${/SIP\/2\.0\/(\w+)/.exec(msg.headers.get('Via') ?? '')?.[1] ?? ''}`);
          if (msg.method === 'INVITE') sock.write(serializeMessage(reply(msg, 486, 'Busy Here', { toTag: 'tls' })));
        }
      });
      sock.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const trusting = await SipEndpoint.start({ host: '127.0.0.1', port: 0, tls: { ca: TLS_CERT } });
    try {
      const tlsCall = (ep: SipEndpoint) => ep.placeCall({ ...call(port), trunk: { ...call(port).trunk, transport: 'tls' } });
      assert.deepEqual(await tlsCall(trusting), { outcome: 'rejected', status: 486, reason: 'Busy Here' });
      await within((async () => {
        while (!seen.includes('ACK TLS')) await new Promise((r) => setTimeout(r, 5));
      })(), 5000, 'the ACK over TLS');
      assert.deepEqual(seen, ['INVITE TLS', 'ACK TLS']);
      const result = await tlsCall(endpoint); // no private CA: the self-signed certificate is refused
      assert.equal(result.outcome, 'failed');
      assert.match(result.outcome === 'failed' ? `${result.reason}: ${result.message}` : '', /^transport: .*self-signed certificate/);
    } finally {
      await trusting.close();
      server.close();
    }
  });

  it('refuses a trunk the egress policy forbids, before sending anything', async () => {
    const strict = await SipEndpoint.start({ host: '127.0.0.1', port: 0, policy: { checkAddress: () => ({ allowed: false, reason: 'loopback' }) } });
    try {
      const result = await strict.placeCall(call(5060));
      assert.deepEqual(result, { outcome: 'failed', reason: 'egress-refused', message: 'refusing to contact 127.0.0.1: loopback' });
    } finally {
      await strict.close();
    }
  });
});
