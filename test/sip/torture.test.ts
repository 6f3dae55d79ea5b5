// RFC 4475's torture messages (test/fixtures/rfc4475, byte for byte from the RFC's archive): the
// valid ones of §3.1.1 parse and are answered as the RFC expects of an endpoint, the invalid ones
// of §3.1.2 are refused with the status the RFC names, or dropped where it says so.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import { SipParseError, headerParams, parseMessage } from '../../src/sip/message.ts';
import type { SipMessage } from '../../src/sip/message.ts';
import { until } from '../helpers/until.ts';

const fixture = (kind: 'valid' | 'invalid', name: string): Buffer => readFileSync(new URL(`../fixtures/rfc4475/${kind}/${name}.dat`, import.meta.url));

/** What an endpoint (no call handler) answers each one with, or 'dropped'; and why, after the RFC. */
const VALID: Record<string, number | 'dropped'> = {
  wsinv: 481, // an INVITE with a To tag of a dialog we do not have
  intmeth: 501, // "Endpoints will generate a 501 listing the methods they understand in an Allow header field"
  esc01: 480, // a well-formed INVITE; nobody takes calls here
  escnull: 405, // REGISTER: known, not ours
  esc02: 501, // RE%47IST%45R is an unknown method, "An endpoint would reject this message with a 501"
  lwsdisp: 200,
  longreq: 480,
  dblreq: 405, // the REGISTER; the INVITE after it in the datagram is noise (RFC 3261 §18.3)
  semiuri: 200,
  transports: 200,
  mpart01: 405, // MESSAGE: known, not ours
  unreason: 'dropped', // responses to nothing of ours
  noreason: 'dropped',
};

const INVALID: Record<string, number | 'dropped'> = {
  badinv01: 400, // "should respond with a 400 Bad Request"
  clerr: 400, // over UDP "should respond with a 400"
  ncl: 400, // "should respond with an error"
  scalar02: 400, // "should respond with a 400 Bad Request due to the CSeq error"
  scalarlg: 'dropped', // a response: "will simply discard it"
  quotbal: 400,
  ltgtruri: 400,
  lwsruri: 400,
  lwsstart: 400, // "acceptable to reject this request as malformed"
  trws: 400, // same
  escruri: 400,
  baddate: 480, // "shouldn't [reject] unless the contents of the Date header field were actually important": we never read it
  regbadct: 400,
  badaspec: 400,
  baddn: 400,
  badvers: 505,
  mismatch01: 400,
  mismatch02: 501, // "should respond with a 501 Not Implemented"
  bigcode: 'dropped', // "should simply drop it"
};

const callIdOf = (wire: Buffer): string => /^(?:Call-ID|i)[ \t]*:[ \t]*(\S+)/im.exec(wire.toString('latin1'))?.[1] ?? '';

describe('RFC 4475 torture messages', () => {
  it('parses every valid message of §3.1.1', () => {
    for (const name of Object.keys(VALID)) {
      let msg: SipMessage;
      try {
        msg = parseMessage(fixture('valid', name));
      } catch (err) {
        assert.fail(`${name}: ${(err as Error).message}`);
      }
      assert.ok(msg.headers.get('Call-ID'), name);
    }
    const intmeth = parseMessage(fixture('valid', 'intmeth'));
    assert.equal(intmeth.kind === 'request' && intmeth.method, "!interesting-Method0123456789_*+`.%indeed'~");
    assert.ok((intmeth.headers.get('To') ?? '').startsWith('"BEL:\\\x07 NUL:\\\0 DEL:\\\x7f" <'), 'the quoted-pairs kept as they came');
  });

  it('refuses the invalid ones the parser can tell, keeping the head of a request so that it can be answered', () => {
    for (const name of ['clerr', 'ncl', 'lwsruri', 'lwsstart', 'trws', 'badvers', 'bigcode']) {
      const err = (() => {
        try {
          parseMessage(fixture('invalid', name));
        } catch (e) {
          return e;
        }
        return null;
      })();
      assert.ok(err instanceof SipParseError, `${name} is refused by the parser`);
      assert.equal(err.answer?.status, INVALID[name] === 'dropped' ? undefined : INVALID[name], name);
    }
  });

  describe('sent to an endpoint over UDP', () => {
    let endpoint: SipEndpoint;
    let sock: dgram.Socket;
    const sent: SipMessage[] = [];
    let pings = 0;

    before(async () => {
      endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0 });
      // What the endpoint answers, wherever it goes: several messages name port 5060 in their Via.
      const send = endpoint.send.bind(endpoint);
      endpoint.send = (msg, hop) => {
        sent.push(msg);
        return send(msg, hop);
      };
      sock = dgram.createSocket('udp4');
      await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    });
    after(async () => {
      sock?.close();
      await endpoint?.close();
    });

    /** The final answer to `wire` (null: none), known once a ping sent after it has been answered. */
    async function answerTo(wire: Buffer): Promise<SipMessage | null> {
      const callId = callIdOf(wire);
      sock.send(wire, endpoint.port, '127.0.0.1');
      const ping = `ping-${++pings}@torture.test`;
      const port = sock.address().port;
      sock.send(`OPTIONS sip:p@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${ping.replace(/\W/g, '')};rport\r\nFrom: <sip:t@127.0.0.1>;tag=t\r\nTo: <sip:p@127.0.0.1>\r\nCall-ID: ${ping}\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n`, endpoint.port, '127.0.0.1');
      await until(`the answer to ${ping}`, () => sent.some((m) => m.headers.get('Call-ID') === ping), Boolean, 10_000, 5);
      const finals = sent.filter((m) => m.kind === 'response' && m.status >= 200 && m.headers.get('Call-ID') === callId);
      assert.ok(finals.length <= 1, `one answer to ${callId}`);
      return finals[0] ?? null;
    }

    for (const [kind, table] of [['valid', VALID], ['invalid', INVALID]] as const) {
      for (const [name, expected] of Object.entries(table)) {
        it(`${kind}/${name}: ${expected === 'dropped' ? 'dropped' : `answered ${expected}`}`, async () => {
          const answer = await answerTo(fixture(kind, name));
          if (expected === 'dropped') return assert.equal(answer, null);
          assert.equal(answer?.kind === 'response' && answer.status, expected);
          // RFC 3261 §8.2.6.2: a response outside a dialog carries a To tag of ours.
          assert.ok(headerParams(answer?.headers.get('To') ?? '').get('tag'), 'a To tag');
          if (expected === 501 || expected === 405) assert.match(answer?.headers.get('Allow') ?? '', /INVITE/);
        });
      }
    }

    it('valid/dblreq: the INVITE after the REGISTER in the same datagram is never answered', () => {
      assert.ok(!sent.some((m) => m.headers.get('Call-ID') === 'dblreq.0ha0isnda977644900765@192.0.2.15'));
    });
  });
});
