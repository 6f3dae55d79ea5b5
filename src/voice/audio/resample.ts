/**
 * Streaming rational resampler: a polyphase windowed-sinc (Kaiser) FIR, int16 in and out.
 * Written here rather than taken from libsamplerate-js; docs/voice.md says why (one wasm
 * instance of 1.6 MB per stream, an async factory, and several times the CPU per frame).
 *
 * The rate change fromRate -> toRate is the fraction up/down (reduced by their gcd). One
 * low-pass prototype is designed at the rate up * fromRate, cut below half the lower of the two
 * rates, and split into `up` phases of `taps` taps each; output sample n is the dot product of
 * one phase with the last `taps` input samples. The input samples the filter still reaches back
 * to, and where the next output falls, carry over from chunk to chunk, so cutting a stream
 * anywhere changes nothing in the output.
 */

export interface Resampler {
  /** Converts the next chunk of the stream; the output holds every sample the input completes. */
  process(input: Int16Array): Int16Array;
}

/** Zero crossings of the sinc on each side, counted at the lower rate: the filter's length. */
const ZERO_CROSSINGS = 16;
/** Kaiser window shape: about 75 dB of stopband attenuation. */
const KAISER_BETA = 7;
/**
 * Cutoff as a fraction of the lower rate's Nyquist frequency. With the length above, at 8 kHz:
 * 3.4 kHz passes at -0.8 dB, and 4.2 kHz (which would fold back to 3.8 kHz) is down 53 dB.
 */
const CUTOFF = 0.92;

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

  // work holds the last taps - 1 input samples (zeros before the stream starts), then the new
  // chunk. The first output waits for the filter's delay (centre) to fill, so that output sample
  // n sits exactly at input time n * fromRate / toRate: the filter adds latency, never lag.
  const centre = Math.floor((taps * up - 1) / 2);
  let work = new Float64Array(taps - 1 + 4096);
  let position = taps - 1 + Math.floor(centre / up); // the newest input sample the next output reads
  let phase = centre % up;

  return {
    process(input) {
      const end = taps - 1 + input.length;
      if (end > work.length) {
        const grown = new Float64Array(end);
        grown.set(work.subarray(0, taps - 1));
        work = grown;
      }
      for (let j = 0; j < input.length; j++) work[taps - 1 + j] = input[j]!;
      const count = Math.max(0, Math.ceil(((end - position) * up - phase) / down));
      const output = new Int16Array(count);
      for (let n = 0; n < count; n++) {
        const value = dot(work, position, filter, phase * taps, taps);
        output[n] = value >= 32767 ? 32767 : value <= -32768 ? -32768 : Math.round(value);
        phase += down;
        position += Math.floor(phase / up);
        phase %= up;
      }
      work.copyWithin(0, end - (taps - 1), end);
      position -= input.length;
      return output;
    },
  };
}

/** sum over k of x[newest - k] * h[row + k], in four running sums the CPU can overlap. */
function dot(x: Float64Array, newest: number, h: Float64Array, row: number, taps: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < taps; k += 4) {
    s0 += x[newest - k]! * h[row + k]!;
    s1 += x[newest - k - 1]! * h[row + k + 1]!;
    s2 += x[newest - k - 2]! * h[row + k + 2]!;
    s3 += x[newest - k - 3]! * h[row + k + 3]!;
  }
  for (; k < taps; k++) s0 += x[newest - k]! * h[row + k]!;
  return s0 + s1 + s2 + s3;
}

/**
 * The prototype low-pass at the upsampled rate (cutoff in cycles per upsampled sample), split
 * into phases and laid out phase by phase: h[phase * taps + k] is tap k of that phase. Each
 * phase is scaled to a DC gain of exactly 1, which also makes up for the zeros upsampling puts
 * between input samples.
 */
function designFilter(up: number, taps: number, cutoff: number): Float64Array {
  // An odd length puts the centre on a sample, so the delay is a whole number of upsampled
  // samples and can be taken out exactly; a table of even size ends with a zero tap.
  const length = (taps * up) % 2 === 1 ? taps * up : taps * up - 1;
  const centre = (length - 1) / 2;
  const norm = besselI0(KAISER_BETA);
  const prototype = (j: number) => {
    if (j >= length) return 0;
    const t = j - centre;
    const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
    const r = t / (centre + 0.5);
    return (sinc * besselI0(KAISER_BETA * Math.sqrt(1 - r * r))) / norm;
  };
  const h = new Float64Array(taps * up);
  for (let phase = 0; phase < up; phase++) {
    const row = h.subarray(phase * taps, (phase + 1) * taps);
    for (let k = 0; k < taps; k++) row[k] = prototype(phase + k * up);
    const sum = row.reduce((total, tap) => total + tap, 0);
    for (let k = 0; k < taps; k++) row[k] = row[k]! / sum;
  }
  return h;
}

/** The modified Bessel function of the first kind, order 0 (its series converges fast here). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; term > 1e-12 * sum; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}
