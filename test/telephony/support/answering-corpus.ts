// The far ends of answered calls, made at test time: speech by espeak-ng (several voices and
// speeds) resampled by sox to 8 kHz, beeps and line noise synthesised here (a seeded generator,
// so every run plays the same samples). Each call says what a perfect speech-to-text would hear,
// sentence by sentence, and where its speech and beep are, for the checks and the bench.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readWav } from '../../helpers/audio.ts';

const run = promisify(execFile);
const RATE = 8000;

export type AnswerClass = 'human' | 'voicemail' | 'screening';

type Part = { say: string } | { pause: number } | { beep: { hz: number; ms: number; db: number } };

export interface CallSpec {
  name: string;
  kind: AnswerClass;
  /** espeak-ng voice (and variant), words per minute. */
  voice: string;
  speed: number;
  parts: Part[];
  /** Gain applied to the speech, dB (espeak-ng peaks near full scale). */
  gainDb?: number;
  /** Noise under everything: line hiss (white) or a room (brown), its level in dBFS. */
  noise?: { color: 'white' | 'brown'; db: number };
}

export interface CorpusCall {
  spec: CallSpec;
  kind: AnswerClass;
  /** What the far end plays from the answer on, 8 kHz mono. */
  pcm: Int16Array;
  /** What a perfect speech-to-text hears, one entry per sentence, in order. */
  sentences: string[];
  /** Each piece of speech: its words and where it is, ms into `pcm`. */
  spans: { text: string; startMs: number; endMs: number }[];
  /** ms into `pcm`: where the first speech begins, and the first speech's end. */
  speechStartMs: number;
  firstSpeechEndMs: number;
  /** The last beep, ms into `pcm`; null without one. */
  beep: { startMs: number; endMs: number } | null;
  /** Where the last sound (speech or beep) before the far end fell silent ends. */
  soundEndMs: number;
}

/** A small seeded generator (mulberry32): the same noise every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** espeak-ng's speech of `text` at 8 kHz, its leading and trailing silence cut (cached in `dir`). */
async function speech(dir: string, voice: string, speed: number, text: string): Promise<Int16Array> {
  const key = createHash('sha256').update(`${voice}|${speed}|${text}`).digest('hex').slice(0, 16);
  const path = join(dir, `${key}.wav`);
  if (!existsSync(path)) {
    const raw = join(dir, `${key}.espeak.wav`);
    await run('espeak-ng', ['-v', voice, '-s', String(speed), '-w', raw, text]);
    await run('sox', [raw, '-r', String(RATE), '-c', '1', '-b', '16', path]);
  }
  const { pcm } = await readWav(path);
  let peak = 0;
  for (const s of pcm) peak = Math.max(peak, Math.abs(s));
  const limit = peak * 0.02;
  let start = 0;
  while (start < pcm.length && Math.abs(pcm[start]!) < limit) start++;
  let end = pcm.length;
  while (end > start && Math.abs(pcm[end - 1]!) < limit) end--;
  return pcm.slice(start, end);
}

function tone(hz: number, ms: number, db: number): Float64Array {
  const n = Math.round((ms * RATE) / 1000);
  const amplitude = 10 ** (db / 20) * Math.SQRT2; // db is the tone's RMS level
  const ramp = Math.round(RATE * 0.003);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / RATE) * Math.min(1, i / ramp, (n - 1 - i) / ramp);
  return out;
}

