/**
 * The beep of an answering machine: one sustained tone (roughly 300-2,000 Hz), steady in
 * frequency and level over at least six whole 20 ms frames. Each frame of 8 kHz PCM gets a
 * Goertzel filter bank (every 50 Hz, then every 5 Hz around the best bin), so a frame costs
 * about 46 filters of 160 samples; frames too quiet to hold a beep cost one sum of squares.
 */

const RATE = 8000;
const LOW_HZ = 300;
const HIGH_HZ = 2000;
const COARSE_STEP_HZ = 50;
const FINE_SPAN_HZ = 25;
const FINE_STEP_HZ = 5;
/** Quieter frames are never a beep (dBFS). */
const MIN_LEVEL_DB = -50;
/** Share of the frame's energy at the tone's frequency: a sine is 1, speech spreads over harmonics. */
const MIN_PURITY = 0.75;
/** A beep's frames stay this close to its frequency and level. */
const MAX_DRIFT_HZ = 25;
const MAX_LEVEL_SWING_DB = 4;
/** A 150 ms beep fills at least six whole frames wherever it starts; speech never held one tone for more than one. */
export const MIN_BEEP_FRAMES = 6;
/** Longer steady tones (a fax, a dial tone) are not a beep to speak after. */
const MAX_BEEP_FRAMES = 150;

export interface Beep {
  /** Stream ms: where its first whole frame began, and the end of the first frame without it. */
  startMs: number;
  endMs: number;
  frequencyHz: number;
  levelDbfs: number;
}

/** The tone a frame holds, if any: frequency, share of the energy, level. */
export interface FrameTone {
  levelDb: number;
  frequencyHz: number;
  purity: number;
}

/** Squared magnitude of the DFT of `pcm` at `hz` (Goertzel; any frequency, not only bins). */
function goertzel(pcm: Float32Array, hz: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < pcm.length; i++) {
    const s = pcm[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

/** A frame's level and its strongest tone in the band (purity 0 when too quiet to look). */
export function frameTone(pcm: Float32Array): FrameTone {
  let energy = 0;
  for (let i = 0; i < pcm.length; i++) energy += pcm[i]! * pcm[i]!;
  const levelDb = 10 * Math.log10(energy / pcm.length + 1e-12);
  if (levelDb < MIN_LEVEL_DB) return { levelDb, frequencyHz: 0, purity: 0 };
  let best = LOW_HZ;
  let bestPower = -1;
  for (let hz = LOW_HZ; hz <= HIGH_HZ; hz += COARSE_STEP_HZ) {
    const power = goertzel(pcm, hz);
    if (power > bestPower) [best, bestPower] = [hz, power];
  }
  const coarse = best;
  for (let hz = coarse - FINE_SPAN_HZ; hz <= coarse + FINE_SPAN_HZ; hz += FINE_STEP_HZ) {
    if (hz === coarse) continue;
    const power = goertzel(pcm, hz);
    if (power > bestPower) [best, bestPower] = [hz, power];
  }
  // A sine of amplitude A at `best`: power (A·N/2)², energy A²·N/2; their ratio below is 1.
  return { levelDb, frequencyHz: best, purity: bestPower / ((energy * pcm.length) / 2) };
}

/**
 * Follows the frames' tones and reports a beep once it is over: two frames in a row without it
 * (one odd frame inside a beep, a packet lost or late, does not end it), dated from the first of
 * them. `pending` says a steady tone has begun (two frames or more) and may yet turn out a beep:
 * whoever waits for one waits on, and its frames are not speech. A null frame (nothing known of
 * it) neither continues nor breaks a tone.
 */
export class BeepDetector {
  #run: { startMs: number; frames: number; hz: number; level: number; missedAtMs: number | null } | null = null;

  get pending(): boolean {
    return (this.#run?.frames ?? 0) >= 2;
  }

  /** One frame that began at `atMs`; answers the beep that has ended, if one has. */
  push(tone: FrameTone | null, atMs: number): Beep | null {
    if (!tone) return null;
    const run = this.#run;
    const tonal = tone.purity >= MIN_PURITY && tone.frequencyHz >= LOW_HZ && tone.frequencyHz <= HIGH_HZ;
    if (run && tonal && Math.abs(tone.frequencyHz - run.hz) <= MAX_DRIFT_HZ && Math.abs(tone.levelDb - run.level) <= MAX_LEVEL_SWING_DB) {
      run.frames += 1;
      run.missedAtMs = null;
      // The mean of the run so far: an edge frame must not set the reference alone.
      run.hz += (tone.frequencyHz - run.hz) / run.frames;
      run.level += (tone.levelDb - run.level) / run.frames;
      return null;
    }
    if (run && run.frames >= MIN_BEEP_FRAMES && run.missedAtMs === null) {
      run.missedAtMs = atMs;
      return null;
    }
    this.#run = tonal ? { startMs: atMs, frames: 1, hz: tone.frequencyHz, level: tone.levelDb, missedAtMs: null } : null;
    if (!run || run.frames < MIN_BEEP_FRAMES || run.frames > MAX_BEEP_FRAMES) return null;
    const endMs = (run.missedAtMs ?? atMs) + 20;
    return { startMs: run.startMs, endMs, frequencyHz: Math.round(run.hz), levelDbfs: Math.round(run.level) };
  }
}
