import type { DetectionSignal as Signal, SignalName, Verdict } from '../../calls/voicemail-detection.ts';
import { TURN_PAUSE_MS, type FarEnd } from './far-end.ts';

/** An answer longer than this without a turn's pause is a machine talking (a person says "Hello?" and waits). */
export const HUMAN_MAX_SPEECH_MS = 2400;
/** Nobody spoke for this long: a person waiting for the caller to speak first. */
export const INITIAL_SILENCE_MS = 3500;
/** With words coming, a long talker is heard this long before its words decide voicemail or screening. */
export const WORDS_WAIT_MS = 4500;
/** Silence after a greeting without a beep: it is over. */
export const GREETING_END_MS = 1500;
/** Silence after a screening prompt: it waits for us to answer. */
export const PROMPT_END_MS = 800;

export interface JudgeOptions {
  /** Words will come (the call has a speech-to-text), so a long talker is heard out for them. */
  words: boolean;
  detectScreening: boolean;
}

/**
 * Who answered, from what was heard since `sinceMs`, or null while it cannot be told yet. Words
 * first (a screening prompt, a voicemail greeting), then a beep, then the cadence: a short answer
 * followed by a turn's pause is a person, speech that runs on is a machine, a silent line is a
 * person waiting.
 */
export function judgeAnswer(far: FarEnd, options: JudgeOptions, sinceMs: number): { verdict: Verdict; signal: Signal } | null {
  const screening = options.detectScreening ? far.phrase('screening', sinceMs) : undefined;
  if (screening) return { verdict: 'screening', signal: { signal: 'screening_words', atMs: screening.atMs, phrase: screening.phrase } };
  const words = far.phrase('voicemail', sinceMs);
  if (words) return { verdict: 'voicemail', signal: { signal: 'voicemail_words', atMs: words.atMs, phrase: words.phrase } };
  const beep = far.beepSince(sinceMs);
  if (beep) return { verdict: 'voicemail', signal: beepSignal(beep) };
  const cadence = judgeCadence(far, options, sinceMs);
  if (cadence === 'machine') return { verdict: 'voicemail', signal: speechSignal(far, 'long_speech') };
  if (cadence === 'person') return { verdict: 'human', signal: speechSignal(far, 'short_answer') };
  if (!far.speech.heardAny && far.nowMs - sinceMs >= INITIAL_SILENCE_MS) return { verdict: 'human', signal: { signal: 'silence', atMs: sinceMs, durationMs: far.nowMs - sinceMs } };
  return null;
}

/**
 * After a screening assistant was answered: a person picking up ("Hello?" and a pause), or a
 * machine taking over (a voicemail greeting, a beep). Speech the screener itself says about
 * holding on is neither.
 */
export function judgeAfterScreening(far: FarEnd, sinceMs: number): { verdict: 'human' | 'voicemail'; signal: Signal } | null {
  const words = far.phrase('voicemail', sinceMs);
  if (words) return { verdict: 'voicemail', signal: { signal: 'voicemail_words', atMs: words.atMs, phrase: words.phrase } };
  const beep = far.beepSince(sinceMs);
  if (beep) return { verdict: 'voicemail', signal: beepSignal(beep) };
  const utterance = far.speech.utterance;
  const hold = far.phrase('hold', Math.max(sinceMs, utterance?.startMs ?? sinceMs));
  if (hold) return null;
  const cadence = judgeCadence(far, { words: true, detectScreening: false }, sinceMs);
  if (cadence === 'machine') return { verdict: 'voicemail', signal: speechSignal(far, 'long_speech') };
  if (cadence === 'person') return { verdict: 'human', signal: speechSignal(far, 'person_answered') };
  return null;
}

/**
 * When we may speak after a machine's words (a message after a greeting, an answer after a
 * screening prompt): the beep has ended and nothing was said after it, or the far end has been
 * silent for `endMs` without a beep. Never while a tone that may be the beep goes on.
 */
export function greetingOver(far: FarEnd, endMs = GREETING_END_MS, signal: 'greeting_ended' | 'prompt_ended' = 'greeting_ended'): Signal | null {
  if (far.tonePending) return null;
  const beep = far.beeps.at(-1);
  const silentSince = far.lastSoundMs;
  if (beep && beep.endMs >= silentSince) return beepSignal(beep);
  if (far.nowMs - silentSince >= endMs && far.speech.heardAny) return { signal, atMs: silentSince, durationMs: far.nowMs - silentSince };
  return null;
}

function judgeCadence(far: FarEnd, options: JudgeOptions, sinceMs: number): 'person' | 'machine' | null {
  const utterance = far.speech.utterance;
  if (!utterance || utterance.endMs <= sinceMs) return null;
  const length = utterance.endMs - Math.max(utterance.startMs, sinceMs);
  const paused = far.nowMs - utterance.endMs >= TURN_PAUSE_MS;
  if (length > HUMAN_MAX_SPEECH_MS) {
    // Heard out for its words when they may yet say screening: until they come, the talker stops, or WORDS_WAIT_MS.
    const waitForWords = options.words && options.detectScreening;
    return !waitForWords || paused || length >= WORDS_WAIT_MS ? 'machine' : null;
  }
  return paused ? 'person' : null;
}

function beepSignal(beep: { startMs: number; endMs: number; frequencyHz: number; levelDbfs: number }): Signal {
  return { signal: 'beep', atMs: beep.startMs, durationMs: beep.endMs - beep.startMs, frequencyHz: beep.frequencyHz, levelDbfs: beep.levelDbfs };
}

function speechSignal(far: FarEnd, signal: SignalName): Signal {
  const utterance = far.speech.utterance!;
  return { signal, atMs: utterance.startMs, durationMs: utterance.endMs - utterance.startMs };
}