export async function buildCall(dir: string, spec: CallSpec, seed = 1): Promise<CorpusCall> {
  const pieces: Float64Array[] = [];
  const sentences: string[] = [];
  const spans: CorpusCall['spans'] = [];
  let at = 0;
  let speechStartMs = -1;
  let firstSpeechEndMs = -1;
  let beep: CorpusCall['beep'] = null;
  let soundEndMs = 0;
  const gain = 10 ** ((spec.gainDb ?? -6) / 20);
  for (const part of spec.parts) {
    let piece: Float64Array;
    if ('say' in part) {
      const pcm = await speech(dir, spec.voice, spec.speed, part.say);
      piece = Float64Array.from(pcm, (s) => (s / 32768) * gain);
      sentences.push(...part.say.split(/(?<=[.?!])\s+/).filter(Boolean));
      spans.push({ text: part.say, startMs: at, endMs: at + (piece.length * 1000) / RATE });
      if (speechStartMs < 0) {
        speechStartMs = at;
        firstSpeechEndMs = at + (piece.length * 1000) / RATE;
      }
    } else if ('pause' in part) {
      piece = new Float64Array(Math.round((part.pause * RATE) / 1000));
    } else {
      piece = tone(part.beep.hz, part.beep.ms, part.beep.db);
      beep = { startMs: at, endMs: at + part.beep.ms };
    }
    pieces.push(piece);
    const ms = (piece.length * 1000) / RATE;
    if (!('pause' in part)) soundEndMs = at + ms;
    at += ms;
  }
  const total = pieces.reduce((n, p) => n + p.length, 0);
  const mixed = new Float64Array(total);
  let offset = 0;
  for (const piece of pieces) {
    mixed.set(piece, offset);
    offset += piece.length;
  }
  if (spec.noise) {
    const next = random(seed);
    const level = 10 ** (spec.noise.db / 20);
    let brown = 0;
    for (let i = 0; i < total; i++) {
      const white = (next() * 2 - 1) * Math.sqrt(3); // unit RMS
      brown = 0.98 * brown + 0.2 * white;
      mixed[i] = mixed[i]! + level * (spec.noise.color === 'white' ? white : brown / 1.0);
    }
  }
  const pcm = Int16Array.from(mixed, (s) => Math.max(-32768, Math.min(32767, Math.round(s * 32768))));
  return { spec, kind: spec.kind, pcm, sentences, spans, speechStartMs, firstSpeechEndMs, beep, soundEndMs };
}

const VOICES = ['en-us', 'en-gb', 'en-us+f3', 'en-gb+f2', 'en-us+m3', 'en-029', 'en-gb-x-rp+f4', 'en-gb-scotland'];
const voice = (i: number) => VOICES[i % VOICES.length]!;

/** What people say when they pick up, and what they say when nobody answers them. */
const PEOPLE: [string, string][] = [
  ['one word', 'Hello?'],
  ['one word', 'Yes?'],
  ['one word', 'Hi.'],
  ['one word', 'Speaking.'],
  ['short sentence', 'Yes, speaking.'],
  ['short sentence', 'Who is this?'],
  ['short sentence', 'Hello, who is calling?'],
  ['with a name', 'Hi, this is Anna.'],
  ['with a name', 'Anna Smith speaking.'],
  ['with a name', 'Hello, David here.'],
];

const GREETINGS = [
  'Hi, you have reached Anna Smith. I cannot take your call right now. Please leave a message after the tone.',
  'Hello. The person you are calling is not available. Please record your message after the beep.',
  'Please leave a message.',
  'You have reached the voicemail of David Jones. Leave your name and number and I will call you back.',
  'Hi, it is Maria. Leave a message.',
  'Thank you for calling Smith and Partners. Our office is currently closed. Our opening hours are Monday to Friday, nine to five. ' +
    'If your matter is urgent, please leave a detailed message with your name, your phone number and the reason for your call, and we will return your call on the next working day.',
  'The mailbox of Tom is full for now, but you can still leave a short message after the tone.',
  'Hey, this is Chris. I am probably out on my bike. Tell me what you need and I will get back to you later today.',
];

const SCREENERS = [
  'Hi, the person you are calling is using a screening service and will get a copy of this conversation. Go ahead and say your name and why you are calling.',
  'Hello, I am an assistant helping the person you called. Please say your name and the reason for your call.',
  'Please state your name after the tone, and I will see if this person is available.',
];

