// Calls through Kamailio (the trunk) to and from real phones: baresip, which plays
// espeak-ng speech and records what it hears, and sipp callers. Our endpoint registers
// with Kamailio as the trunk account, so the trunk's number reaches onInvite.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { answerMedia, applyAnswer, bindMedia, offerMedia } from '../../src/sip/call-media.ts';
import type { Dialog } from '../../src/sip/dialog.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import type { IncomingCall } from '../../src/sip/inbound.ts';
import type { Registration, RegistrationState } from '../../src/sip/registration.ts';
import { RtpPortPool } from '../../src/sip/rtp/ports.ts';
import type { RtpSession } from '../../src/sip/rtp/session.ts';
import { SdpNegotiationError } from '../../src/sip/sdp.ts';
import type { Trunk } from '../../src/sip/target.ts';
import { readWav, segmentedCorrelation, speechSpan, speechWav } from '../helpers/audio.ts';
import { startBaresip } from '../helpers/baresip.ts';
import type { Baresip } from '../helpers/baresip.ts';
import { startKamailio } from '../helpers/kamailio.ts';
import type { Kamailio } from '../helpers/kamailio.ts';
import { capture, loopbackOnly, next, play, within } from '../helpers/sip-media.ts';
import { startSipp } from '../helpers/sipp.ts';

const DID = '+15550199';

/**
 * The same speech must come out: normalised cross-correlation of at least 0.9 (judged per half
 * second, see segmentedCorrelation) and the speech lasting within 5 % of the original.
 */
function assertSameSpeech(reference: Int16Array, recording: Int16Array, what: string): void {
  const correlation = segmentedCorrelation(reference, recording);
  assert.ok(correlation >= 0.9, `${what}: correlation ${correlation.toFixed(3)} < 0.9`);
  const a = speechSpan(reference);
  const b = speechSpan(recording);
  const ratio = (b.end - b.start) / (a.end - a.start);
  assert.ok(Math.abs(ratio - 1) <= 0.05, `${what}: speech lasts ${(ratio * 100).toFixed(1)} % of the original`);
}

