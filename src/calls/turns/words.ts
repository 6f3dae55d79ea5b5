/**
 * The words of a transcript as the turn rules read them: lower case, punctuation gone (a
 * hyphen or apostrophe inside a word stays: "uh-huh", "don't"), spaces collapsed.
 */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^\p{L}\p{N}'\s-]+/gu, ' ')
    .replace(/(^|\s)[-']+|[-']+(?=\s|$)/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** A phrase as backchannel matching compares it: its words, with hyphens as spaces ("uh-huh" is "uh huh"). */
const phraseKey = (text: string): string => wordsOf(text).join(' ').replace(/-/g, ' ');

/** At most this many backchannel phrases in a row still make one backchannel ("yeah, okay, right"). */
const MAX_PHRASES = 3;

/**
 * Matches whole utterances against a list of backchannel phrases, ignoring case and punctuation:
 * "Yeah." and "uh huh" are backchannels, "yeah, but wait" is not. An utterance made only of a few
 * backchannel phrases ("yeah yeah", "okay, got it") is one too.
 */
export class Backchannels {
  private readonly phrases: string[][];

  constructor(phrases: readonly string[]) {
    this.phrases = [...new Set(phrases.map(phraseKey).filter(Boolean))].map((p) => p.split(' '));
  }

  /** The whole utterance is backchannel phrases. */
  matches(text: string): boolean {
    const words = phraseKey(text).split(' ').filter(Boolean);
    return words.length > 0 && this.cover(words, 0, 0, false);
  }

  /** The utterance so far could still become a backchannel (a caller saying "got" may be saying "got it"). */
  couldBe(text: string): boolean {
    const words = phraseKey(text).split(' ').filter(Boolean);
    return words.length === 0 || this.cover(words, 0, 0, true);
  }

  private cover(words: string[], at: number, used: number, partial: boolean): boolean {
    if (at === words.length) return true;
    if (used === MAX_PHRASES) return false;
    return this.phrases.some((phrase) => {
      const n = Math.min(phrase.length, words.length - at);
      for (let i = 0; i < n; i++) if (phrase[i] !== words[at + i]) return false;
      // The phrase runs past the words so far: a match only while the caller may still be saying it.
      if (n < phrase.length) return partial;
      return this.cover(words, at + n, used + 1, partial);
    });
  }
}