/**
 * The bench's corpus: 20 people (one word, a short sentence, a name, a pause before speaking,
 * noise behind them), 18 voicemail greetings of 3 to 20 s (beeps of 440-1,400 Hz, 160 ms to 1 s,
 * -6 to -26 dBFS; some with line noise, four without a beep) and 6 screening prompts.
 */
export function corpusSpecs(): CallSpec[] {
  const specs: CallSpec[] = [];
  PEOPLE.forEach(([how, words], i) => {
    specs.push({ name: `person, ${how}: "${words}"`, kind: 'human', voice: voice(i), speed: 160 + (i % 3) * 10, parts: [{ pause: 300 + (i % 4) * 150 }, { say: words }, { pause: 3500 }, { say: 'Hello? Is anyone there?' }, { pause: 3000 }] });
  });
  [1200, 1800, 2500].forEach((pause, i) => {
    const words = PEOPLE[i * 3]![1];
    specs.push({ name: `person, ${pause / 1000} s pause before speaking: "${words}"`, kind: 'human', voice: voice(i + 3), speed: 165, parts: [{ pause }, { say: words }, { pause: 3500 }, { say: 'Hello?' }, { pause: 3000 }] });
  });
  ([['brown', -38], ['brown', -32], ['white', -42], ['brown', -35], ['white', -38], ['brown', -30], ['white', -40]] as const).forEach(([color, db], i) => {
    const words = PEOPLE[(i * 4 + 1) % PEOPLE.length]![1];
    specs.push({ name: `person with ${color} noise at ${db} dBFS: "${words}"`, kind: 'human', voice: voice(i + 1), speed: 170, noise: { color, db }, parts: [{ pause: 400 + i * 100 }, { say: words }, { pause: 3500 }, { say: 'Hello? Can you hear me?' }, { pause: 3000 }] });
  });
  const beeps: ({ hz: number; ms: number; db: number } | null)[] = [
    { hz: 1000, ms: 500, db: -12 }, { hz: 440, ms: 800, db: -16 }, { hz: 1400, ms: 300, db: -20 }, { hz: 850, ms: 1000, db: -10 },
    null, { hz: 600, ms: 160, db: -18 }, { hz: 1200, ms: 400, db: -24 }, { hz: 950, ms: 250, db: -6 },
    { hz: 700, ms: 600, db: -14 }, null, { hz: 1100, ms: 350, db: -26 }, { hz: 500, ms: 450, db: -15 },
    null, { hz: 1300, ms: 700, db: -12 }, { hz: 800, ms: 200, db: -18 }, { hz: 1000, ms: 500, db: -20 }, null, { hz: 660, ms: 400, db: -16 },
  ];
  beeps.forEach((beep, i) => {
    const text = GREETINGS[i % GREETINGS.length]!;
    const noise = i % 3 === 2 ? { color: 'white' as const, db: -45 + (i % 2) * 5 } : undefined;
    const parts: Part[] = [{ pause: 200 + (i % 4) * 100 }, { say: text }, { pause: 300 + (i % 5) * 150 }];
    if (beep) parts.push({ beep });
    parts.push({ pause: 12_000 });
    specs.push({
      name: `voicemail ${i + 1}${beep ? `, beep ${beep.hz} Hz ${beep.ms} ms ${beep.db} dBFS` : ', no beep'}${noise ? ', line noise' : ''}`,
      kind: 'voicemail', voice: voice(i), speed: 150 + (i % 4) * 10, parts, ...(noise ? { noise } : {}),
    });
  });
  [0, 1, 2, 0, 1, 2].forEach((which, i) => {
    const parts: Part[] = [{ pause: 300 }, { say: SCREENERS[which]! }];
    if (which === 2) parts.push({ pause: 300 }, { beep: { hz: 1000, ms: 200, db: -14 } });
    parts.push({ pause: 8000 });
    specs.push({ name: `screening prompt ${which + 1}${i > 2 ? ', another voice' : ''}`, kind: 'screening', voice: voice(i + 2), speed: 165, parts });
  });
  return specs;
}
