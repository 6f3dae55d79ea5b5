import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MAX_MESSAGE_BYTES, SipHeaders, SipParseError, SipStreamFramer, headerParams, parseCSeq, parseMessage, serializeMessage, splitHeaderList,
} from '../../src/sip/message.ts';
import type { SipMessage, SipRequest, SipResponse } from '../../src/sip/message.ts';

const crlf = (...lines: string[]): string => lines.join('\r\n');
const REGISTER = crlf(
  'REGISTER sip:example.com SIP/2.0',
  'Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKabc;rport',
  'Max-Forwards: 70',
  'From: <sip:alice@example.com>;tag=1',
  'To: <sip:alice@example.com>',
  'Call-ID: abc@host',
  'CSeq: 1 REGISTER',
  'Content-Length: 0',
  '',
  '',
);

function asRequest(m: SipMessage): SipRequest {
  if (m.kind !== 'request') assert.fail(`expected a request, got a ${m.kind}`);
  return m;
}
function asResponse(m: SipMessage): SipResponse {
  if (m.kind !== 'response') assert.fail(`expected a response, got a ${m.kind}`);
  return m;
}
const rejects = (input: string | Buffer, pattern: RegExp): void => assert.throws(() => parseMessage(input), (e: unknown) => e instanceof SipParseError && pattern.test(e.message));

