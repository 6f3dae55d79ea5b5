/**
 * Streaming rational resampler: a polyphase windowed-sinc (Kaiser) FIR, int16 in and out.
 * Written here rather than taken from libsamplerate-js; docs/voice.md says why (one wasm
 * instance of 1.6 MB per stream, an async factory, and several times the CPU per frame).
 *
 * The rate change fromRate -> toRate is the fraction up/down (reduced by their gcd). Output
 * sample n sits at input position n * down / up; its value is the sum over K input samples of
 * x[i - k] * h[phase + k * up], where h is one low-pass prototype at the rate up * fromRate,
 * cut below half the lower of the two rates. The filter state (the last K - 1 input samples,
 * and where the next output falls) carries over from one chunk to the next, so chunking
 * changes nothing in the output.
 */

export interface Resampler {
  /** Converts the next chunk of the stream; the output holds every sample the input completes. */
  process(input: Int16Array): Int16Array;
}

/** Zero crossings of the sinc on each side, counted at the lower of the two rates. */
const ZERO_CROSSINGS = 12;
/** Kaiser window shape: about 70 dB of stopband attenuation. */
const KAISER_BETA = 7;
/** Passband edge as a fraction of the lower rate's Nyquist frequency (3.6 kHz at 8 kHz). */
const CUTOFF = 0.9;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

export function createResampler(fromRate: number, toRate: number): Resampler {
  if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) {
    throw new RangeError(`sample rates must be positive integers, got ${fromRate} -> ${toRate}`);
  }
  if (fromRate === toRate) return { process: (input) => input };
  const g = gcd(fromRate, toRate);
  const up = toRate / g;
  const down = fromRate / g;
  const taps = Math.ceil(2 * ZERO_CROSSINGS * Math.max(1, fromRate / toRate));
  const filter = designFilter(up, taps, (CUTOFF * Math.min(fromRate, toRate)) / (2 * fromRate * up));

  // history holds the last taps - 1 input samples (zeros before the stream starts).
  let work = new Float32Array(taps - 1 + 1024);
  let held = taps - 1;
  let position = taps - 1; // input index (in work) of the next output
  let phase = 0;

  return {
    process(input) {
      if (held + input.length > work.length) {
        const grown = new Float32Array(held + input.length);
        grown.set(work.subarray(0, held));
        work = grown;
      }
      for (let j = 0; j < input.length; j++) work[held + j] = input[j]!;
      const end = held + input.length;
      const count = Math.max(0, Math.ceil(((end - position) * up - phase) / down));
      const output = new Int16Array(count);
      const x = work;
      let at = position;
      let ph = phase;
      for (let n = 0; n < count; n++) {
        let acc = 0;
        for (let k = 0; k < taps; k++) acc += x[at - k]! * filter[ph + k * up]!;
        output[n] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
        ph += down;
        while (ph >= up) {
          ph -= up;
          at++;
        }
      }
      position = at;
      phase = ph;
      // Keep the samples the next outputs still reach back to.
      const keepFrom = end - (taps - 1);
      work.copyWithin(0, keepFrom, end);
      held = taps - 1;
      position -= keepFrom;
      return output;
    },
  };
}

/**
 * The prototype low-pass at the upsampled rate, laid out so that h[phase + k * up] is the
 * k-th tap of that phase. cutoff is in cycles per upsampled sample. The gain of up makes up
 * for the zeros that upsampling puts between input samples.
 */
function designFilter(up: number, taps: number, cutoff: number): Float32Array {
  const length = taps * up;
  const h = new Float32Array(length);
  const centre = (length - 1) / 2;
  const norm = besselI0(KAISER_BETA);
  for (let j = 0; j < length; j++) {
    const t = j - centre;
    const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
    const r = t / (centre + 0.5);
    const window = besselI0(KAISER_BETA * Math.sqrt(Math.max(0, 1 - r * r))) / norm;
    h[j] = up * sinc * window;
  }
  return h;
}

/** The modified Bessel function of the first kind, order 0 (series; converges fast for beta <= 10). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < 1e-12 * sum) break;
  }
  return sum;
}