describe('calls through Kamailio with baresip and sipp', () => {
  let dir: string;
  let k: Kamailio;
  let endpoint: SipEndpoint;
  let trunk: Trunk;
  let ours: Int16Array;
  let theirs: { path: string; pcm: Int16Array };
  let theirsLong: { path: string; pcm: Int16Array };
  const phones: Baresip[] = [];
  const pool = new RtpPortPool({ min: 20100, max: 20149 }, '127.0.0.1');
  const media = { pool, mediaAddress: '127.0.0.1', allowAddress: loopbackOnly };
  const phone = async (user: string, source: string, rtpPorts: string): Promise<Baresip> => {
    const p = await startBaresip({ user, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts });
    phones.push(p);
    return p;
  };
  /** Registers the endpoint for the duration of `fn`, so the DID reaches it. */
  const registered = async <T>(fn: (reg: Registration) => Promise<T>): Promise<T> => {
    const reg = endpoint.register({ trunk, expires: 60 });
    try {
      await waitState(reg, 'registered');
      return await fn(reg);
    } finally {
      await reg.stop();
    }
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-calls-'));
    [ours, theirs, theirsLong] = await Promise.all([
      speechWav(dir, 'ours', 'Hello from Parley. Can you hear this sentence clearly?').then((s) => s.pcm),
      speechWav(dir, 'theirs', 'Yes, this is the phone answering. Tuesday at ten works.'),
      speechWav(dir, 'theirs-long', 'Yes, this is the phone answering. Tuesday at ten works.', 6),
    ]);
    k = await startKamailio({ template: 'proxy', did: DID });
    trunk = { hostname: '127.0.0.1', port: k.udpPort, transport: 'udp', username: k.username, password: k.password };
    endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await Promise.all(phones.map((p) => p.stop()));
    await endpoint?.close();
    await k?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('calls a phone through the trunk (407 answered): speech both ways, and the phone hangs up', async () => {
    const p = await phone('+15550101', theirs.path, '20200-20249');
    const { session, sdp } = await offerMedia(media);
    const heard = capture(session);
    const result = await endpoint.placeCall({
      trunk, target: '+15550101', from: '+15550001', sdpOffer: sdp, ringTimeoutMs: 10_000,
      onProgress: (progress) => progress.sdp && applyAnswer(session, progress.sdp),
    });
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    assert.equal(applyAnswer(session, result.remoteSdp).codec, 'PCMU');
    bindMedia(result.dialog, session);
    await play(session, ours);
    // baresip hangs up when its file ends: the BYE comes from the phone.
    assert.deepEqual(await within(result.dialog.ended, 10_000, 'BYE from the phone'), { by: 'remote', reason: 'BYE' });
    const recording = await p.recordings();
    assertSameSpeech(ours, (await readWav(recording.heard)).pcm, 'what the phone heard');
    // Against what baresip actually sent (its encoder's input), which is its file unless
    // its own audio thread stumbled on a loaded machine.
    assertSameSpeech((await readWav(recording.sent)).pcm, heard(), 'what we heard');
    assertSameSpeech(theirs.pcm, heard(), 'what we heard against the file');
    const stats = session.stats();
    assert.ok(stats.packetsSent >= ours.length / 160 - 1 && stats.packetsReceived > 100, JSON.stringify(stats));
    await within((async () => {
      while (pool.inUse > 0) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, 'the RTP port back in the pool');
  });

  it('calls over TCP too: the trunk relays to the phone over UDP, and our BYE comes back through it', async () => {
    const p = await phone('+15550104', theirsLong.path, '20460-20499');
    const { session, sdp } = await offerMedia(media);
    const result = await endpoint.placeCall({ trunk: { ...trunk, port: k.tcpPort, transport: 'tcp' }, target: '+15550104', from: '+15550001', sdpOffer: sdp, ringTimeoutMs: 10_000 });
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    bindMedia(result.dialog, session);
    assert.match(result.dialog.routeSet[0] ?? '', /transport=tcp/i, 'Kamailio record-routed both legs');
    await p.waitEvent('CALL_ESTABLISHED');
    await result.dialog.bye();
    await p.waitEvent('CALL_CLOSED');
  });

  it('takes a call from a phone to our number: speech both ways, DTMF both ways, and we hang up', async () => {
    const p = await phone('+15550102', theirsLong.path, '20250-20299');
    await registered(async () => {
      const answered = new Promise<{ dialog: Dialog; session: RtpSession; call: IncomingCall }>((resolve, reject) => {
        endpoint.onInvite((call) => {
          answerMedia(call.sdp, media).then(({ session, sdp }) => resolve({ dialog: call.answer(sdp), session, call }), reject);
        });
      });
      const dial = await p.command('dial', `sip:${DID}@127.0.0.1:${k.udpPort}`);
      assert.ok(dial.ok, dial.data);
      const { dialog, session, call } = await within(answered, 10_000, 'incoming call');
      bindMedia(dialog, session);
      assert.equal(call.from.user, '+15550102');
      assert.equal(call.to.user, DID);
      assert.equal(call.anonymous, false);
      assert.match(call.sdp, /a=rtpmap:101 telephone-event\/8000/, 'the offer baresip made');
      const heard = capture(session);
      await p.waitEvent('CALL_ESTABLISHED');
      await play(session, ours);
      const theirDigits: string[] = [];
      session.on('dtmf', (d) => theirDigits.push(d.digit));
      const sent = await p.command('sndcode', '19#');
      assert.ok(sent.ok, sent.data);
      await session.sendDtmf('4');
      await session.sendDtmf('*');
      const got = await Promise.all(['4', '*'].map((d) => p.waitEvent('CALL_DTMF_START', (e) => e.param === d)));
      assert.equal(got.length, 2);
      await within((async () => {
        while (theirDigits.length < 3) await next(session, 'dtmf');
      })(), 10_000, 'DTMF from the phone');
      assert.deepEqual(theirDigits, ['1', '9', '#'], 'one digit per key press');
      await dialog.bye();
      await p.waitEvent('CALL_CLOSED');
      const recording = await p.recordings();
      assertSameSpeech(ours, (await readWav(recording.heard)).pcm, 'what the phone heard');
      assertSameSpeech((await readWav(recording.sent)).pcm, heard(), 'what we heard');
    });
  });

  it('transfers with REFER: Kamailio routes it to the phone, which calls the target; NOTIFY progress is reported', async () => {
    await phone('+15550103', theirsLong.path, '20150-20199');
    await registered(async () => {
      // The transfer target is our own number again, so the new call comes back to us.
      const transferred = new Promise<Dialog>((resolve) => {
        endpoint.onInvite((call) => {
          void answerMedia(call.sdp, media).then(({ session, sdp }) => {
            const dialog = call.answer(sdp);
            bindMedia(dialog, session);
            resolve(dialog);
          });
        });
      });
      const { session, sdp } = await offerMedia(media);
      const result = await endpoint.placeCall({ trunk, target: '+15550103', from: '+15550001', sdpOffer: sdp, ringTimeoutMs: 10_000 });
      assert.equal(result.outcome, 'answered');
      applyAnswer(session, result.remoteSdp);
      bindMedia(result.dialog, session);
      const progress: number[] = [];
      result.dialog.on('refer', (r) => progress.push(r.status));
      const refer = await result.dialog.refer(`sip:${DID}@127.0.0.1:${k.udpPort}`);
      assert.deepEqual([refer.status, refer.accepted], [202, true]);
      const second = await within(transferred, 10_000, 'the transferred call');
      const outcome = await within(refer.outcome, 10_000, 'final NOTIFY');
      assert.deepEqual(outcome && { status: outcome.status, final: outcome.final }, { status: 200, final: true });
      assert.ok(progress.includes(100) && progress.at(-1) === 200, `progress ${progress.join(',')}`);
      await second.bye();
      await result.dialog.bye();
    });
  });

  it('keeps a short registration refreshed before it runs out, and un-registers on stop', async () => {
    const states: Array<RegistrationState & { at: number }> = [];
    const reg = endpoint.register({ trunk, expires: 2, onState: (s) => states.push({ ...s, at: Date.now() }) });
    try {
      await within((async () => {
        while (states.filter((s) => s.state === 'registered').length < 3) await new Promise((r) => setTimeout(r, 50));
      })(), 10_000, 'three registrations');
      const ok = states.filter((s) => s.state === 'registered');
      for (let i = 1; i < ok.length; i++) {
        const previous = ok[i - 1]?.expiresAt?.getTime() ?? 0;
        assert.ok((ok[i]?.at ?? Infinity) < previous, `refresh ${i} came after the binding had run out`);
      }
      assert.equal(states[0]?.state, 'registering');
      assert.equal(ok[0]?.lastStatusCode, 200);
      assert.equal(await k.bindings(k.username), 1);
    } finally {
      await reg.stop();
    }
    assert.equal(reg.state.state, 'unregistered');
    assert.equal(await k.bindings(k.username), 0);
  });

  it('reports an anonymous caller (From anonymous, Privacy: id), reads INFO DTMF, and sees the caller hang up', async () => {
    await registered(async () => {
      const answered = new Promise<{ call: IncomingCall; dialog: Dialog }>((resolve) => {
        endpoint.onInvite((call) => {
          void answerMedia(call.sdp, media).then(({ session, sdp, negotiated }) => {
            assert.equal(negotiated.codec, 'PCMU', 'our preference wins over the offer order (PCMA first)');
            const dialog = call.answer(sdp);
            bindMedia(dialog, session);
            resolve({ call, dialog });
          });
        });
      });
      const s = await startSipp({ scenario: 'uac-anonymous.xml', remote: `127.0.0.1:${k.udpPort}`, service: DID });
      try {
        const { call, dialog } = await within(answered, 10_000, 'incoming call');
        assert.equal(call.anonymous, true);
        assert.deepEqual(call.privacy, ['id']);
        assert.equal(call.from.user, 'anonymous');
        const [dtmf] = await next<[{ digit: string }]>(dialog, 'dtmf');
        assert.equal(dtmf.digit, '7');
        assert.deepEqual(await within(dialog.ended, 10_000, 'BYE'), { by: 'remote', reason: 'BYE' });
        const { code, log } = await within(s.done, 10_000, 'sipp');
        assert.equal(code, 0, log);
      } finally {
        await s.stop();
      }
    });
  });

  it('ends a ringing call the caller CANCELs with 487', async () => {
    await registered(async () => {
      const cancelled = new Promise<IncomingCall>((resolve) => {
        endpoint.onInvite((call) => {
          call.ringing();
          call.on('cancelled', () => resolve(call));
        });
      });
      const s = await startSipp({ scenario: 'uac-cancel.xml', remote: `127.0.0.1:${k.udpPort}`, service: DID });
      try {
        const call = await within(cancelled, 10_000, 'CANCEL');
        assert.equal(call.state, 'cancelled');
        assert.equal(call.signal.aborted, true);
        assert.throws(() => call.answer('v=0'), /cancelled/);
        const { code, log } = await within(s.done, 10_000, 'sipp');
        assert.equal(code, 0, log);
      } finally {
        await s.stop();
      }
    });
  });

  it('refuses an offer without a common codec with 488, taking no RTP port', async () => {
    await registered(async () => {
      const refused = new Promise<unknown>((resolve) => {
        endpoint.onInvite((call) => {
          answerMedia(call.sdp, media).catch((err: unknown) => {
            if (err instanceof SdpNegotiationError) call.reject(err.status);
            resolve(err);
          });
        });
      });
      const inUse = pool.inUse;
      const s = await startSipp({ scenario: 'uac-nocodec.xml', remote: `127.0.0.1:${k.udpPort}`, service: DID });
      try {
        assert.ok((await within(refused, 10_000, 'offer')) instanceof SdpNegotiationError);
        assert.equal(pool.inUse, inUse);
        const { code, log } = await within(s.done, 10_000, 'sipp');
        assert.equal(code, 0, log);
      } finally {
        await s.stop();
      }
    });
  });
});

async function waitState(reg: Registration, state: RegistrationState['state']): Promise<void> {
  await within((async () => {
    while (reg.state.state !== state) await new Promise((r) => setTimeout(r, 20));
  })(), 10_000, `registration ${state}`);
}
