// Registration against a raw registrar that answers what each test needs: failures and
// the backoff after them, 423 Min-Expires, the granted lifetime, and the un-REGISTER.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import type { SipRequest } from '../../src/sip/message.ts';
import type { RegistrationState } from '../../src/sip/registration.ts';
import { isRequest, rawPeer, reply } from '../helpers/raw-sip-peer.ts';
import type { RawPeer } from '../helpers/raw-sip-peer.ts';
import { within } from '../helpers/sip-media.ts';

describe('registration', () => {
  const clock = new ManualClock('2026-11-23T10:00:00Z');
  let endpoint: SipEndpoint;
  let registrar: RawPeer;
  const trunk = () => ({ hostname: '127.0.0.1', port: registrar.port, transport: 'udp' as const, username: 'alice', password: 'pw' });
  /**
   * Answers the n-th REGISTER (1-based, counted by CSeq so that retransmissions get the same
   * answer again) at once, back where it came from, with what `script` returns.
   */
  const answer = (script: (req: SipRequest, n: number) => [number, string, Record<string, string>?]): void => {
    const answers = new Map<string, [number, string, Record<string, string>?]>();
    registrar.onMessage = ({ msg, from }) => {
      if (!isRequest('REGISTER')(msg)) return;
      const cseq = msg.headers.get('CSeq') ?? '';
      if (!answers.has(cseq)) answers.set(cseq, script(msg, answers.size + 1));
      const [status, reason, headers] = answers.get(cseq) ?? [500, 'Server Error'];
      registrar.send(reply(msg, status, reason, { toTag: 'reg', headers: headers ?? {} }), from.port);
    };
  };
  /** Each distinct REGISTER once (retransmissions left out). */
  const registers = (): SipRequest[] => {
    const seen = new Map<string, SipRequest>();
    for (const r of registrar.received) if (isRequest('REGISTER')(r.msg)) seen.set(r.msg.headers.get('CSeq') ?? '', r.msg);
    return [...seen.values()];
  };
  const until = async (states: RegistrationState[], predicate: (s: RegistrationState[]) => boolean, what: string): Promise<void> => {
    await within((async () => {
      while (!predicate(states)) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, what);
  };

  before(async () => {
    endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, clock, timers: { t1: 20, t2: 160, t4: 200 } });
  });
  after(async () => endpoint?.close());
  beforeEach(async () => (registrar = await rawPeer()));
  afterEach(async () => registrar.close());

  it('reports a refusal, retries with growing waits, and registers for what the Contact was granted', async () => {
    answer((req, n) => (n <= 2 ? [403, 'Forbidden'] : [200, 'OK', { Contact: `${req.headers.get('Contact') ?? ''};expires=30` }]));
    const states: RegistrationState[] = [];
    const at: number[] = [];
    const reg = endpoint.register({ trunk: trunk(), expires: 600, retry: { initialMs: 40, maxMs: 1000 }, onState: (s) => (states.push(s), at.push(performance.now())) });
    try {
      await until(states, (s) => s.some((x) => x.state === 'registered'), 'registered');
      assert.deepEqual(states.map((s) => [s.state, s.lastStatusCode]), [
        ['registering', null], ['failed', 403], ['registering', 403], ['failed', 403], ['registering', 403], ['registered', 200],
      ]);
      assert.equal(states.at(-1)?.expiresAt?.toISOString(), '2026-11-23T10:00:30.000Z', 'granted 30 s, not the 600 asked for');
      // From each failure to the next attempt: the backoff (timers never fire early).
      const [g1 = 0, g2 = 0] = [(at[2] ?? 0) - (at[1] ?? 0), (at[4] ?? 0) - (at[3] ?? 0)];
      assert.ok(g1 >= 40 - 1 && g2 >= 80 - 1, `backoff waits ${g1}, ${g2}`);
    } finally {
      await reg.stop();
    }
    assert.equal(registers().at(-1)?.headers.get('Expires'), '0', 'stop() removes the binding');
    assert.equal(reg.state.state, 'unregistered');
  });

  it('asks again with the Min-Expires of a 423, and falls back to the Expires header', async () => {
    answer((req) => (req.headers.get('Expires') === '60' ? [423, 'Interval Too Brief', { 'Min-Expires': '120' }] : [200, 'OK', { Expires: '90' }]));
    const states: RegistrationState[] = [];
    const reg = endpoint.register({ trunk: trunk(), expires: 60, onState: (s) => states.push(s) });
    try {
      await until(states, (s) => s.some((x) => x.state === 'registered'), 'registered');
      assert.deepEqual(registers().map((r) => r.headers.get('Expires')), ['60', '120']);
      assert.equal(reg.state.expiresAt?.toISOString(), '2026-11-23T10:01:30.000Z');
      assert.deepEqual(registers().map((r) => r.headers.get('CSeq')), ['1 REGISTER', '2 REGISTER'], 'one Call-ID, CSeq counting up');
      assert.equal(new Set(registers().map((r) => r.headers.get('Call-ID'))).size, 1);
    } finally {
      await reg.stop();
    }
  });

  it('un-registers when the endpoint closes, and a dead registrar cannot hold the close up', async () => {
    answer((req) => [200, 'OK', { Contact: `${req.headers.get('Contact') ?? ''};expires=60` }]);
    const own = await SipEndpoint.start({ host: '127.0.0.1', port: 0, clock, limits: { closeGraceMs: 200 } });
    const silent = await rawPeer();
    try {
      const states: RegistrationState[] = [];
      const reg = own.register({ trunk: trunk(), onState: (s) => states.push(s) });
      own.register({ trunk: { ...trunk(), port: silent.port } }); // never answered
      await until(states, (s) => s.some((x) => x.state === 'registered'), 'registered');
      await within(own.close(), 5000, 'close');
      assert.equal(reg.state.state, 'unregistered');
      assert.equal(registers().at(-1)?.headers.get('Expires'), '0');
    } finally {
      await silent.close();
    }
  });

  it('fails with no status when the registrar never answers', async () => {
    const states: RegistrationState[] = [];
    const reg = endpoint.register({ trunk: trunk(), retry: { initialMs: 60_000 }, onState: (s) => states.push(s) });
    try {
      await until(states, (s) => s.some((x) => x.state === 'failed'), 'failed');
      assert.deepEqual(states.at(-1), { state: 'failed', lastStatusCode: null, expiresAt: null, reason: 'no answer to REGISTER' });
    } finally {
      await reg.stop();
    }
  });
});
