import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { concatSamples } from '../../src/voice/audio/pcm.ts';
import { loadSileroModel, SILERO_CONTEXT, SILERO_WINDOW, type SileroModel } from '../../src/voice/vad-model.ts';
import { loadSileroWorker } from '../../src/voice/vad-worker.ts';
import { silence, speech } from './support/speech.ts';

/** Every window's speech probability, stepping the model as the VAD does (context + window, state carried). */
async function probabilities(model: SileroModel, pcm: Int16Array): Promise<number[]> {
  let state = model.initialState();
  let input = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
  const out: number[] = [];
  for (let at = 0; at + SILERO_WINDOW <= pcm.length; at += SILERO_WINDOW) {
    const next = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
    next.set(input.subarray(SILERO_WINDOW));
    for (let i = 0; i < SILERO_WINDOW; i++) next[SILERO_CONTEXT + i] = pcm[at + i]! / 32768;
    input = next;
    const step = await model.step(next, state);
    state = step.state;
    out.push(step.probability);
  }
  return out;
}

describe('Silero VAD on a worker thread', () => {
  let local: SileroModel;
  let worker: SileroModel;
  let audio: Int16Array;

  before(async () => {
    [local, worker] = await Promise.all([loadSileroModel(), loadSileroWorker()]);
    audio = concatSamples([silence(0.5), await speech('Good morning, I would like to change my address.'), silence(0.5)]);
  });
  after(() => Promise.all([local.close(), worker.close()]));

  it('gives the probabilities of the in-thread model, window for window', async () => {
    const [expected, got] = await Promise.all([probabilities(local, audio), probabilities(worker, audio)]);
    assert.equal(got.length, expected.length);
    got.forEach((p, i) => assert.ok(Math.abs(p - expected[i]!) < 1e-5, `window ${i}: ${p} vs ${expected[i]}`));
    assert.ok(Math.max(...got) > 0.9, 'the speech is found');
    assert.ok(got[0]! < 0.1, 'the leading silence is not');
  });

  it('keeps streams apart when several step at once (each carries its own state)', async () => {
    const expected = await probabilities(local, audio);
    const quiet = await probabilities(local, silence(3));
    const [a, b, c] = await Promise.all([probabilities(worker, audio), probabilities(worker, silence(3)), probabilities(worker, audio)]);
    for (const [got, want] of [[a, expected], [b, quiet], [c, expected]] as const) {
      got.forEach((p, i) => assert.ok(Math.abs(p - want[i]!) < 1e-5, `window ${i}`));
    }
  });

  it('refuses steps once closed, without leaving the worker behind', async () => {
    const own = await loadSileroWorker();
    await own.close();
    await assert.rejects(own.step(new Float32Array(SILERO_CONTEXT + SILERO_WINDOW), own.initialState()), /closed/);
  });
});
