/**
 * Speech and pauses on the far end, frame by frame, from the level alone: a frame is speech when
 * it stands 10 dB above the line's noise floor (the quietest frame of the last 1.5 s, so line
 * noise and a noisy room are the floor, not speech). Tones are not speech: the caller passes
 * frames the beep detector claims as silence. An utterance is speech whose pauses are all
 * shorter than a turn (`turnPauseMs`): what a person says before waiting for an answer.
 */

const FLOOR_FRAMES = 75;
const ABOVE_FLOOR_DB = 10;
/** Never speech below this, whatever the floor (dBFS). */
const MIN_SPEECH_DB = -50;
/** A floor above this is speech without pauses, not noise. */
const MAX_FLOOR_DB = -30;
/** Speech frames in a row that start speech (40 ms): a click is not a word. */
const ONSET_FRAMES = 2;

export interface Utterance {
  /** Stream ms of its first and (so far) last speech frame's end. */
  startMs: number;
  endMs: number;
}

export class SpeechTracker {
  readonly #levels: number[] = [];
  #run = 0;
  #utterance: Utterance | null = null;
  #utterances = 0;
  #heardAny = false;

  constructor(private readonly turnPauseMs: number) {}

  /** The utterance under way (its pauses shorter than a turn), or the last one. */
  get utterance(): Utterance | null {
    return this.#utterance;
  }

  /** Utterances begun since the start (or the last reset). */
  get count(): number {
    return this.#utterances;
  }

  get heardAny(): boolean {
    return this.#heardAny;
  }

  /** Frames since the last speech ended (ms), or since the start when there was none. */
  silenceMs(nowMs: number, sinceMs: number): number {
    return nowMs - (this.#utterance?.endMs ?? sinceMs);
  }

  /** Forgets the utterances (a new phase listens afresh); the noise floor stays. */
  reset(): void {
    this.#utterance = null;
    this.#utterances = 0;
    this.#heardAny = false;
    this.#run = 0;
  }

  /**
   * One 20 ms frame that began at `atMs`, at `levelDb` (or null: a tone, which is not speech nor noise);
   * `inFloor` false keeps it out of the noise floor (a frame partly made up by the jitter buffer).
   * True when it was speech.
   */
  push(levelDb: number | null, atMs: number, inFloor = true): boolean {
    const level = levelDb ?? -120;
    // A tone is not the line's noise either: the floor is measured between words.
    if (inFloor && levelDb !== null) {
      this.#levels.push(level);
      if (this.#levels.length > FLOOR_FRAMES) this.#levels.shift();
    }
    const floor = Math.min(MAX_FLOOR_DB, ...this.#levels);
    const loud = levelDb !== null && level >= MIN_SPEECH_DB && level >= floor + ABOVE_FLOOR_DB;
    this.#run = loud ? this.#run + 1 : 0;
    if (this.#run < ONSET_FRAMES) return false;
    const end = atMs + 20;
    const current = this.#utterance;
    if (current && atMs - current.endMs < this.turnPauseMs) {
      current.endMs = end;
    } else {
      this.#utterance = { startMs: atMs - (ONSET_FRAMES - 1) * 20, endMs: end };
      this.#utterances += 1;
    }
    this.#heardAny = true;
    return true;
  }
}