describe('parseMessage', () => {
  it('parses a request line and its headers', () => {
    const req = asRequest(parseMessage(REGISTER));
    assert.equal(req.method, 'REGISTER');
    assert.equal(req.uri, 'sip:example.com');
    assert.equal(req.headers.get('call-id'), 'abc@host');
    assert.deepEqual(parseCSeq(req.headers.get('CSeq') ?? ''), { seq: 1, method: 'REGISTER' });
    assert.equal(req.body.length, 0);
  });

  it('parses responses, with or without a reason phrase', () => {
    const res = asResponse(parseMessage('SIP/2.0 401 Unauthorized here\r\nCall-ID: x\r\n\r\n'));
    assert.equal(res.status, 401);
    assert.equal(res.reason, 'Unauthorized here');
    assert.equal(asResponse(parseMessage('SIP/2.0 200\r\n\r\n')).reason, '');
  });

  it('rejects non-numeric, short and out-of-range status codes', () => {
    rejects('SIP/2.0 2OO OK\r\n\r\n', /non-numeric status/);
    rejects('SIP/2.0 20 OK\r\n\r\n', /non-numeric status/);
    rejects('SIP/2.0 999 Nope\r\n\r\n', /out of range/);
    rejects('SIP/3.0 200 OK\r\n\r\n', /malformed status line/);
  });

  it('unfolds continuation lines', () => {
    const msg = parseMessage(crlf('SIP/2.0 200 OK', 'Subject: I know you are', '  there,\t', '\tpick up!', 'Call-ID: a', '', ''));
    assert.equal(msg.headers.get('Subject'), 'I know you are there, pick up!');
    assert.equal(msg.headers.get('Call-ID'), 'a');
    rejects(crlf('SIP/2.0 200 OK', ' folded: first', '', ''), /continuation line before any header/);
  });

  it('normalises every compact header name to the full one', () => {
    const compact: Record<string, string> = {
      i: 'Call-ID', m: 'Contact', v: 'Via', f: 'From', t: 'To', l: 'Content-Length', c: 'Content-Type', k: 'Supported',
      e: 'Content-Encoding', s: 'Subject', o: 'Event', r: 'Refer-To', u: 'Allow-Events', x: 'Session-Expires',
    };
    const lines = Object.keys(compact).map((k) => `${k.toUpperCase()}: ${k === 'l' ? '0' : `value-${k}`}`);
    const msg = parseMessage(crlf('SIP/2.0 200 OK', ...lines, '', ''));
    for (const [short, full] of Object.entries(compact)) {
      assert.equal(msg.headers.get(full), short === 'l' ? '0' : `value-${short}`, full);
      assert.ok(msg.headers.entries().some((h) => h.name === full), `${full} stored under its full name`);
    }
  });

  it('keeps repeated headers in order and matches names case-insensitively', () => {
    const msg = parseMessage(crlf('SIP/2.0 200 OK', 'via: SIP/2.0/UDP a;branch=z9hG4bK1', 'V: SIP/2.0/UDP b, SIP/2.0/UDP c', 'VIA: SIP/2.0/TCP d', '', ''));
    assert.deepEqual(msg.headers.getAll('Via').flatMap(splitHeaderList), ['SIP/2.0/UDP a;branch=z9hG4bK1', 'SIP/2.0/UDP b', 'SIP/2.0/UDP c', 'SIP/2.0/TCP d']);
    assert.equal(headerParams(msg.headers.get('v') ?? '').get('branch'), 'z9hG4bK1');
  });

  it('accepts bare LF line ends, and skips leading keepalive CRLFs', () => {
    const msg = asRequest(parseMessage('\r\n\r\n' + REGISTER.replaceAll('\r\n', '\n')));
    assert.equal(msg.headers.get('From'), '<sip:alice@example.com>;tag=1');
    const body = parseMessage('SIP/2.0 200 OK\nContent-Length: 3\n\nabc');
    assert.equal(body.body.toString(), 'abc');
  });

  it('accepts a datagram without the blank line only if it has no body', () => {
    assert.equal(parseMessage('SIP/2.0 200 OK\r\nCall-ID: x\r\n').headers.get('Call-ID'), 'x');
    assert.equal(parseMessage('SIP/2.0 200 OK\r\nCall-ID: x').body.length, 0);
    rejects('SIP/2.0 200 OK\r\nContent-Length: 4\r\nabcd', /missing blank line/);
  });

  it('frames the body by Content-Length and refuses impossible lengths', () => {
    assert.equal(parseMessage('SIP/2.0 200 OK\r\nl: 2\r\n\r\nabcdef').body.toString(), 'ab');
    assert.equal(parseMessage('SIP/2.0 200 OK\r\n\r\nrest of datagram').body.toString(), 'rest of datagram');
    rejects('SIP/2.0 200 OK\r\nContent-Length: 10\r\n\r\nabc', /exceeds the 3 body bytes/);
    rejects('SIP/2.0 200 OK\r\nContent-Length: 70000\r\n\r\n', /byte limit/);
    rejects('SIP/2.0 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n', /byte limit/);
    rejects('SIP/2.0 200 OK\r\nContent-Length: 1x\r\n\r\nab', /invalid Content-Length/);
    rejects('SIP/2.0 200 OK\r\nContent-Length: -1\r\n\r\nab', /invalid Content-Length/);
    rejects('SIP/2.0 200 OK\r\nContent-Length: 1\r\nl: 2\r\n\r\nab', /conflicting Content-Length/);
  });

  it('caps the message size at 64 KiB', () => {
    rejects(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 'a'), /exceeds the 65536 byte limit/);
  });

  it('rejects malformed lines with a clear message', () => {
    rejects('', /empty message/);
    rejects('\r\n\r\n', /empty message/);
    rejects('REGISTER sip:x\r\n\r\n', /malformed request line/);
    rejects('REGISTER sip:x SIP/1.0\r\n\r\n', /unsupported SIP version/);
    rejects('REG(ISTER sip:x SIP/2.0\r\n\r\n', /invalid method/);
    rejects('SIP/2.0 200 OK\r\nno colon here\r\n\r\n', /has no ":"/);
    rejects('SIP/2.0 200 OK\r\nBad Name: x\r\n\r\n', /invalid header name/);
    rejects('SIP/2.0 200 OK\r\nX-A: a\rb\r\n\r\n', /control characters/);
    rejects('SIP/2.0 200 OK\r\nX-A: a\0b\r\n\r\n', /control characters/);
    rejects('CSeq x\r\n\r\n', /malformed request line/);
    assert.throws(() => parseCSeq('one REGISTER'), SipParseError);
  });

  it('only ever throws SipParseError, whatever the bytes', () => {
    const valid = Buffer.from(REGISTER);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(valid.length), fc.uint8Array({ maxLength: 40 }), (noise, cut, splice) => {
        for (const input of [Buffer.from(noise), Buffer.concat([valid.subarray(0, cut), splice, valid.subarray(cut)])]) {
          try {
            parseMessage(input);
          } catch (err) {
            assert.ok(err instanceof SipParseError, String(err));
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('serializeMessage', () => {
  it('round-trips and always writes the real Content-Length', () => {
    const req = asRequest(parseMessage(REGISTER));
    req.body = Buffer.from('hello');
    req.headers.set('Content-Length', '999');
    const wire = serializeMessage(req).toString();
    assert.ok(wire.endsWith('Content-Length: 5\r\n\r\nhello'));
    assert.equal(wire.match(/Content-Length/g)?.length, 1);
    const again = asRequest(parseMessage(wire));
    assert.equal(again.headers.get('CSeq'), '1 REGISTER');
    assert.equal(again.body.toString(), 'hello');
  });

  it('refuses header injection', () => {
    assert.throws(() => new SipHeaders().append('X-A', 'a\r\nVia: evil'), TypeError);
    assert.throws(() => new SipHeaders().append('X A', 'a'), TypeError);
    const req: SipRequest = { kind: 'request', method: 'REGISTER', uri: 'sip:a b', headers: new SipHeaders(), body: Buffer.alloc(0) };
    assert.throws(() => serializeMessage(req), TypeError);
  });
});

describe('SipStreamFramer', () => {
  const two = Buffer.from('\r\n\r\n' + REGISTER + crlf('SIP/2.0 200 OK', 'Content-Length: 4', '', 'body'));

  it('splits messages however the bytes are chunked', () => {
    for (const size of [1, 3, 17, two.length]) {
      const framer = new SipStreamFramer();
      const out = [];
      for (let i = 0; i < two.length; i += size) out.push(...framer.push(two.subarray(i, i + size)));
      assert.deepEqual(out.map((m) => m.kind), ['request', 'response'], `chunk size ${size}`);
      assert.equal(out[1]?.body.toString(), 'body');
      assert.equal(framer.bufferedBytes, 0);
    }
  });

  it('waits for a body that has not fully arrived', () => {
    const framer = new SipStreamFramer();
    assert.deepEqual(framer.push(Buffer.from('SIP/2.0 200 OK\r\nl: 4\r\n\r\nbo')), []);
    assert.equal(framer.push(Buffer.from('dy'))[0]?.body.toString(), 'body');
  });

  it('fails fast on garbage and stays failed', () => {
    const framer = new SipStreamFramer();
    assert.throws(() => framer.push(Buffer.from([0x16, 0x03, 0x01, 0x00])), /garbage on stream/);
    assert.throws(() => framer.push(Buffer.from(REGISTER)), /garbage on stream/);
    assert.throws(() => new SipStreamFramer().push(Buffer.from('HELLO THERE\r\n')), /malformed request line/);
  });

  it('refuses oversized heads and bodies', () => {
    const endless = new SipStreamFramer();
    endless.push(Buffer.from('SIP/2.0 200 OK\r\n'));
    assert.throws(() => {
      for (let i = 0; i < 2000; i++) endless.push(Buffer.from(`X-Pad-${i}: ${'a'.repeat(40)}\r\n`));
    }, /no end of headers within 65536 bytes/);
    assert.throws(() => new SipStreamFramer().push(Buffer.from('SIP/2.0 200 OK\r\nContent-Length: 65536\r\n\r\n')), /byte limit/);
  });

  it('stays linear when a hostile peer sends one byte at a time', () => {
    const framer = new SipStreamFramer();
    const started = performance.now();
    const byte = Buffer.from('A');
    assert.throws(() => {
      for (let i = 0; i <= MAX_MESSAGE_BYTES; i++) framer.push(byte);
    }, /no end of headers/);
    assert.ok(performance.now() - started < 2000);
  });
});
