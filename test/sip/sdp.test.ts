import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SdpNegotiationError, answerReoffer, buildAnswer, buildOffer, isHold, negotiateOffer, readAnswer } from '../../src/sip/sdp.ts';

const lines = (...l: string[]): string => `${l.join('\r\n')}\r\n`;
// As baresip 1.0 offers it (captured from the call tests).
const BARESIP_OFFER = lines(
  'v=0', 'o=- 4033401389 781779371 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'a=tool:baresip 1.0.0',
  'm=audio 20272 RTP/AVP 0 8 101', 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-15', 'a=sendrecv', 'a=label:1', 'a=ssrc:2690799396 cname:sip:+15550101@127.0.0.1', 'a=minptime:20', 'a=ptime:20',
);
// As the sipp scenarios offer it: PCMA first, no ptime.
const SIPP_OFFER = lines('v=0', 'o=sipp 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 6000 RTP/AVP 8 0 101', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000');
const LOCAL = { address: '192.0.2.10', port: 40000, sessionId: 42, sessionVersion: 1 };

describe('SDP offers', () => {
  it('offers PCMU, PCMA and telephone-event at 20 ms, sendrecv, on the media address', () => {
    const offer = buildOffer(LOCAL);
    assert.match(offer, /^c=IN IP4 192\.0\.2\.10$/m);
    assert.match(offer, /^m=audio 40000 RTP\/AVP 0 8 101$/m);
    assert.match(offer, /^a=rtpmap:0 PCMU\/8000$/m);
    assert.match(offer, /^a=rtpmap:8 PCMA\/8000$/m);
    assert.match(offer, /^a=rtpmap:101 telephone-event\/8000$/m);
    assert.match(offer, /^a=ptime:20$/m);
    assert.match(offer, /^a=sendrecv$/m);
    assert.match(offer, /^o=parley 42 1 IN IP4 192\.0\.2\.10$/m);
  });

  it('writes IPv6 media addresses as IP6', () => {
    assert.match(buildOffer({ ...LOCAL, address: '2001:db8::5' }), /^c=IN IP6 2001:db8::5$/m);
  });
});

describe('answering an offer', () => {
  it("reads baresip's offer and answers with one codec and its telephone-event type", () => {
    const n = negotiateOffer(BARESIP_OFFER);
    assert.deepEqual({ codec: n.codec, pt: n.payloadType, dtmf: n.dtmfPayloadType, addr: n.remoteAddress, port: n.remotePort, rtcp: n.remoteRtcpPort, dir: n.direction }, {
      codec: 'PCMU', pt: 0, dtmf: 101, addr: '127.0.0.1', port: 20272, rtcp: 20273, dir: 'sendrecv',
    });
    const answer = buildAnswer(BARESIP_OFFER, n, LOCAL);
    assert.match(answer, /^m=audio 40000 RTP\/AVP 0 101$/m);
    assert.doesNotMatch(answer, /PCMA/);
  });

  it("prefers our codec order over the offer's (sipp lists PCMA first)", () => {
    assert.equal(negotiateOffer(SIPP_OFFER).codec, 'PCMU');
    assert.equal(negotiateOffer(SIPP_OFFER, ['PCMA', 'PCMU']).codec, 'PCMA');
  });

  it('knows static payload types without rtpmap and keeps a dynamic telephone-event number', () => {
    const offer = lines('v=0', 'o=- 1 1 IN IP4 10.0.0.1', 's=-', 'c=IN IP4 10.0.0.1', 't=0 0', 'm=audio 5004 RTP/AVP 8 96', 'a=rtpmap:96 telephone-event/8000', 'a=rtcp:5010');
    const n = negotiateOffer(offer);
    assert.deepEqual([n.codec, n.payloadType, n.dtmfPayloadType, n.remoteRtcpPort], ['PCMA', 8, 96, 5010]);
    assert.match(buildAnswer(offer, n, LOCAL), /^m=audio 40000 RTP\/AVP 8 96$/m);
  });

  it('keeps every offered stream in the answer, refusing the others with port 0', () => {
    const offer = lines('v=0', 'o=- 1 1 IN IP4 10.0.0.1', 's=-', 'c=IN IP4 10.0.0.1', 't=0 0', 'm=video 5006 RTP/AVP 96', 'a=rtpmap:96 VP8/90000', 'm=audio 5004 RTP/AVP 0');
    const n = negotiateOffer(offer);
    const answer = buildAnswer(offer, n, LOCAL);
    assert.deepEqual(answer.match(/^m=.*$/gm), ['m=video 0 RTP/AVP 96', 'm=audio 40000 RTP/AVP 0']);
  });

  it('refuses an offer without a common codec, or without plain RTP audio, as 488', () => {
    const g722 = lines('v=0', 'o=- 1 1 IN IP4 10.0.0.1', 's=-', 'c=IN IP4 10.0.0.1', 't=0 0', 'm=audio 5004 RTP/AVP 9', 'a=rtpmap:9 G722/8000');
    const srtp = lines('v=0', 'o=- 1 1 IN IP4 10.0.0.1', 's=-', 'c=IN IP4 10.0.0.1', 't=0 0', 'm=audio 5004 RTP/SAVP 0');
    for (const offer of [g722, srtp, 'garbage', '']) {
      assert.throws(() => negotiateOffer(offer), (e: unknown) => e instanceof SdpNegotiationError && e.status === 488);
    }
  });

  it('mirrors the direction, and reads c=0.0.0.0 as hold', () => {
    const held = SIPP_OFFER.replace('c=IN IP4 127.0.0.1', 'c=IN IP4 0.0.0.0');
    const n = negotiateOffer(held);
    assert.equal(n.remoteAddress, null);
    assert.ok(isHold(n));
    const sendonly = negotiateOffer(`${SIPP_OFFER}a=sendonly\r\n`);
    assert.equal(sendonly.direction, 'recvonly');
    assert.match(buildAnswer(`${SIPP_OFFER}a=sendonly\r\n`, sendonly, LOCAL), /^a=recvonly$/m);
  });
});

describe('reading answers and re-offers', () => {
  it('reads the codec the answer picked, which must be one we offered', () => {
    const n = readAnswer(lines('v=0', 'o=- 1 1 IN IP4 10.0.0.2', 's=-', 'c=IN IP4 10.0.0.2', 't=0 0', 'm=audio 7000 RTP/AVP 8 101', 'a=rtpmap:101 telephone-event/8000'));
    assert.deepEqual([n.codec, n.remoteAddress, n.remotePort, n.dtmfPayloadType], ['PCMA', '10.0.0.2', 7000, 101]);
    assert.throws(() => readAnswer(lines('v=0', 'o=- 1 1 IN IP4 10.0.0.2', 's=-', 'c=IN IP4 10.0.0.2', 't=0 0', 'm=audio 7000 RTP/AVP 9')), SdpNegotiationError);
  });

  it('answers a session refresh with the same description, and a hold with a new version', () => {
    const first = negotiateOffer(BARESIP_OFFER);
    const ours = buildAnswer(BARESIP_OFFER, first, LOCAL);
    const refresh = answerReoffer(BARESIP_OFFER, ours);
    assert.equal(refresh.sdp, ours, 'unchanged: same o= version (RFC 3264 §8)');
    const hold = answerReoffer(BARESIP_OFFER.replace('a=sendrecv', 'a=sendonly'), ours);
    assert.match(hold.sdp, /^o=parley 42 2 /m);
    assert.match(hold.sdp, /^a=recvonly$/m);
    assert.match(hold.sdp, /^m=audio 40000 RTP\/AVP 0 101$/m, 'same port and codec');
  });

  it('keeps the codec of the running session when a re-offer lists another first', () => {
    const ours = buildAnswer(SIPP_OFFER, negotiateOffer(SIPP_OFFER, ['PCMA']), LOCAL);
    assert.equal(answerReoffer(BARESIP_OFFER, ours).negotiated.codec, 'PCMA');
  });
});
