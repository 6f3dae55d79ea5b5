// Answering detection without a phone: far ends made with espeak-ng and sox are fed frame by
// frame (as the RTP session plays them out) into the detection a placed call runs, with a
// scripted speech-to-text, a recording `say` and a manual clock. What it decides, when it speaks
// (never before the beep has ended), what it writes on the record, and what it makes of the task.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import type { CallDetection, Verdict, VoicemailDetection } from '../../src/calls/voicemail-detection.ts';
import type { AudioLink } from '../../src/calls/voice/link.ts';
import { timedLink } from '../../src/calls/voice/timeline.ts';
import type { RtpSession } from '../../src/sip/rtp/session.ts';
import { AnsweringDetection } from '../../src/telephony/answering/detection.ts';
import { matchPhrases } from '../../src/telephony/answering/phrases.ts';
import { FarEndTap } from '../../src/telephony/answering/tap.ts';
import { frameTone } from '../../src/telephony/answering/tone.ts';
import type { SttSession } from '../../src/voice/stt/stt.ts';
import { ManualPacerClock } from '../../src/voice/pacer-clock.ts';
import { buildCall, type CallSpec, type CorpusCall } from './support/answering-corpus.ts';

const SETTINGS: VoicemailDetection = {
  action: 'leave_message', message: 'Hi Ada, please call us back.', maxWaitMs: 30_000, detectScreening: true, greeting: 'at_answer', retryAfterMessage: false, agentName: 'Parley',
};
const silentLog = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * A perfect speech-to-text: each utterance is answered with the words the far end was saying
 * when it ended (`now` is the detection's far-end clock; a segment ends a pause after its speech).
 */
function timedStt(call: CorpusCall): SttSession & { now: () => number } {
  const stt = {
    now: () => 0,
    write() {},
    endUtterance: async () => call.spans.find((s) => s.startMs <= stt.now() - 200 && stt.now() - 200 <= s.endMs + 300)?.text ?? '',
    close: async () => {},
  };
  return stt;
}

interface Run {
  detection: AnsweringDetection;
  /** What was said, and at which far-end ms. */
  said: { text: string; atMs: number }[];
  notes: { answeredBy: Verdict; detection: CallDetection }[];
  next: Promise<'greet' | 'hang_up'> | null;
  ended: AbortController;
  clock: ManualPacerClock;
  /**
   * Feeds the next `ms` of the far end's audio (silence past its end), letting the detection act
   * between frames; `lost` says which frames (by their file ms) the jitter buffer replaced with
   * silence, as it does for packets that never came.
   */
  play(ms: number, lost?: (atMs: number) => boolean): Promise<void>;
  /** Frames the gated link let through to the voice. */
  heardByVoice: number;
  /** The session greeted as the voice was ready (greeting at_answer), and when (far-end ms) the greeting was withdrawn. */
  greetedAtAnswer: boolean;
  withdrawnAtMs: number | null;
}

/** A detection over `call` as the far end, with `say` taking `sayMs` of the far end's time. */
function detect(call: CorpusCall | null, options: { settings?: Partial<VoicemailDetection>; stt?: SttSession | 'fails' | null; sayMs?: number } = {}): Run {
  const rtp = new EventEmitter();
  const tap = new FarEndTap(rtp as unknown as RtpSession, 'PCMU');
  const clock = new ManualPacerClock();
  const ended = new AbortController();
  const notes: Run['notes'] = [];
  const said: Run['said'] = [];
  const stt = options.stt === undefined ? null : options.stt;
  const timed = stt && stt !== 'fails' && 'now' in stt ? stt as { now: () => number } : null;
  const detection = new AnsweringDetection(tap, {
    settings: { ...SETTINGS, ...options.settings },
    openStt: stt === null ? null : async () => {
      if (stt === 'fails') throw new Error('no STT today');
      return stt;
    },
    screeningReply: async () => 'This is Parley from the reply.',
    note: async (answeredBy, record) => void notes.push({ answeredBy, detection: structuredClone(record) }),
    timers: clock,
    log: silentLog,
  }, ended.signal);
  if (timed) timed.now = () => detection.far.nowMs;
  let position = 0;
  let pendingSay: { resolveAt: number; resolve: (r: { heard: string; interrupted: boolean }) => void; text: string } | null = null;
  const link: AudioLink = { format: { encoding: 'mulaw', sampleRate: 8000 }, lead: 1, sendFrame: () => {}, flushPeer: () => {}, onAudio: (l) => void rtp.on('voice', l) };
  const run: Run = {
    detection, said, notes, ended, clock, next: null, heardByVoice: 0, greetedAtAnswer: false, withdrawnAtMs: null,
    async play(ms, lost = () => false) {
      for (let t = 0; t < ms; t += 20) {
        const pcm = new Int16Array(160);
        const missing = lost(position / 8) ? 160 : 0;
        if (call && !missing) pcm.set(call.pcm.subarray(position, position + 160));
        position += 160;
        const payload = Buffer.from(alawmulaw.mulaw.encode(pcm));
        rtp.emit('audio', { payload, missing });
        rtp.emit('voice', payload);
        if (pendingSay && detection.far.nowMs >= pendingSay.resolveAt) {
          const { resolve, text } = pendingSay;
          pendingSay = null;
          resolve({ heard: text, interrupted: false });
        }
        await new Promise((r) => setImmediate(r));
      }
    },
  };
  // The gate sits on the call's timeline (the voice is opened on a timed link); its times play no part here.
  detection.gate(timedLink(link, { now: () => 0 })).onAudio(() => void run.heardByVoice++);
  // The session ends what is being said when the call ends.
  ended.signal.addEventListener('abort', () => pendingSay?.resolve({ heard: '', interrupted: true }));
  // The voice is ready at once: the opener runs from the start, as when the providers open fast,
  // and the session greets first when it asks (a greeting that is still being said when withdrawn).
  run.greetedAtAnswer = detection.opener.greetFirst();
  run.next = detection.opener.run({
    say: (text) => new Promise((resolve) => {
      said.push({ text, atMs: detection.far.nowMs });
      pendingSay = { resolveAt: detection.far.nowMs + (options.sayMs ?? 2000), resolve, text };
    }),
    withdrawGreeting: () => {
      if (!run.greetedAtAnswer || run.withdrawnAtMs !== null) return false;
      run.withdrawnAtMs = detection.far.nowMs;
      return true;
    },
  });
  return run;
}

const signalsOf = (run: Run) => run.notes.at(-1)!.detection.signals.map((s) => s.signal);

describe('answering detection', () => {
  let dir: string;
  const calls = new Map<string, CorpusCall>();
  const SPECS: Record<string, Omit<CallSpec, 'name'>> = {
    hello: { kind: 'human', voice: 'en-us', speed: 165, parts: [{ pause: 400 }, { say: 'Hello?' }, { pause: 4000 }] },
    noisy: { kind: 'human', voice: 'en-gb+f2', speed: 170, noise: { color: 'brown', db: -32 }, parts: [{ pause: 500 }, { say: 'Hi, this is Anna.' }, { pause: 4000 }] },
    beep: {
      kind: 'voicemail', voice: 'en-us+f3', speed: 160,
      parts: [{ pause: 200 }, { say: 'Hi, you have reached Anna Smith. I cannot take your call right now. Please leave a message after the tone.' }, { pause: 600 }, { beep: { hz: 1400, ms: 300, db: -20 } }, { pause: 6000 }],
    },
    short: { kind: 'voicemail', voice: 'en-gb', speed: 160, parts: [{ pause: 300 }, { say: 'Please leave a message.' }, { pause: 450 }, { beep: { hz: 600, ms: 200, db: -18 } }, { pause: 5000 }] },
    endless: { kind: 'voicemail', voice: 'en-us', speed: 160, parts: [{ pause: 200 }, ...Array.from({ length: 6 }, () => ({ say: 'You have reached the mailbox of the sales team, who are busy.' }))] },
    screening: {
      kind: 'screening', voice: 'en-us', speed: 165,
      parts: [{ pause: 300 }, { say: 'Hi, the person you are calling is using a screening service. Go ahead and say your name and why you are calling.' }, { pause: 4000 }, { say: 'Please stay on the line.' }, { pause: 2000 }, { say: 'Hello?' }, { pause: 3000 }],
    },
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-answering-'));
    for (const [name, spec] of Object.entries(SPECS)) calls.set(name, await buildCall(dir, { name, ...spec }));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a Goertzel bank finds a tone\'s frequency and purity in one 20 ms frame; speech and noise are not tones', () => {
    const frame = (f: (i: number) => number) => Float32Array.from({ length: 160 }, (_, i) => f(i));
    for (const hz of [440, 1000, 1400]) {
      const tone = frameTone(frame((i) => 0.3 * Math.sin((2 * Math.PI * hz * i) / 8000)));
      assert.ok(Math.abs(tone.frequencyHz - hz) <= 5 && tone.purity > 0.95, JSON.stringify(tone));
    }
    let seed = 7;
    const noise = frameTone(frame(() => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.2));
    assert.ok(noise.purity < 0.3, JSON.stringify(noise));
    assert.equal(frameTone(new Float32Array(160)).purity, 0, 'silence is not looked at');
  });

  it('phrases: voicemail greetings, screening prompts, a screener asking to hold; a person\'s answer matches nothing', () => {
    assert.deepEqual(matchPhrases("Sorry I can't take your call, please leave a message after the beep").map((m) => m.kind), ['voicemail']);
    assert.deepEqual(matchPhrases('The person you’re calling is using a screening service. Say your name and why you’re calling.')[0], { kind: 'screening', phrase: 'screening service' });
    assert.deepEqual(matchPhrases('Please stay on the line').map((m) => m.kind), ['hold']);
    for (const person of ['Hello?', 'Yes, speaking.', 'Hi, this is Anna.', 'Who is calling, please?']) assert.deepEqual(matchPhrases(person), [], person);
  });

  it('a person saying "Hello?" is greeted a turn\'s pause after it, and only then does the voice hear the far end', async () => {
    const call = calls.get('hello')!;
    const run = detect(call);
    await run.play(call.firstSpeechEndMs + 400);
    assert.equal(run.heardByVoice, 0, 'the voice hears nothing while detection listens');
    await run.play(800);
    assert.equal(await run.next, 'greet');
    const detection = run.notes.at(-1)!.detection;
    assert.deepEqual([detection.verdict, detection.action, signalsOf(run)], ['human', 'continued', ['short_answer']]);
    assert.ok(detection.decidedAfterMs! >= call.firstSpeechEndMs + 500 && detection.decidedAfterMs! <= call.firstSpeechEndMs + 700, JSON.stringify(detection));
    const before = run.heardByVoice;
    await run.play(200);
    assert.equal(run.heardByVoice, before + 10, 'the voice hears the far end once the call goes on');
    assert.deepEqual(run.detection.taskOutcome, { status: 'completed' });
  });

  it('a person in a noisy room is a person: the noise is the floor, not speech', async () => {
    const call = calls.get('noisy')!;
    const run = detect(call);
    await run.play(call.firstSpeechEndMs + 1000);
    assert.equal(await run.next, 'greet');
    assert.deepEqual([run.notes.at(-1)!.answeredBy, signalsOf(run)], ['human', ['short_answer']]);
  });

  it('a voicemail box: the verdict is written before anything is done, and the message starts only once the beep has ended', async () => {
    const call = calls.get('beep')!;
    const run = detect(call, { stt: timedStt(call) });
    await run.play(call.beep!.endMs - 20);
    assert.equal(run.said.length, 0, 'nothing is said before the beep ends');
    const verdict = run.notes.find((n) => n.detection.verdict === 'voicemail');
    assert.ok(verdict && verdict.detection.action === null, 'the verdict went on the record before the message');
    assert.equal(run.notes[0]!.detection.verdict, 'unknown', 'an undecided detection is on the record from the start');
    await run.play(200);
    assert.equal(run.said.length, 1);
    assert.ok(run.said[0]!.atMs >= call.beep!.endMs && run.said[0]!.atMs <= call.beep!.endMs + 100, `said at ${run.said[0]!.atMs} ms, the beep ended at ${call.beep!.endMs} ms`);
    await run.play(3000); // the message (2 s), then the far end's 500 ms before the BYE
    assert.equal(await run.next, 'hang_up');
    await run.detection.done;
    const last = run.notes.at(-1)!.detection;
    assert.equal(last.action, 'left_message');
    assert.deepEqual(signalsOf(run).slice(-3), ['beep', 'message_started', 'message_ended']);
    assert.equal(run.heardByVoice, 0, 'the voice never heard the machine');
    assert.deepEqual(run.detection.taskOutcome, { status: 'voicemail_left', retry: false });
  });

  it('packets lost in a beep\'s middle do not end it, and lost packets after a person\'s words do not make the line noise speech', async () => {
    const call = calls.get('beep')!;
    const middle = (call.beep!.startMs + call.beep!.endMs) / 2;
    const lossy = detect(call, { stt: timedStt(call) });
    const lost = (atMs: number) => Math.abs(atMs - middle) < 10 || Math.abs(atMs - middle - 60) < 10;
    await lossy.play(call.beep!.endMs - 20, lost);
    assert.equal(lossy.said.length, 0, 'nothing is said before the beep ends, though two of its frames were lost');
    await lossy.play(200);
    assert.ok(lossy.said[0]!.atMs >= call.beep!.endMs, `said at ${lossy.said[0]!.atMs} ms, the beep ended at ${call.beep!.endMs} ms`);
    await lossy.play(2500);
    await lossy.detection.done;
    const beeps = lossy.notes.at(-1)!.detection.signals.filter((s) => s.signal === 'beep');
    assert.equal(beeps.length, 1, JSON.stringify(beeps));

    const noisy = calls.get('noisy')!;
    const person = detect(noisy);
    // The jitter buffer ran dry twice, just after the words: silence where the room's noise was.
    await person.play(noisy.firstSpeechEndMs + 1000, (atMs) => atMs > noisy.firstSpeechEndMs + 40 && atMs < noisy.firstSpeechEndMs + 100);
    assert.equal(await person.next, 'greet');
    assert.deepEqual([person.notes.at(-1)!.answeredBy, signalsOf(person)], ['human', ['short_answer']]);
  });

  it('without words, a greeting that talks on is a machine; with words, a short greeting is one too', async () => {
    const long = calls.get('beep')!;
    const byCadence = detect(long, { settings: { action: 'hang_up' } });
    await byCadence.play(4000);
    assert.equal(await byCadence.next, 'hang_up');
    assert.deepEqual([byCadence.notes.at(-1)!.answeredBy, signalsOf(byCadence)[0]], ['voicemail', 'long_speech']);
    assert.deepEqual(byCadence.detection.taskOutcome, { status: 'voicemail' });

    const short = calls.get('short')!;
    const byWords = detect(short, { stt: timedStt(short), settings: { action: 'hang_up' } });
    await byWords.play(short.beep!.endMs + 200);
    assert.equal(await byWords.next, 'hang_up');
    const [first] = byWords.notes.at(-1)!.detection.signals;
    assert.deepEqual([first?.signal, first?.phrase], ['voicemail_words', 'leave a message']);
  });

  it('a screening assistant hears the agent once its prompt is over; a screener asking to hold is not the person; "Hello?" then is', async () => {
    const call = calls.get('screening')!;
    const run = detect(call, { stt: timedStt(call), sayMs: 2500 });
    await run.play(call.firstSpeechEndMs + 700);
    assert.equal(run.said.length, 0, 'the prompt gets its pause before the answer');
    await run.play(200);
    assert.deepEqual(run.said.map((s) => s.text), ['This is Parley. Hi Ada, please call us back.']);
    await run.play(call.pcm.length / 8 - run.detection.far.nowMs);
    assert.equal(await run.next, 'greet');
    const detection = run.notes.at(-1)!.detection;
    assert.deepEqual([detection.verdict, detection.action], ['screening', 'continued']);
    assert.deepEqual(signalsOf(run), ['screening_words', 'greeting_withdrawn', 'prompt_ended', 'screening_answered', 'person_answered']);
    const person = detection.signals.at(-1)!;
    const hello = call.pcm.length / 8 - 3000 - 500;
    assert.ok(person.atMs > hello - 600, `the person was the "Hello?" at ${hello} ms, not the screener: ${JSON.stringify(person)}`);
    assert.deepEqual(run.detection.taskOutcome, { status: 'completed' });
  });

  it('without a message, the screener gets the reply the LLM writes', async () => {
    const call = calls.get('screening')!;
    const run = detect(call, { stt: timedStt(call), settings: { action: 'hang_up', message: null } });
    await run.play(call.firstSpeechEndMs + 1000);
    assert.deepEqual(run.said.map((s) => s.text), ['This is Parley from the reply.']);
    run.ended.abort();
    assert.equal(await run.next, 'hang_up');
    await run.detection.done;
    assert.deepEqual([run.notes.at(-1)!.detection.action, signalsOf(run).at(-1)], ['ended_early', 'ended_early']);
    assert.deepEqual(run.detection.taskOutcome, { status: 'voicemail' }, 'a screener that ends the call is a voicemail for the task');
  });

  it('greeting at_answer: a person is greeted from the answer and the greeting stands; the voice hears nothing of the far end before the verdict', async () => {
    const call = calls.get('hello')!;
    const run = detect(call);
    assert.equal(run.greetedAtAnswer, true, 'the greeting goes out as the voice is ready');
    await run.play(call.firstSpeechEndMs + 400);
    assert.equal(run.heardByVoice, 0, 'the "Hello?" said over the greeting does not reach the voice');
    await run.play(800);
    assert.equal(await run.next, 'greet');
    assert.equal(run.withdrawnAtMs, null, 'a person keeps the greeting');
    assert.deepEqual(signalsOf(run), ['short_answer']);
  });

  it('greeting at_answer: a voicemail box has the greeting withdrawn at the verdict, and the message still starts only after the beep', async () => {
    const call = calls.get('beep')!;
    const run = detect(call, { stt: timedStt(call) });
    assert.equal(run.greetedAtAnswer, true);
    await run.play(call.beep!.endMs - 20);
    const verdict = run.notes.find((n) => n.detection.verdict === 'voicemail')!.detection;
    assert.equal(run.withdrawnAtMs, verdict.decidedAfterMs, 'withdrawn on the frame that decided');
    assert.deepEqual(verdict.signals.map((s) => s.signal), ['voicemail_words', 'greeting_withdrawn'], 'the record says so with the verdict');
    assert.equal(run.said.length, 0, 'nothing is said before the beep ends');
    await run.play(3200);
    assert.ok(run.said[0]!.atMs >= call.beep!.endMs, `said at ${run.said[0]!.atMs} ms, the beep ended at ${call.beep!.endMs} ms`);
    assert.equal(await run.next, 'hang_up');
    await run.detection.done;
    assert.deepEqual(signalsOf(run).slice(-3), ['beep', 'message_started', 'message_ended']);
  });

  it('greeting at_answer: a machine heard before the voice was ready is not greeted at all', async () => {
    const call = calls.get('beep')!;
    const run = detect(call, { settings: { action: 'hang_up' } });
    await run.play(4000);
    assert.equal(run.notes.at(-1)!.answeredBy, 'voicemail');
    assert.equal(run.detection.opener.greetFirst(), false, 'a session opening its voice now would not greet');
  });

  it('greeting after_verdict: nothing is said before the verdict, and nothing is withdrawn', async () => {
    const call = calls.get('beep')!;
    const run = detect(call, { settings: { action: 'hang_up', greeting: 'after_verdict' } });
    assert.equal(run.greetedAtAnswer, false);
    await run.play(4000);
    assert.equal(await run.next, 'hang_up');
    await run.detection.done;
    assert.equal(run.withdrawnAtMs, null);
    assert.deepEqual(signalsOf(run), ['long_speech']);
  });

  it('a silent line is a person waiting to hear who calls', async () => {
    const run = detect(null);
    await run.play(3400);
    assert.equal(run.notes.length, 1, 'still undecided after 3.4 s');
    await run.play(200);
    assert.equal(await run.next, 'greet');
    assert.deepEqual([run.notes.at(-1)!.answeredBy, signalsOf(run)], ['human', ['silence']]);
  });

  it('no audio at all: after maxWaitSeconds (on the clock) the call goes on as with a person, answeredBy unknown', async () => {
    const run = detect(null, { settings: { maxWaitMs: 5000 } });
    await new Promise((r) => setImmediate(r));
    run.clock.advance(5500);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(run.notes.map((n) => n.answeredBy), ['unknown'], 'the wall clock waits a second past the deadline for late frames');
    assert.equal(run.notes[0]!.detection.decidedAfterMs, null);
    run.clock.advance(600);
    assert.equal(await run.next, 'greet');
    await run.detection.done;
    const detection = run.notes.at(-1)!.detection;
    assert.deepEqual([detection.verdict, detection.action, signalsOf(run)], ['unknown', 'continued', ['timeout']]);
    assert.deepEqual(run.detection.taskOutcome, { status: 'completed' });
  });

  it('a greeting that never ends within maxWaitSeconds gets no message, and the call is hung up', async () => {
    const call = calls.get('endless')!;
    const run = detect(call, { settings: { maxWaitMs: 8000 } });
    await run.play(8100);
    assert.equal(await run.next, 'hang_up');
    assert.equal(run.said.length, 0, 'nothing is said over the greeting');
    await run.detection.done;
    assert.deepEqual([run.notes.at(-1)!.detection.action, signalsOf(run)], ['message_not_left', ['long_speech', 'greeting_withdrawn', 'timeout']]);
    assert.deepEqual(run.detection.taskOutcome, { status: 'voicemail' });
  });

  it('a speech-to-text that cannot be opened leaves beep and cadence', async () => {
    const call = calls.get('beep')!;
    const run = detect(call, { stt: 'fails', settings: { action: 'hang_up' } });
    await run.play(3000);
    assert.equal(await run.next, 'hang_up');
    assert.equal(signalsOf(run)[0], 'long_speech');
  });

  it('a message left asks for another try only when the agent says so', async () => {
    const call = calls.get('short')!;
    const run = detect(call, { stt: timedStt(call), settings: { retryAfterMessage: true }, sayMs: 1000 });
    await run.play(call.beep!.endMs + 2500); // the message (1 s), then the far end's 500 ms before the BYE
    assert.equal(await run.next, 'hang_up');
    assert.deepEqual(run.detection.taskOutcome, { status: 'voicemail_left', retry: true });
  });
});
