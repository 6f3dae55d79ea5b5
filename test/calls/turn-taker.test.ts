import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { turnSettings, type TurnParameters } from '../../src/calls/turns/settings.ts';
import { TurnTaker } from '../../src/calls/voice/turn-taker.ts';
import type { CallerTurn } from '../../src/calls/voice/voice.ts';
import { ManualPacerClock } from '../../src/voice/pacer-clock.ts';

/**
 * A turn-taker on a manual clock, with a scripted batch STT (each segment's words join the
 * utterance, which preview() reads and finish() ends), a voice that can be speaking, and a
 * recording host.
 */
function harness(parameters: TurnParameters = {}) {
  const clock = new ManualPacerClock(10_000);
  const utterance: string[] = [];
  const input = {
    streaming: false, providerEnded: false, hearing: false, finishes: 0,
    preview: async () => utterance.join(' '),
    finish: async () => {
      input.finishes++;
      input.providerEnded = false;
      return utterance.splice(0).join(' ');
    },
  };
  const voice = { talking: false, pauses: 0, resumes: 0 };
  const events: string[] = [];
  const said: { text: string; turn: CallerTurn }[] = [];
  const taker = new TurnTaker(turnSettings(parameters), input, {
    speaking: () => voice.talking,
    pause: () => void voice.pauses++,
    resume: () => void voice.resumes++,
  }, {
    frame: (frame) => void (frame.type !== 'user_transcript' && events.push(frame.type)),
    callerSpeechStarted: () => void events.push('speech_started'),
    callerInterrupted: () => void events.push('interrupted'),
    callerSpeculating: (text) => void events.push(`speculating:${text}`),
    callerSpeculationCancelled: () => void events.push('speculation_cancelled'),
    callerSaid: (text, turn) => void (said.push({ text, turn }), events.push(`said:${text}`)),
    falseInterruption: (text) => void events.push(`false:${text}`),
    sttFailed: (error) => void events.push(`failed:${String(error)}`),
  }, clock);
  /** The caller speaks `text` for `speakMs`, then stops. */
  const segment = async (text: string, speakMs = 600, extra: { providerEnded?: boolean } = {}) => {
    taker.speechStarted();
    clock.advance(speakMs);
    if (text) utterance.push(text);
    if (extra.providerEnded) input.providerEnded = true;
    taker.speechEnded(clock.now());
    await tick();
  };
  /** Time passes; what it set off (a finish, a preview) settles. */
  const advance = async (ms: number) => {
    clock.advance(ms);
    await tick();
  };
  return { clock, input, voice, events, said, taker, segment, utterance, advance };
}

describe('the turn-taker: smart endpointing', { timeout: 10_000 }, () => {
  it('a turn that reads complete is answered speculatively at once and ends after minSilence', async () => {
    const h = harness();
    await h.segment('When do you open tomorrow?');
    const last = h.clock.now();
    assert.deepEqual(h.events, ['speech_started', 'speculating:When do you open tomorrow?']);
    await h.advance(249);
    assert.equal(h.said.length, 0);
    await h.advance(1);
    assert.deepEqual(h.said, [{ text: 'When do you open tomorrow?', turn: { lastSpeechAt: last, endedAt: last + 250, endpointing: 'smart' } }]);
  });

  it('a turn that reads unfinished waits up to maxSilence, with no speculation', async () => {
    const h = harness({ maxSilence: 1.2 });
    await h.segment('I want to change my');
    assert.deepEqual(h.events, ['speech_started']);
    await h.advance(1199);
    assert.equal(h.said.length, 0);
    await h.advance(1);
    assert.equal(h.said[0]?.text, 'I want to change my');
  });

  it('the caller going on inside the wait keeps one turn: the speculative answer is dropped and the words join', async () => {
    const h = harness();
    await h.segment('I want a pizza.');
    await h.advance(100);
    await h.segment('With extra cheese.');
    assert.deepEqual(h.events, ['speech_started', 'speculating:I want a pizza.', 'speech_started', 'speculation_cancelled', 'speculating:I want a pizza. With extra cheese.']);
    await h.advance(250);
    assert.deepEqual(h.said.map((s) => s.text), ['I want a pizza. With extra cheese.']);
  });

  it('a dictated number pauses between groups without ending the turn', async () => {
    const h = harness();
    await h.segment('My number is 555');
    await h.advance(700);
    await h.segment('123');
    await h.advance(700);
    await h.segment('4567.');
    assert.equal(h.said.length, 0, 'no turn inside the pauses');
    await h.advance(1600);
    await tick();
    assert.deepEqual(h.said.map((s) => s.text), ['My number is 555 123 4567.']);
    assert.equal(h.input.finishes, 1, 'the STT transcribes the turn once, pauses and all');
  });

  it('the STT\'s own end-of-speech makes a turn complete, recorded as provider endpointing', async () => {
    const h = harness();
    await h.segment('I want to change my', 600, { providerEnded: true });
    await h.advance(250);
    assert.equal(h.said[0]?.turn.endpointing, 'provider');
  });

  it('speech the VAD hears but has not yet called speech holds the end of the turn', async () => {
    const h = harness();
    await h.segment('Is it open?');
    h.input.hearing = true;
    await h.advance(400);
    assert.equal(h.said.length, 0);
    h.input.hearing = false;
    await h.advance(40);
    assert.equal(h.said.length, 1);
  });

  it('a segment with no words makes no turn', async () => {
    const h = harness();
    await h.segment('');
    await h.advance(5000);
    assert.equal(h.said.length, 0);
  });
});

