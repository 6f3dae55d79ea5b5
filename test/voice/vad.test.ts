import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { concatSamples, rmsLevel } from '../../src/voice/audio/pcm.ts';
import { loadSileroModel, type SileroModel } from '../../src/voice/vad-model.ts';
import { createVad, vadSettings, type VadEvent, type VadSettings } from '../../src/voice/vad.ts';
import { energyBounds } from './support/compare.ts';
import { silence, speech } from './support/speech.ts';

const RATE = 16000;
const FRAME = 320; // 20 ms, as transports deliver it

interface Seen {
  event: VadEvent;
  /** Stream position (samples) at the end of the push that produced the event. */
  at: number;
}

async function run(model: SileroModel, pcm: Int16Array, settings: Partial<VadSettings> = {}, frame = FRAME): Promise<Seen[]> {
  const vad = createVad(model, vadSettings(settings));
  const seen: Seen[] = [];
  for (let at = 0; at < pcm.length; at += frame) {
    const chunk = pcm.subarray(at, at + frame);
    for (const event of await vad.push(chunk)) seen.push({ event, at: at + chunk.length });
  }
  return seen;
}

const edges = (seen: Seen[]) => seen.filter((s) => s.event.type !== 'speech');

describe('Silero VAD', () => {
  let model: SileroModel;
  let sentence: Int16Array;
  let padded: Int16Array; // 1 s of silence, the sentence, 1 s of silence
  let bounds: { start: number; end: number };

  before(async () => {
    model = await loadSileroModel();
    sentence = await speech('Good morning. I would like to change my delivery address, please.');
    padded = concatSamples([silence(1), sentence, silence(1)]);
    bounds = energyBounds(padded, RATE);
  });
  after(() => model.close());

  it('yields no events for silence', async () => {
    assert.deepEqual(await run(model, silence(3)), []);
  });

  it('finds one utterance: speech_start near the onset, speech_end stopDuration after the speech', async () => {
    await onsetAndEnd(padded, bounds);
    // "What" is shorter than startDuration and the pause before "time" must not restart the count.
    const question = concatSamples([silence(1), await speech('What time do you open on Sunday?'), silence(1)]);
    await onsetAndEnd(question, energyBounds(question, RATE));
  });

  async function onsetAndEnd(padded: Int16Array, bounds: { start: number; end: number }): Promise<void> {
    const seen = edges(await run(model, padded));
    assert.deepEqual(seen.map((s) => s.event.type), ['speech_start', 'speech_end']);
    const [start, end] = seen as [Seen & { event: { atMs: number } }, Seen & { event: { atMs: number } }];
    const onsetMs = (bounds.start * 1000) / RATE;
    assert.ok(Math.abs(start.event.atMs - onsetMs) <= 150, `speech_start at ${start.event.atMs} ms, onset at ${onsetMs} ms`);
    const speechEndMs = (bounds.end * 1000) / RATE;
    const decidedMs = (end.at * 1000) / RATE;
    // Decided about stopDuration (0.8 s) after the speech ended: the model's tail adds a little.
    assert.ok(decidedMs - speechEndMs >= 700 && decidedMs - speechEndMs <= 1100, `speech_end decided at ${decidedMs} ms, speech ended at ${speechEndMs} ms`);
    assert.ok(Math.abs(end.event.atMs - speechEndMs) <= 300, `speech_end.atMs ${end.event.atMs}, speech ended at ${speechEndMs} ms`);
  }

  it('speech_start carries the backbuffer and the speech so far, sample for sample, then speech events carry the rest', async () => {
    for (const backbufferDuration of [0.3, 0.5]) {
      const seen = await run(model, padded, { backbufferDuration }, 512);
      const start = seen.find((s) => s.event.type === 'speech_start')!;
      const endIndex = seen.findIndex((s) => s.event.type === 'speech_end');
      assert.equal(start.event.type, 'speech_start');
      const onset = (start.event.atMs * RATE) / 1000;
      assert.equal(start.event.audio.length, backbufferDuration * RATE + (start.at - onset), `backbuffer ${backbufferDuration} s`);
      assert.deepEqual(start.event.audio, padded.subarray(onset - backbufferDuration * RATE, start.at));
      // Together, speech_start and the speech events are the audio from the backbuffer to speech_end, without a gap.
      const rest = seen.slice(seen.indexOf(start) + 1, endIndex).map((s) => (s.event.type === 'speech' ? s.event.audio : new Int16Array(0)));
      assert.deepEqual(concatSamples([start.event.audio, ...rest]), padded.subarray(onset - backbufferDuration * RATE, seen[endIndex]!.at));
    }
  });

  it('gives the same events whatever the size of the pushes', async () => {
    const types = (seen: Seen[]) => edges(seen).map((s) => `${s.event.type}@${'atMs' in s.event ? s.event.atMs : ''}`);
    const byFrame = types(await run(model, padded));
    assert.deepEqual(types(await run(model, padded, {}, 160)), byFrame);
    assert.deepEqual(types(await run(model, padded, {}, padded.length)), byFrame);
  });

  it('minVolume above the speech level suppresses it', async () => {
    const level = rmsLevel(sentence);
    assert.ok(level < 0.3, `speech level ${level}`);
    assert.deepEqual(edges(await run(model, padded, { minVolume: 0.3 })), []);
  });

  it('ignores a click, and a short sound shorter than startDuration', async () => {
    const click = Int16Array.from({ length: 40 }, (_, i) => Math.round(20000 * Math.sin(i)));
    assert.deepEqual(edges(await run(model, concatSamples([silence(1), click, silence(1)]), { startDuration: 0 })), []);
    // "uh": about 0.2 s of speech. The model hears it (startDuration 0.1), but it is shorter than 0.3 s.
    const uh = concatSamples([silence(1), await speech('uh'), silence(1)]);
    assert.deepEqual(edges(await run(model, uh, { startDuration: 0.1 })).map((s) => s.event.type), ['speech_start', 'speech_end']);
    assert.deepEqual(edges(await run(model, uh, { startDuration: 0.3 })), []);
  });

  it('reset() forgets an utterance in progress', async () => {
    const vad = createVad(model, vadSettings());
    const events = await vad.push(concatSamples([silence(1), sentence.subarray(0, RATE)]));
    assert.deepEqual(events.filter((e) => e.type !== 'speech').map((e) => e.type), ['speech_start']);
    assert.equal(vad.speaking, true);
    vad.reset();
    assert.equal(vad.speaking, false);
    assert.deepEqual((await vad.push(silence(2))).filter((e) => e.type !== 'speech'), []);
  });
});
