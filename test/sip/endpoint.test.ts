// What the endpoint answers by itself, its bounds, and requests inside a dialog that a
// raw peer sends (CSeq order, re-INVITE without SDP, UPDATE, unknown methods).
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Dialog } from '../../src/sip/dialog.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import { headerParams } from '../../src/sip/message.ts';
import type { SipResponse } from '../../src/sip/message.ts';
import { DEFAULT_RATE_LIMIT, SourceRateLimiter } from '../../src/sip/rate-limit.ts';
import { buildOffer } from '../../src/sip/sdp.ts';
import { isResponse, rawPeer, request } from '../helpers/raw-sip-peer.ts';
import type { RawPeer } from '../helpers/raw-sip-peer.ts';
import { next } from '../helpers/sip-media.ts';

const SDP = buildOffer({ address: '127.0.0.1', port: 20398, sessionId: 9, sessionVersion: 1 });
let seq = 0;
const callId = (): string => `call-${++seq}@endpoint.test`;

describe('SIP endpoint', () => {
  let endpoint: SipEndpoint;
  let peer: RawPeer;
  const fields = (method: string, id = callId(), extra: Record<string, string> = {}): Record<string, string> => ({
    From: `<sip:caller@127.0.0.1:${peer.port}>;tag=c1`, To: `<sip:parley@127.0.0.1:${endpoint.port}>`, 'Call-ID': id, CSeq: `1 ${method}`, ...extra,
  });
  const send = async (method: string, f: Record<string, string>, body = ''): Promise<SipResponse> => {
    const req = request(method, `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, f, body);
    peer.send(req, endpoint.port);
    const [res] = await peer.waitFor((m) => m.kind === 'response' && m.status >= 200 && m.headers.get('Call-ID') === f['Call-ID'] && (m.headers.get('CSeq') ?? '') === f.CSeq);
    return res?.msg as SipResponse;
  };

  before(async () => {
    endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, timers: { t1: 20, t2: 160, t4: 200 } });
  });
  after(async () => endpoint?.close());
  beforeEach(async () => (peer = await rawPeer()));
  afterEach(async () => {
    endpoint.onInvite(null);
    await peer.close();
  });

  it('answers OPTIONS out of a dialog with what it allows, and repeats the answer to a retransmission', async () => {
    const req = request('OPTIONS', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, fields('OPTIONS'));
    peer.send(req, endpoint.port);
    peer.send(req, endpoint.port);
    const answers = await peer.waitFor(isResponse(200, 'OPTIONS'), 2);
    assert.match(answers[0]?.msg.headers.get('Allow') ?? '', /INVITE.*BYE.*REFER/);
    const via = answers[0]?.msg.headers.get('Via') ?? '';
    assert.match(via, /;received=127\.0\.0\.1/);
    assert.match(via, new RegExp(`;rport=${peer.port}`), 'RFC 3581: the port it came from');
  });

  it('says 481 to requests for dialogs it does not have, 405 to methods it does not take, 480 without a handler, 420 to a Require', async () => {
    assert.equal((await send('BYE', fields('BYE'))).status, 481);
    assert.equal((await send('INFO', fields('INFO', callId(), { To: `<sip:parley@127.0.0.1>;tag=nope` }))).status, 481);
    const message = await send('MESSAGE', fields('MESSAGE'));
    assert.equal(message.status, 405);
    assert.ok(message.headers.get('Allow'));
    assert.equal((await send('INVITE', fields('INVITE', callId(), { Contact: `<sip:caller@127.0.0.1:${peer.port}>` }), SDP)).status, 480);
    const bad = await send('INVITE', fields('INVITE', callId(), { Contact: `<sip:caller@127.0.0.1:${peer.port}>`, Require: '100rel, timer' }), SDP);
    assert.deepEqual([bad.status, bad.headers.get('Unsupported')], [420, '100rel, timer']);
  });

  it('puts a To tag on every final answer outside a dialog (RFC 3261 §8.2.6.2), the same one on a CANCEL\'s 200 as on its INVITE\'s 487', async () => {
    const tagOf = (res: SipResponse): string | null | undefined => headerParams(res.headers.get('To') ?? '').get('tag');
    const contact = { Contact: `<sip:caller@127.0.0.1:${peer.port}>` };
    const answers = [
      await send('OPTIONS', fields('OPTIONS')),
      await send('MESSAGE', fields('MESSAGE')),
      await send('FROBNICATE', fields('FROBNICATE')),
      await send('INVITE', fields('INVITE', callId(), { ...contact, Require: '100rel' }), SDP),
      await send('INVITE', fields('INVITE', callId(), { Contact: '' }), SDP),
      await send('INVITE', fields('INVITE', callId(), contact), SDP),
      await send('BYE', fields('BYE')),
    ];
    assert.deepEqual(answers.map((r) => r.status), [200, 405, 501, 420, 400, 480, 481]);
    for (const res of answers) assert.match(tagOf(res) ?? '', /^\w{8,}$/, `${res.status} has a To tag`);
    const small = await SipEndpoint.start({ host: '127.0.0.1', port: 0, limits: { maxTransactions: 1, clientReserve: 0 } });
    try {
      small.onInvite((call) => call.ringing());
      const [a, b] = [callId(), callId()];
      for (const id of [a, b]) peer.send(request('INVITE', `sip:parley@127.0.0.1:${small.port}`, peer.port, { ...fields('INVITE', id), ...contact }, SDP), small.port);
      const [busy] = await peer.waitFor((m) => isResponse(503)(m) && m.headers.get('Call-ID') === b);
      assert.ok(tagOf(busy?.msg as SipResponse), 'a 503 sent without a transaction has one too');
    } finally {
      await small.close();
    }
    endpoint.onInvite((call) => call.ringing());
    const id = callId();
    const invite = request('INVITE', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, { ...fields('INVITE', id), ...contact }, SDP);
    peer.send(invite, endpoint.port);
    const [ringing] = await peer.waitFor((m) => isResponse(180)(m) && m.headers.get('Call-ID') === id);
    const cancel = request('CANCEL', invite.uri, peer.port, { ...fields('CANCEL', id) });
    cancel.headers.set('Via', invite.headers.get('Via') ?? '');
    peer.send(cancel, endpoint.port);
    const [ok] = await peer.waitFor((m) => isResponse(200, 'CANCEL')(m) && m.headers.get('Call-ID') === id);
    const [terminated] = await peer.waitFor((m) => isResponse(487)(m) && m.headers.get('Call-ID') === id);
    const tag = tagOf(ringing?.msg as SipResponse);
    assert.deepEqual([tagOf(ok?.msg as SipResponse), tagOf(terminated?.msg as SipResponse)], [tag, tag]);
  });

  it('answers 400 to a request missing what RFC 3261 requires, and drops what it cannot parse', async () => {
    const noCallId = fields('OPTIONS');
    const res = await send('INVITE', { ...fields('INVITE', 'x'), CSeq: '1 INVITE', Contact: '' });
    assert.equal(res.status, 400);
    assert.equal(res.reason, 'Missing Contact');
    peer.send(Buffer.from('\x16\x03\x01 definitely not SIP\r\n\r\n'), endpoint.port);
    peer.send('INVITE sip:x SIP/2.0\r\nContent-Length: 99999999\r\n\r\n', endpoint.port);
    assert.equal((await send('OPTIONS', noCallId)).status, 200, 'still answering');
  });

  it('refuses new transactions with 503 when the table is full', async () => {
    const small = await SipEndpoint.start({ host: '127.0.0.1', port: 0, limits: { maxTransactions: 2, clientReserve: 0 } });
    try {
      small.onInvite((call) => call.ringing()); // keeps each INVITE transaction open
      const ids = [callId(), callId(), callId()];
      for (const id of ids) peer.send(request('INVITE', `sip:parley@127.0.0.1:${small.port}`, peer.port, { ...fields('INVITE', id), Contact: `<sip:c@127.0.0.1:${peer.port}>` }, SDP), small.port);
      const [busy] = await peer.waitFor((m) => isResponse(503)(m));
      assert.equal(busy?.msg.headers.get('Call-ID'), ids[2]);
      assert.ok(busy?.msg.headers.get('Retry-After'));
      assert.equal(small.transactions.size, 2);
    } finally {
      await small.close();
    }
  });

  it('answers 480 to an incoming call the application never decides on', async () => {
    const patient = await SipEndpoint.start({ host: '127.0.0.1', port: 0, limits: { unansweredInviteMs: 100 } });
    try {
      let offered: { signal: AbortSignal } | null = null;
      patient.onInvite((call) => (offered = call));
      const id = callId();
      peer.send(request('INVITE', `sip:parley@127.0.0.1:${patient.port}`, peer.port, { ...fields('INVITE', id), Contact: `<sip:c@127.0.0.1:${peer.port}>` }, SDP), patient.port);
      await peer.waitFor((m) => isResponse(480)(m) && m.headers.get('Call-ID') === id);
      assert.equal((offered as { signal: AbortSignal } | null)?.signal.aborted, true);
    } finally {
      await patient.close();
    }
  });

  it('drops a flood from one source beyond its rate (burst, then the sustained rate)', async () => {
    let now = 0;
    const limited = await SipEndpoint.start({ host: '127.0.0.1', port: 0, rateLimit: { perSecond: 2, burst: 5, now: () => now } });
    try {
      for (let i = 0; i < 20; i++) peer.send(request('OPTIONS', `sip:x@127.0.0.1:${limited.port}`, peer.port, { ...fields('OPTIONS', `flood-${i}`) }), limited.port);
      await peer.waitFor(isResponse(200, 'OPTIONS'), 5);
      now += 1000; // two more tokens
      for (let i = 0; i < 3; i++) peer.send(request('OPTIONS', `sip:x@127.0.0.1:${limited.port}`, peer.port, { ...fields('OPTIONS', `later-${i}`) }), limited.port);
      await peer.waitFor((m) => isResponse(200)(m) && /^later-/.test(m.headers.get('Call-ID') ?? ''), 2);
      const answered = peer.received.filter((r) => isResponse(200)(r.msg)).map((r) => r.msg.headers.get('Call-ID'));
      assert.deepEqual(answered, ['flood-0', 'flood-1', 'flood-2', 'flood-3', 'flood-4', 'later-0', 'later-1']);
    } finally {
      await limited.close();
    }
  });

  it('keeps its table of sources bounded under a flood from many addresses', () => {
    const limiter = new SourceRateLimiter({ ...DEFAULT_RATE_LIMIT, perSecond: 1, burst: 1, maxSources: 100, now: () => 0 });
    for (let i = 0; i < 10_000; i++) limiter.allow(`10.0.${i >> 8}.${i & 255}`);
    assert.equal(limiter.sources, 100);
    assert.equal(limiter.allow('10.0.39.15'), false, 'a recent source keeps its empty bucket');
  });

  describe('inside a dialog', () => {
    let dialog: Dialog;
    let id: string;
    let tag: string;
    const inDialog = (method: string, cseq: number, extra: Record<string, string> = {}): Record<string, string> => ({
      ...fields(method, id), To: `<sip:parley@127.0.0.1:${endpoint.port}>;tag=${tag}`, CSeq: `${cseq} ${method}`, ...extra,
    });
    beforeEach(async () => {
      id = callId();
      const answered = new Promise<Dialog>((resolve) => endpoint.onInvite((call) => resolve(call.answer(SDP))));
      const ok = await send('INVITE', { ...fields('INVITE', id), CSeq: '10 INVITE', Contact: `<sip:caller@127.0.0.1:${peer.port}>` }, SDP);
      tag = /;tag=([^;]+)$/.exec(ok.headers.get('To') ?? '')?.[1] ?? '';
      peer.send(request('ACK', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, inDialog('ACK', 10)), endpoint.port);
      dialog = await answered;
    });

    it('refuses a request whose CSeq goes backwards with 500', async () => {
      assert.equal((await send('OPTIONS', inDialog('OPTIONS', 11))).status, 200);
      assert.equal((await send('OPTIONS', inDialog('OPTIONS', 11))).status, 200, 'a retransmission gets the same answer');
      const back = await send('INFO', inDialog('INFO', 5));
      assert.deepEqual([back.status, back.reason], [500, 'CSeq Out of Order']);
      assert.equal((await send('BYE', inDialog('BYE', 12))).status, 200);
    });

    it('offers its session in a 200 to a re-INVITE without SDP and takes the answer from the ACK', async () => {
      const ok = await send('INVITE', inDialog('INVITE', 11, { Contact: `<sip:moved@127.0.0.1:${peer.port}>` }));
      assert.equal(ok.status, 200);
      assert.equal(ok.body.toString(), SDP, 'our current description as the offer');
      const changed = next<[{ remoteSdp: string }]>(dialog, 'sdp');
      const answer = SDP.replace('20398', '20396');
      peer.send(request('ACK', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, inDialog('ACK', 11), answer), endpoint.port);
      assert.equal((await changed)[0].remoteSdp, answer);
      assert.equal(dialog.remoteTarget, `sip:moved@127.0.0.1:${peer.port}`, 'a re-INVITE refreshes the target');
      assert.equal((await send('BYE', inDialog('BYE', 12))).status, 200);
    });

    it('answers an UPDATE with SDP from the same session, 488 to one it cannot take, and 501 to what it does not know', async () => {
      const update = await send('UPDATE', inDialog('UPDATE', 11), SDP.replace('a=sendrecv', 'a=inactive'));
      assert.equal(update.status, 200);
      assert.match(update.body.toString(), /^a=inactive$/m);
      const refused = await send('UPDATE', inDialog('UPDATE', 12), SDP.replace(/RTP\/AVP .*/, 'RTP/AVP 9').replace(/a=rtpmap.*\r\n/g, ''));
      assert.equal(refused.status, 488);
      assert.equal(dialog.state, 'confirmed', 'the call goes on');
      assert.equal((await send('SUBSCRIBE', inDialog('SUBSCRIBE', 13))).status, 501);
      assert.equal((await send('BYE', inDialog('BYE', 14))).status, 200);
      assert.deepEqual(await dialog.ended, { by: 'remote', reason: 'BYE' });
    });
  });
});
