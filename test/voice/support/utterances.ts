/**
 * Caller utterances for turn-taking tests and the turn-taking bench: espeak-ng speech cut to its
 * own sound, with the test's pauses between pieces, and the fake Deepgram's script for it (each
 * spoken piece a phrase, timed from its own audio).
 */
import { concatPcm } from '../fakes/audio.ts';
import { energyBounds } from './compare.ts';
import { silence, speech } from './speech.ts';

const RATE = 16000;

export interface Utterance {
  pcm: Int16Array;
  /** The fake STT's script: each spoken piece a phrase, all its words shown once `reveal` of its audio has arrived. */
  phrases: { text: string; seconds: number }[];
}

/** espeak-ng's speech without its own leading and trailing silence, so the pauses between pieces are the caller's. */
export async function spoken(text: string): Promise<Int16Array> {
  const pcm = await speech(text);
  const { start, end } = energyBounds(pcm, RATE);
  return pcm.slice(start, end);
}

/** A piece of what the caller says: what the STT makes of it, and the words espeak speaks when they differ; or a sound with no words. */
export type Piece = number | { said: string; words?: string } | { sound: Int16Array };

/** The utterance of pieces and pauses (seconds). */
export async function utter(...parts: Piece[]): Promise<Utterance> {
  const pieces: Int16Array[] = [];
  const phrases: Utterance['phrases'] = [];
  for (const part of parts) {
    if (typeof part === 'number') {
      pieces.push(silence(part));
    } else if ('sound' in part) {
      pieces.push(part.sound);
      phrases.push({ text: '', seconds: part.sound.length / RATE });
    } else {
      const pcm = await spoken(part.words ?? part.said.replace(/[^\w\s']/g, ''));
      pieces.push(pcm);
      phrases.push({ text: part.said, seconds: (pcm.length / RATE) * 0.8 });
    }
  }
  return { pcm: concatPcm(pieces), phrases };
}

/** The fake STT's script for utterances said in this order. */
export const scriptOf = (...utterances: Utterance[]) => utterances.flatMap((u) => u.phrases);
