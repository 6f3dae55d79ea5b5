/**
 * What the far end's first words say about it, when the call has a speech-to-text: phrases of
 * voicemail greetings, of call-screening assistants, and of a screener asking to hold on. Matched
 * on the transcript lowered, without punctuation or apostrophes ("you're" reads "youre").
 */

export type PhraseKind = 'voicemail' | 'screening' | 'hold';

const PHRASES: Record<PhraseKind, RegExp[]> = {
  screening: [
    /\bscreening (service|assistant)\b/,
    /\b(using|uses) a screening\b/,
    /\b(say|state|tell (me|us)) your name\b/,
    /\brecord your name\b/,
    /\bwhy (youre|you are) calling\b/,
    /\b(the )?reason (for|of) your call\b/,
    /\bwho (is|s) calling and why\b/,
  ],
  voicemail: [
    /\bleave (a|your|me a|us a) (brief |short |detailed )?message\b/,
    /\bafter the (tone|beep)\b/,
    /\bat the (tone|beep)\b/,
    /\b(is |are )?not available\b/,
    /\bunavailable\b/,
    /\bmail ?box\b/,
    /\bvoice ?mail\b/,
    /\brecord your message\b/,
    /\b(cant|cannot|can not) (take|get to|answer|come to) (your call|the phone)\b/,
    /\b(will|ll) (get back|call you back|return your call)\b/,
  ],
  hold: [
    /\bstay on the line\b/,
    /\b(please )?hold on\b/,
    /\bplease hold\b/,
    /\b(try|trying) to connect\b/,
    /\bconnecting you\b/,
  ],
};

export interface PhraseMatch {
  kind: PhraseKind;
  /** The words that matched, as they read after normalising. */
  phrase: string;
}

/** Lower case, apostrophes dropped, anything but letters, digits and spaces made a space. */
export function normalise(text: string): string {
  return text.toLowerCase().replace(/['’`]/g, '').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/** The first phrase of each kind the text holds; screening is looked for first (its prompts also say "record"). */
export function matchPhrases(text: string): PhraseMatch[] {
  const plain = normalise(text);
  const found: PhraseMatch[] = [];
  for (const kind of ['screening', 'voicemail', 'hold'] as const) {
    for (const pattern of PHRASES[kind]) {
      const match = pattern.exec(plain);
      if (match) {
        found.push({ kind, phrase: match[0].trim() });
        break;
      }
    }
  }
  return found;
}
