// Hostile input for everything that reads the network during a call: the SIP framer and
// header parsers, SDP, RTP, RTCP and telephone-events. Each may only fail with its own
// parse error: never another exception, a hang, or a buffer that keeps growing.
// FUZZ_RUNS changes the runs per property, FUZZ_SEED replays a failure.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseDtmfInfo, parseSipfrag } from '../../src/sip/bodies.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import { MAX_MESSAGE_BYTES, SipParseError, SipStreamFramer } from '../../src/sip/message.ts';
import { DtmfReceiver } from '../../src/sip/rtp/dtmf.ts';
import { JitterBuffer } from '../../src/sip/rtp/jitter-buffer.ts';
import { RtpParseError, buildRtp, parseRtp } from '../../src/sip/rtp/packet.ts';
import { RtpPortPool } from '../../src/sip/rtp/ports.ts';
import { buildBye, buildReport, parseRtcp } from '../../src/sip/rtp/rtcp.ts';
import { RtpSession } from '../../src/sip/rtp/session.ts';
import { SdpNegotiationError, answerReoffer, buildOffer, negotiateOffer, readAnswer } from '../../src/sip/sdp.ts';
import { parseNameAddr, parseUri, parseVia } from '../../src/sip/uri.ts';
import { rawPeer, request } from '../helpers/raw-sip-peer.ts';
import { within } from '../helpers/sip-media.ts';

const runs = Number(process.env.FUZZ_RUNS ?? 1000);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const params = { numRuns: runs, ...(seed === undefined ? {} : { seed }) };

/** Runs `fn`; an error of `allowed` type is fine, anything else fails the property. */
function onlyThrows(allowed: new (...args: never[]) => Error, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof allowed)) throw err;
  }
}

/** A valid sample, cut, spliced with noise, or replaced: hostile bytes close to real ones. */
const mutated = (valid: Buffer): fc.Arbitrary<Buffer> =>
  fc.oneof(
    fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
    fc.tuple(fc.nat(valid.length), fc.uint8Array({ maxLength: 64 }), fc.nat(valid.length)).map(([at, noise, cut]) =>
      Buffer.concat([valid.subarray(0, at), Buffer.from(noise), valid.subarray(at, Math.max(at, cut))])),
    fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
      const copy = Buffer.from(valid);
      copy[at] = byte;
      return copy;
    }),
  );

const SIP_TEXT = fc.string({ unit: fc.constantFrom(...'sip:tel+@;=<>"\\ ,.[]:?&%0123456789abcXYZ-_\t/'.split('')), maxLength: 120 });
const INVITE = Buffer.from([
  'INVITE sip:+15550001@127.0.0.1 SIP/2.0', 'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bKabc;rport', 'From: "A" <sip:a@127.0.0.1>;tag=1',
  'To: <sip:+15550001@127.0.0.1>', 'Call-ID: fuzz@test', 'CSeq: 1 INVITE', 'Contact: <sip:a@127.0.0.1:5070>', 'Content-Type: application/sdp', 'Content-Length: 4', '', 'v=0\n',
].join('\r\n'));
const OFFER = buildOffer({ address: '127.0.0.1', port: 4000, sessionId: 1, sessionVersion: 1 });
const RTP = buildRtp({ payloadType: 0, sequenceNumber: 7, timestamp: 160, ssrc: 1, marker: false }, Buffer.alloc(160, 0xff));
const RTCP = Buffer.concat([buildReport({ ssrc: 1, cname: 'x', sender: { ntpTimestamp: 1n << 40n, rtpTimestamp: 1, packetCount: 1, octetCount: 160 }, block: { ssrc: 2, fractionLost: 1, packetsLost: 1, highestSequence: 1, jitter: 1, lsr: 0, dlsr: 0 } }), buildBye(1)]);

