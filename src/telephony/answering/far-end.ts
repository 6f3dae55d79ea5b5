import { matchPhrases, type PhraseKind } from './phrases.ts';
import { SpeechTracker } from './speech.ts';
import { BeepDetector, frameTone, type Beep } from './tone.ts';

/** One frame: 20 ms, 160 samples at 8 kHz. */
export const FRAME_MS = 20;

/**
 * A pause this long after speech ends a turn: a person who said "Hello?" waits this long at
 * most before they are answered, and a machine's pause between two sentences stays under it.
 */
export const TURN_PAUSE_MS = 600;

export interface HeardPhrase {
  kind: PhraseKind;
  phrase: string;
  /** Stream ms when the words came. */
  atMs: number;
}

/**
 * Everything heard from the far end since the answer, on its own stream clock (ms since the
 * first frame, 20 ms a frame): speech and pauses, beeps, and the phrases its words held.
 * Frames come from the media path; words from the call's speech-to-text, when it has one.
 */
export class FarEnd {
  readonly speech = new SpeechTracker(TURN_PAUSE_MS);
  readonly #beeps = new BeepDetector();
  readonly beeps: Beep[] = [];
  readonly phrases: HeardPhrase[] = [];
  /** Stream ms at the end of the last frame. */
  nowMs = 0;
  /** Stream ms at the end of the last frame that was speech or tone. */
  lastSoundMs = 0;

  /** Transcripts heard so far, in order (what a screening answer may be asked to reply to). */
  readonly words: string[] = [];

  /**
   * One frame of 160 samples scaled to [-1, 1]; true when it was speech. A `concealed` frame
   * (silence the jitter buffer played for packets that had not come) takes its 20 ms but neither
   * breaks a tone nor lowers the noise floor: a late packet in a beep's middle is not its end.
   */
  push(pcm: Float32Array, concealed = false): boolean {
    const atMs = this.nowMs;
    this.nowMs += FRAME_MS;
    const tone = frameTone(pcm);
    const beep = this.#beeps.push(concealed ? null : tone, atMs);
    if (beep) this.beeps.push(beep);
    const toneGoingOn = this.#beeps.pending;
    const speech = this.speech.push(toneGoingOn ? null : tone.levelDb, atMs, !concealed);
    if (speech || toneGoingOn) this.lastSoundMs = this.nowMs;
    return speech;
  }

  /** A steady tone is going on that may turn out a beep. */
  get tonePending(): boolean {
    return this.#beeps.pending;
  }

  /**
   * Words of the far end (an interim or a final transcript) said from `atMs` on; answers the
   * phrases they held, dated when they were said (a transcript comes a little later).
   */
  heard(text: string, atMs: number, final = true): HeardPhrase[] {
    if (final && text.trim()) this.words.push(text.trim());
    const found = matchPhrases(text).map((m) => ({ ...m, atMs }));
    this.phrases.push(...found);
    return found;
  }

  /** The first phrase of this kind heard since `sinceMs`. */
  phrase(kind: PhraseKind, sinceMs: number): HeardPhrase | undefined {
    return this.phrases.find((p) => p.kind === kind && p.atMs >= sinceMs);
  }

  /** The last beep that ended after `sinceMs`. */
  beepSince(sinceMs: number): Beep | undefined {
    const beep = this.beeps.at(-1);
    return beep && beep.endMs > sinceMs ? beep : undefined;
  }
}
