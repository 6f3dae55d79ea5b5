import { PIPELINE_RATE } from './audio/format.ts';
import { concatSamples, rmsLevel, samplesFor } from './audio/pcm.ts';
import { SILERO_CONTEXT, SILERO_WINDOW, type SileroModel } from './vad-model.ts';

/** The strategy's `vad.*` values; durations in seconds. */
export interface VadSettings {
  /** Model probability from which a window counts as speech. */
  confidenceThreshold: number;
  /** RMS level (0..1) below which a window is never speech, whatever the model says. */
  minVolume: number;
  /** Speech needed before `speech_start`; pauses up to 100 ms within it do not restart the count. */
  startDuration: number;
  /** Silence needed, without a break, before `speech_end`. */
  stopDuration: number;
  /** Audio kept from before the speech began, delivered with `speech_start`. */
  backbufferDuration: number;
}

export const DEFAULT_VAD_SETTINGS: Readonly<VadSettings> = Object.freeze({
  confidenceThreshold: 0.5,
  minVolume: 0,
  startDuration: 0.2,
  stopDuration: 0.8,
  backbufferDuration: 0.3,
});

/** A strategy's partial `vad` object completed with the defaults. */
export function vadSettings(values: Partial<VadSettings> = {}): VadSettings {
  const defined = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<VadSettings>;
  return { ...DEFAULT_VAD_SETTINGS, ...defined };
}

export type VadEvent =
  /** atMs: stream time the speech began; audio: the backbuffer, then the speech so far. */
  | { type: 'speech_start'; atMs: number; audio: Int16Array }
  /** Audio after speech_start, window by window, up to and including the window of speech_end. */
  | { type: 'speech'; audio: Int16Array }
  /** atMs: stream time the speech stopped; decidedMs: the stream time at which that became sure (stopDuration later). */
  | { type: 'speech_end'; atMs: number; decidedMs: number };

export interface Vad {
  /** The next PCM16 audio at 16 kHz (any length); the events its complete windows decided. */
  push(pcm16k: Int16Array): Promise<VadEvent[]>;
  readonly speaking: boolean;
  /** Speaking, or a run of speech under way that is not yet startDuration long. */
  readonly hearing: boolean;
  /** Forget the speech state and the model's memory; stream time runs on. */
  reset(): void;
}

const msAt = (sample: number) => (sample * 1000) / PIPELINE_RATE;

/**
 * A pause this short (100 ms) does not break the speech counted towards startDuration: the
 * closure of a stop consonant ("What time") would otherwise restart the count, and speech_start
 * would be timed from the second word, after its backbuffer had lost the first.
 */
const START_GAP_SAMPLES = 0.1 * PIPELINE_RATE;

/**
 * Voice activity detection with Silero VAD on 512-sample windows (32 ms). Pushes are processed
 * in order, one after the other, whatever their size; stream time counts from the first sample
 * pushed. Every window runs through the model, speech or not, so its recurrent state follows
 * the audio without gaps.
 */
export function createVad(model: SileroModel, settings: VadSettings): Vad {
  const startSamples = samplesFor(settings.startDuration, PIPELINE_RATE);
  const stopSamples = samplesFor(settings.stopDuration, PIPELINE_RATE);
  const backSamples = samplesFor(settings.backbufferDuration, PIPELINE_RATE);

  const partial = new Int16Array(SILERO_WINDOW);
  let filled = 0;
  let processed = 0; // stream samples that went through the model
  let state = model.initialState();
  let input = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
  let recent: { start: number; audio: Int16Array }[] = []; // windows for the backbuffer and start run
  let speaking = false;
  let runStart: number | null = null; // where the speech run (before speech_start) began
  let runSpeech = 0; // samples of speech in that run
  let runGap = 0; // samples of non-speech since the run's last speech window
  let silenceStart: number | null = null; // where the silence (while speaking) began
  let delivered = 0; // stream samples already delivered with speech events: a backbuffer never repeats them
  let generation = 0; // bumped by reset() so that a step in flight is dropped
  let queue: Promise<unknown> = Promise.resolve();

  function forget(): void {
    filled = 0;
    state = model.initialState();
    input = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
    recent = [];
    speaking = false;
    endRun();
    silenceStart = null;
    delivered = 0;
  }

  function endRun(): void {
    runStart = null;
    runSpeech = 0;
    runGap = 0;
  }

  async function window(audio: Int16Array, events: VadEvent[]): Promise<void> {
    const next = new Float32Array(SILERO_CONTEXT + SILERO_WINDOW);
    next.set(input.subarray(SILERO_WINDOW)); // the last 64 samples of the previous input
    for (let i = 0; i < SILERO_WINDOW; i++) next[SILERO_CONTEXT + i] = audio[i]! / 32768;
    input = next;
    const start = processed;
    const end = (processed += SILERO_WINDOW);
    const seen = generation;
    const result = await model.step(next, state);
    if (seen !== generation) return; // reset() while the model ran: this window belongs to the forgotten state
    state = result.state;

    const isSpeech = result.probability >= settings.confidenceThreshold && rmsLevel(audio) >= settings.minVolume;
    recent.push({ start, audio });
    // Keep the windows of the run so far and of the backbuffer before it (this window may start a run).
    const keepFrom = (runStart ?? start) - backSamples;
    while (recent.length > 1 && recent[1]!.start <= keepFrom) recent.shift();

    if (speaking) {
      events.push({ type: 'speech', audio });
      delivered = end;
      if (isSpeech) silenceStart = null;
      else if ((silenceStart ??= start) <= end - stopSamples) {
        events.push({ type: 'speech_end', atMs: msAt(silenceStart), decidedMs: msAt(end) });
        speaking = false;
        silenceStart = null;
      }
      return;
    }
    if (!isSpeech) {
      if (runStart !== null && (runGap += SILERO_WINDOW) > START_GAP_SAMPLES) endRun();
      return;
    }
    runStart ??= start;
    runSpeech += SILERO_WINDOW;
    runGap = 0;
    if (runSpeech < startSamples) return;
    // The backbuffer reaches back before the run, but never into audio an earlier utterance delivered.
    const from = Math.max(0, runStart - backSamples, delivered);
    const held = recent.filter((w) => w.start + SILERO_WINDOW > from);
    const audioSoFar = concatSamples(held.map((w) => w.audio)).subarray(from - held[0]!.start);
    events.push({ type: 'speech_start', atMs: msAt(runStart), audio: audioSoFar });
    delivered = end;
    speaking = true;
    endRun();
  }

  async function process(pcm: Int16Array): Promise<VadEvent[]> {
    const events: VadEvent[] = [];
    for (let at = 0; at < pcm.length; ) {
      const take = Math.min(SILERO_WINDOW - filled, pcm.length - at);
      partial.set(pcm.subarray(at, at + take), filled);
      filled += take;
      at += take;
      if (filled < SILERO_WINDOW) break;
      filled = 0;
      await window(partial.slice(), events);
    }
    return events;
  }

  return {
    get speaking() {
      return speaking;
    },
    get hearing() {
      return speaking || runStart !== null;
    },
    push(pcm16k) {
      const result = queue.then(() => process(pcm16k));
      queue = result.catch(() => undefined);
      return result;
    },
    reset() {
      generation++;
      forget();
    },
  };
}
