// RFC 3261 §17 timers and retransmissions, seen from a raw UDP peer that records every
// copy. Timers never fire early, so gaps are checked against their lower bounds only.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import type { IncomingCall } from '../../src/sip/inbound.ts';
import { SipHeaders } from '../../src/sip/message.ts';
import type { SipMessage, SipRequest } from '../../src/sip/message.ts';
import { newRequest } from '../../src/sip/requests.ts';
import { buildOffer } from '../../src/sip/sdp.ts';
import { RequestFailedError } from '../../src/sip/transaction/layer.ts';
import { isRequest, isResponse, rawPeer, reply, request } from '../helpers/raw-sip-peer.ts';
import type { RawPeer } from '../helpers/raw-sip-peer.ts';
import { within } from '../helpers/sip-media.ts';

const T = { t1: 20, t2: 160, t4: 200 };
const SDP = buildOffer({ address: '127.0.0.1', port: 20398, sessionId: 7, sessionVersion: 1 });
const gaps = (times: number[]): number[] => times.slice(1).map((t, i) => t - (times[i] ?? 0));
const branchOf = (m: { headers: { get(n: string): string | undefined } }): string => /branch=([^;,\s]+)/.exec(m.headers.get('Via') ?? '')?.[1] ?? '';

describe('SIP transactions', () => {
  let endpoint: SipEndpoint;
  let peer: RawPeer;
  const trunk = () => ({ hostname: '127.0.0.1', port: peer.port, transport: 'udp' as const, username: 'u', password: 'p' });
  const invitesTo = (callId?: string) => (m: Parameters<ReturnType<typeof isRequest>>[0]): boolean => isRequest('INVITE')(m) && (callId === undefined || m.headers.get('Call-ID') === callId);

  // When each message left: measured at the sender, so the peer's event loop adds no noise.
  const sent: Array<{ msg: SipMessage; at: number }> = [];
  const sentAt = (match: (m: SipMessage) => boolean): number[] => sent.filter((s) => match(s.msg)).map((s) => s.at);
  before(async () => {
    endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, timers: T });
    const send = endpoint.send.bind(endpoint);
    endpoint.send = (msg, hop) => {
      sent.push({ msg, at: performance.now() });
      return send(msg, hop);
    };
  });
  after(async () => endpoint?.close());

  beforeEach(async () => {
    peer = await rawPeer();
    sent.length = 0;
  });
  afterEach(async () => {
    endpoint.onInvite(null);
    await peer.close();
  });

  describe('INVITE client', () => {
    it('retransmits at T1, 2T1, 4T1 until a provisional arrives, then waits (ring timeout CANCELs)', async () => {
      let ringingAt = Infinity;
      const pending = endpoint.placeCall({ trunk: trunk(), target: '+15550001', from: '+15550002', sdpOffer: SDP, ringTimeoutMs: 300, onProgress: () => (ringingAt = performance.now()) });
      const copies = await peer.waitFor(invitesTo(), 3);
      const invite = copies[0]?.msg as SipRequest;
      const callId = invite.headers.get('Call-ID');
      const [g1 = 0, g2 = 0] = gaps(sentAt(invitesTo(callId ?? '')));
      assert.ok(g1 >= T.t1 - 1 && g2 >= 2 * T.t1 - 1, `gaps ${g1}, ${g2}`);
      peer.send(reply(invite, 180, 'Ringing', { toTag: 'ring' }), endpoint.port);
      const [cancel] = await peer.waitFor(isRequest('CANCEL'));
      // Once the 180 is in, Timer A is off: it would have fired at least once more before the CANCEL.
      const whileRinging = sentAt(invitesTo(callId ?? '')).filter((t) => t > ringingAt).length;
      assert.equal(whileRinging, 0, 'INVITE copies while ringing: Timer A did not stop');
      const cancelReq = cancel?.msg as SipRequest;
      assert.equal(branchOf(cancelReq), branchOf(invite), 'CANCEL has the INVITE branch');
      assert.match(cancelReq.headers.get('CSeq') ?? '', /^\d+ CANCEL$/);
      peer.send(reply(cancelReq, 200, 'OK', { toTag: 'ring' }), endpoint.port);
      peer.send(reply(invite, 487, 'Request Terminated', { toTag: 'ring' }), endpoint.port);
      const [ack] = await peer.waitFor(isRequest('ACK'));
      assert.equal(branchOf(ack?.msg as SipRequest), branchOf(invite), 'the ACK of a non-2xx belongs to the INVITE transaction');
      assert.match((ack?.msg as SipRequest).headers.get('To') ?? '', /tag=ring/);
      assert.deepEqual(await pending, { outcome: 'cancelled', by: 'ring-timeout', status: 487, reason: 'Request Terminated' });
    });

    it('ACKs a non-2xx final response, and again when it is retransmitted', async () => {
      const pending = endpoint.placeCall({ trunk: trunk(), target: '+15550003', from: '+15550002', sdpOffer: SDP, ringTimeoutMs: 5000 });
      const [first] = await peer.waitFor(invitesTo(), 1);
      const invite = first?.msg as SipRequest;
      const busy = reply(invite, 486, 'Busy Here', { toTag: 'busy' });
      peer.send(busy, endpoint.port);
      assert.deepEqual(await pending, { outcome: 'rejected', status: 486, reason: 'Busy Here' });
      peer.send(busy, endpoint.port);
      const acks = await peer.waitFor((m) => isRequest('ACK')(m) && m.headers.get('Call-ID') === invite.headers.get('Call-ID'), 2);
      assert.equal(acks.length, 2);
    });

    it('re-sends the ACK when a 2xx is retransmitted, and ACKs and hangs up a second (forked) 2xx', async () => {
      const pending = endpoint.placeCall({ trunk: trunk(), target: '+15550004', from: '+15550002', sdpOffer: SDP, ringTimeoutMs: 5000 });
      const invite = (await peer.waitFor(invitesTo(), 1)).at(-1)?.msg as SipRequest;
      const callId = invite.headers.get('Call-ID');
      const ok = reply(invite, 200, 'OK', { toTag: 'leg1', headers: { Contact: `<sip:phone@127.0.0.1:${peer.port}>` }, body: SDP });
      peer.send(ok, endpoint.port);
      const result = await pending;
      assert.equal(result.outcome, 'answered');
      peer.send(ok, endpoint.port);
      const acks = await peer.waitFor((m) => isRequest('ACK')(m) && m.headers.get('Call-ID') === callId, 2);
      assert.equal(branchOf(acks[0]?.msg as SipRequest), branchOf(acks[1]?.msg as SipRequest), 'the same ACK again');
      assert.notEqual(branchOf(acks[0]?.msg as SipRequest), branchOf(invite), 'a 2xx ACK is a transaction of its own');
      peer.send(reply(invite, 200, 'OK', { toTag: 'leg2', headers: { Contact: `<sip:other@127.0.0.1:${peer.port}>` }, body: SDP }), endpoint.port);
      const [bye] = await peer.waitFor((m) => isRequest('BYE')(m) && /tag=leg2/.test(m.headers.get('To') ?? ''));
      peer.send(reply(bye?.msg as SipRequest, 200, 'OK'), endpoint.port);
      assert.equal(result.outcome === 'answered' && result.dialog.state, 'confirmed', 'the first leg stays up');
      if (result.outcome === 'answered') {
        const hangup = result.dialog.bye();
        const [ours] = await peer.waitFor((m) => isRequest('BYE')(m) && /tag=leg1/.test(m.headers.get('To') ?? ''));
        peer.send(reply(ours?.msg as SipRequest, 200, 'OK'), endpoint.port);
        await hangup;
      }
    });
  });

  describe('non-INVITE client', () => {
    it('retransmits with doubling gaps capped at T2, and gives up at Timer F', async () => {
      const hop = { transport: 'udp' as const, address: '127.0.0.1', port: peer.port };
      const req = endpoint.stamp(newRequest('OPTIONS', `sip:127.0.0.1:${peer.port}`, [['From', '<sip:parley@127.0.0.1>;tag=1'], ['To', `<sip:127.0.0.1:${peer.port}>`], ['Call-ID', 'timer-f@test'], ['CSeq', '1 OPTIONS']]), hop);
      const started = performance.now();
      await assert.rejects(endpoint.transactions.request(req, hop), (e: unknown) => e instanceof RequestFailedError && e.reason === 'timeout');
      assert.ok(performance.now() - started >= 64 * T.t1 - 1, 'not before Timer F');
      const times = sentAt((m) => m.headers.get('Call-ID') === 'timer-f@test');
      const g = gaps(times);
      assert.ok(times.length >= 6, `${times.length} copies`);
      const expected = [20, 40, 80, 160, 160];
      expected.forEach((min, i) => assert.ok((g[i] ?? 0) >= min - 1, `gap ${i} was ${g[i]} < ${min}`));
    });
  });

  describe('INVITE server', () => {    const invite = (callId: string): SipRequest => request('INVITE', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, {
      From: `<sip:caller@127.0.0.1:${peer.port}>;tag=c1`, To: `<sip:parley@127.0.0.1:${endpoint.port}>`, 'Call-ID': callId, CSeq: '1 INVITE', Contact: `<sip:caller@127.0.0.1:${peer.port}>`,
    }, SDP);

    it('sends 100 Trying at once and repeats its 200 until the ACK; without one, hangs up (Timer L)', async () => {
      const calls: IncomingCall[] = [];
      endpoint.onInvite((call) => {
        calls.push(call);
        const dialog = call.answer(SDP);
        dialog.on('ended', () => undefined);
      });
      const req = invite('no-ack@test');
      peer.send(req, endpoint.port);
      await peer.waitFor(isResponse(100, 'INVITE'));
      await peer.waitFor(isResponse(200, 'INVITE'), 5, 3000);
      const g = gaps(sentAt(isResponse(200, 'INVITE')));
      [20, 40, 80, 160].forEach((min, i) => assert.ok((g[i] ?? 0) >= min - 1, `gap ${i} was ${g[i]}`));
      const [bye] = await peer.waitFor((m) => isRequest('BYE')(m) && m.headers.get('Call-ID') === 'no-ack@test', 1, 3000);
      peer.send(reply(bye?.msg as SipRequest, 200, 'OK'), endpoint.port);
      assert.equal(calls.length, 1, 'retransmissions never reach the application');
    });

    it('stops repeating the 200 at the ACK (the transaction ends)', async () => {
      endpoint.onInvite((call) => void call.answer(SDP));
      const req = invite('acked@test');
      peer.send(req, endpoint.port);
      const [ok] = await peer.waitFor((m) => isResponse(200, 'INVITE')(m) && m.headers.get('Call-ID') === 'acked@test');
      const toTag = /tag=([^;]+)/.exec((ok?.msg.headers.get('To') ?? '').split('>').at(-1) ?? '')?.[1] ?? '';
      const ack = request('ACK', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, {
        From: `<sip:caller@127.0.0.1:${peer.port}>;tag=c1`, To: `<sip:parley@127.0.0.1:${endpoint.port}>;tag=${toTag}`, 'Call-ID': 'acked@test', CSeq: '1 ACK',
      });
      peer.send(ack, endpoint.port);
      await within((async () => {
        while (endpoint.transactions.findServer(req)) await new Promise((r) => setTimeout(r, 5));
      })(), 3000, 'the INVITE transaction to end');
      assert.equal(endpoint.dialogCount, 1);
      const bye = request('BYE', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, {
        From: `<sip:caller@127.0.0.1:${peer.port}>;tag=c1`, To: `<sip:parley@127.0.0.1:${endpoint.port}>;tag=${toTag}`, 'Call-ID': 'acked@test', CSeq: '2 BYE',
      });
      peer.send(bye, endpoint.port);
      await peer.waitFor((m) => isResponse(200, 'BYE')(m) && m.headers.get('Call-ID') === 'acked@test');
      assert.equal(endpoint.dialogCount, 0);
    });

    it('repeats a rejection (Timer G) until the ACK, and answers a repeated INVITE with it', async () => {
      let handled = 0;
      endpoint.onInvite((call) => {
        handled += 1;
        call.reject(486);
      });
      const req = invite('rejected@test');
      peer.send(req, endpoint.port);
      await peer.waitFor((m) => isResponse(486)(m) && m.headers.get('Call-ID') === 'rejected@test', 2);
      peer.send(req, endpoint.port);
      const copies = await peer.waitFor((m) => isResponse(486)(m) && m.headers.get('Call-ID') === 'rejected@test', 3);
      // The ACK of a non-2xx reuses the INVITE's Via (branch) with the To tag of the response.
      const headers = new SipHeaders();
      for (const h of req.headers.entries()) if (h.name !== 'Content-Type') headers.append(h.name, h.value);
      headers.set('CSeq', '1 ACK');
      headers.set('To', copies[0]?.msg.headers.get('To') ?? '');
      const ack: SipRequest = { kind: 'request', method: 'ACK', uri: req.uri, headers, body: Buffer.alloc(0) };
      peer.send(ack, endpoint.port);
      await within((async () => {
        while (endpoint.transactions.findServer(req)) await new Promise((r) => setTimeout(r, 5));
      })(), 3000, 'Timer I');
      assert.equal(handled, 1);
    });
  });
});