describe('the turn-taker: speech over the assistant', { timeout: 10_000 }, () => {
  it('pauses at once; a backchannel resumes the assistant and makes no turn', async () => {
    const h = harness();
    h.voice.talking = true;
    h.taker.speechStarted();
    assert.equal(h.voice.pauses, 1, 'silent at once');
    assert.deepEqual(h.events, ['speech_started', 'turn_paused']);
    h.taker.interim('yeah');
    await h.advance(400);
    h.utterance.push('Yeah.');
    h.taker.speechEnded(h.clock.now());
    await tick();
    assert.deepEqual(h.events.slice(2), ['false:Yeah.', 'turn_resumed']);
    assert.equal(h.voice.resumes, 1, 'the assistant plays on');
    await h.advance(5000);
    assert.equal(h.said.length, 0, 'a backchannel is not a turn');
  });

  it('a cough (no words) resumes; a word or two shorter than interruptionMinDuration resumes too', async () => {
    for (const text of ['', 'no']) {
      const h = harness();
      h.voice.talking = true;
      h.taker.speechStarted();
      await h.advance(300);
      h.input.hearing = false;
      await h.segment(text, 0);
      assert.equal(h.voice.resumes, 1, JSON.stringify(text));
      assert.ok(!h.events.includes('interrupted'));
    }
  });

  it('words that are no backchannel interrupt as soon as the STT has interruptionMinWords of them', async () => {
    const h = harness();
    h.voice.talking = true;
    h.taker.speechStarted();
    h.taker.interim('wait');
    assert.ok(!h.events.includes('interrupted'), 'one word is not enough yet');
    h.taker.interim('wait stop');
    assert.deepEqual(h.events, ['speech_started', 'turn_paused', 'interrupted']);
    assert.equal(h.voice.resumes, 0);
    // The interruption is the caller's turn.
    h.voice.talking = false;
    await h.advance(300);
    h.input.hearing = false;
    h.utterance.splice(0, h.utterance.length, 'Wait, stop.');
    h.taker.speechEnded(h.clock.now());
    await tick();
    await h.advance(250);
    assert.deepEqual(h.said.map((x) => x.text), ['Wait, stop.']);
  });

  it('one word that lasts interruptionMinDuration interrupts; a long backchannel does not', async () => {
    const h = harness();
    h.voice.talking = true;
    h.taker.speechStarted();
    h.taker.interim('Excuse');
    await h.advance(500);
    assert.ok(h.events.includes('interrupted'));

    const b = harness();
    b.voice.talking = true;
    b.taker.speechStarted();
    b.taker.interim('got');
    await b.advance(800);
    assert.ok(!b.events.includes('interrupted'), '"got" may still be "got it"');
  });

  it('with resumeAfterFalseInterruption off, a backchannel still cuts the answer, and makes no turn', async () => {
    const h = harness({ resumeAfterFalseInterruption: false });
    h.voice.talking = true;
    await h.segment('okay', 300);
    assert.deepEqual(h.events, ['speech_started', 'turn_paused', 'false:okay', 'interrupted']);
    await h.advance(5000);
    assert.equal(h.said.length, 0);
  });
});

describe('the turn-taker: vad endpointing (as before)', { timeout: 10_000 }, () => {
  it('ends the turn at the VAD\'s silence, whatever was said, and cuts the assistant at any speech', async () => {
    const h = harness({ endpointing: 'vad' });
    await h.segment('I want to change my');
    assert.deepEqual(h.said.map((s) => [s.text, s.turn.endpointing]), [['I want to change my', 'vad']]);
    h.voice.talking = true;
    h.taker.speechStarted();
    assert.deepEqual(h.events.slice(-2), ['speech_started', 'interrupted']);
    assert.equal(h.voice.pauses, 0);
  });
});