describe('fuzzing the call path', () => {
  it('SIP stream framer: any chunking of any bytes gives messages or SipParseError, never a growing buffer', () => {
    fc.assert(fc.property(fc.array(mutated(INVITE), { maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }), (parts, sizes) => {
      const framer = new SipStreamFramer();
      const stream = Buffer.concat(parts);
      for (let pos = 0, i = 0; pos < stream.length; i++) {
        const size = sizes[i % sizes.length] ?? 1;
        try {
          framer.push(stream.subarray(pos, pos + size));
        } catch (err) {
          if (!(err instanceof SipParseError)) throw err;
          return;
        }
        pos += size;
        assert.ok(framer.bufferedBytes <= MAX_MESSAGE_BYTES + size);
      }
    }), params);
  });

  it('SIP stream framer: an endless head is refused at the size cap', () => {
    const framer = new SipStreamFramer();
    framer.push(Buffer.from('OPTIONS sip:x SIP/2.0\r\n'));
    assert.throws(() => {
      for (let i = 0; i < 100; i++) framer.push(Buffer.from(`X-Long: ${'a'.repeat(1000)}\r\n`));
    }, SipParseError);
  });

  it('URIs, name-addr values and Via: only SipParseError', () => {
    fc.assert(fc.property(SIP_TEXT, (text) => {
      onlyThrows(SipParseError, () => parseUri(text));
      onlyThrows(SipParseError, () => parseNameAddr(text));
      onlyThrows(SipParseError, () => parseVia(`SIP/2.0/UDP ${text}`));
    }), params);
  });

  it('SDP offers, answers and re-offers: only SdpNegotiationError, and what is accepted is sane', () => {
    const token = fc.oneof(fc.nat(70_000).map(String), fc.constantFrom('0', '8', '101', 'PCMU/8000', 'PCMA/8000', 'telephone-event/8000', 'RTP/AVP', '0.0.0.0', '::', '-1', 'x'), fc.string({ maxLength: 12 }));
    const line = fc.tuple(fc.constantFrom('m=audio', 'c=IN IP4', 'c=IN IP6', 'a=rtpmap:', 'a=rtcp:', 'a=ptime:', 'a=fmtp:', 'a=', 'o=-', 'm=video'), fc.array(token, { maxLength: 4 }))
      .map(([head, parts]) => `${head}${head.endsWith(':') ? '' : ' '}${parts.join(' ')}`);
    const structured = fc.array(line, { maxLength: 12 }).map((lines) => `v=0\r\n${lines.join('\r\n')}\r\n`);
    const sane = (n: { remotePort: number; remoteRtcpPort: number; payloadType: number; ptime: number }): void => {
      assert.ok(Number.isInteger(n.remotePort) && n.remotePort > 0 && n.remotePort < 65536, `port ${n.remotePort}`);
      assert.ok(Number.isInteger(n.remoteRtcpPort) && n.remoteRtcpPort > 0 && n.remoteRtcpPort <= 65536, `rtcp ${n.remoteRtcpPort}`);
      assert.ok(Number.isInteger(n.payloadType) && n.payloadType >= 0 && n.payloadType < 128, `pt ${n.payloadType}`);
      assert.ok(Number.isFinite(n.ptime) && n.ptime > 0);
    };
    fc.assert(fc.property(fc.oneof(mutated(Buffer.from(OFFER)).map((b) => b.toString('latin1')), structured), (text) => {
      onlyThrows(SdpNegotiationError, () => sane(negotiateOffer(text)));
      onlyThrows(SdpNegotiationError, () => sane(readAnswer(text)));
      onlyThrows(SdpNegotiationError, () => sane(answerReoffer(text, OFFER).negotiated));
    }), params);
  });

  it('RTP, RTCP and telephone-events: only RtpParseError', () => {
    fc.assert(fc.property(mutated(RTP), mutated(RTCP), (rtp, rtcp) => {
      onlyThrows(RtpParseError, () => parseRtp(rtp));
      onlyThrows(RtpParseError, () => parseRtcp(rtcp));
      onlyThrows(RtpParseError, () => new DtmfReceiver().push(1, rtp.subarray(12)));
    }), params);
  });

  it('INFO and sipfrag bodies never throw', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom('application/dtmf-relay', 'application/dtmf', 'text/plain', undefined), (body, type) => {
      parseDtmfInfo(type, Buffer.from(body));
      parseSipfrag(Buffer.from(body));
    }), params);
  });

  it('jitter buffer: any timestamps and sizes, never an exception, never past its capacity', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2000 }), fc.boolean()), { maxLength: 60 }), (ops) => {
      const b = new JitterBuffer({ depthMs: 60, silence: 0xff, capacityMs: 500 });
      for (const [ts, size, pop] of ops) {
        b.push(ts, Buffer.alloc(size, 1));
        if (pop) assert.ok(b.pop() === null || b.pop()?.payload.length === 160);
        assert.ok(b.buffered <= 500 * 8 + 2000);
      }
    }), params);
  });

  it('a live endpoint and RTP session shrug off garbage datagrams and keep working', async () => {
    const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0 });
    const pool = new RtpPortPool({ min: 20450, max: 20459 }, '127.0.0.1');
    const session = await RtpSession.open({ pool, playout: 'manual' });
    const peer = await rawPeer();
    const sock = dgram.createSocket('udp4');
    try {
      session.setRemote({ remoteAddress: '127.0.0.1', remotePort: peer.port, codec: 'PCMU', payloadType: 0, dtmfPayloadType: 101 });
      const junk = fc.sample(fc.oneof(mutated(INVITE), mutated(RTP), mutated(RTCP)), { numRuns: 300, ...(seed === undefined ? {} : { seed }) });
      junk.push(Buffer.alloc(60_000, 0x41), Buffer.alloc(0));
      for (const j of junk) {
        sock.send(j, endpoint.port, '127.0.0.1');
        sock.send(j, session.localPort, '127.0.0.1');
        sock.send(j, session.localPort + 1, '127.0.0.1');
      }
      const ping = request('OPTIONS', `sip:x@127.0.0.1:${endpoint.port}`, peer.port, { From: '<sip:f@127.0.0.1>;tag=1', To: '<sip:x@127.0.0.1>', 'Call-ID': 'after-fuzz@test', CSeq: '1 OPTIONS' });
      peer.send(ping, endpoint.port);
      await peer.waitFor((m) => m.kind === 'response' && m.headers.get('Call-ID') === 'after-fuzz@test');
      const good = buildRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 99_999, ssrc: 77, marker: true }, Buffer.alloc(160, 0x42));
      const before = session.stats().packetsReceived;
      sock.send(good, session.localPort, '127.0.0.1');
      await within((async () => {
        while (session.stats().packetsReceived === before) await new Promise((r) => setTimeout(r, 5));
      })(), 5000, 'a valid packet after the junk');
      assert.ok(endpoint.transactions.size < 50, `${endpoint.transactions.size} transactions left open`);
    } finally {
      sock.close();
      session.close();
      await peer.close();
      await endpoint.close();
    }
  });
});
