/**
 * Splits an LLM's streamed answer into sentences for TTS, releasing each one as soon as it is
 * known to be complete, so the first can be spoken while the model is still writing the rest.
 *
 * A sentence ends at `.`, `!`, `?` or `…` (with any closing quotes or brackets) followed by
 * whitespace, and at a line break. A period does not end one after a known abbreviation
 * ("e.g.", "Dr."), a single initial ("J."), or a list number at the start of a line ("2.");
 * inside "3.5" or "example.com/a.b" no whitespace follows the dot, so those never split.
 *
 * The first sentence of an answer may be released early at a clause break (`,` `;` `:` or a
 * dash) once it holds at least `firstClauseMinWords` words: time to first audio is set by the
 * first thing sent to TTS, and a long opening sentence would otherwise wait for its last word.
 * Only the first: later sentences are synthesised while earlier ones play, so cutting them
 * would cost prosody and gain nothing. A clause too short ("Yes,") would sound clipped.
 */
export interface SentenceSplitterOptions {
  /** Words the first clause needs before it may be released at a comma; 0 turns this off. */
  firstClauseMinWords?: number;
}

const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'etc', 'e.g', 'i.e', 'cf', 'approx',
  'no', 'nr', 'inc', 'ltd', 'co', 'corp', 'dept', 'fig', 'vol', 'ca', 'z.b', 'd.h', 'usw', 'bzw', 'u.a',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'a.m', 'p.m',
]);
// "etc." ends a sentence as often as not; speaking the next words a little later is harmless.

const TERMINATORS = '.!?…。！？';
const CLOSERS = `"'”’)]}»`;
const CLAUSE_BREAKS = ',;:—–';

export class SentenceSplitter {
  private buffer = '';
  private released = 0;
  private readonly firstClauseMinWords: number;

  constructor(options: SentenceSplitterOptions = {}) {
    this.firstClauseMinWords = options.firstClauseMinWords ?? 6;
  }

  /** Adds a delta; returns the sentences it completed (often none). */
  push(delta: string): string[] {
    this.buffer += delta;
    const out: string[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const end = this.boundaryAt(i, start);
      if (end === -1) continue;
      const sentence = this.buffer.slice(start, end).trim();
      if (sentence) out.push(sentence);
      start = end;
      i = end - 1;
    }
    this.buffer = this.buffer.slice(start);
    if (this.released === 0 && out.length === 0) {
      const clause = this.firstClause();
      if (clause) out.push(clause);
    }
    this.released += out.length;
    return out;
  }

  /** The rest, at the end of the answer. The splitter is then ready for the next answer. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    this.released = 0;
    return rest ? [rest] : [];
  }

  /** Where the sentence ending at `i` ends (after its whitespace), or -1. */
  private boundaryAt(i: number, start: number): number {
    const text = this.buffer;
    const char = text[i] as string;
    if (char === '\n') return i + 1;
    if (!TERMINATORS.includes(char)) return -1;
    let j = i + 1;
    while (j < text.length && (TERMINATORS.includes(text[j] as string) || CLOSERS.includes(text[j] as string))) j++;
    if (j >= text.length) return -1; // what follows decides: "3." may become "3.5"
    if (!/\s/.test(text[j] as string)) return -1;
    if (char === '.' && j === i + 1 && this.isAbbreviation(text.slice(start, i))) return -1;
    return j;
  }

  private isAbbreviation(before: string): boolean {
    const word = /(\S+)$/.exec(before)?.[1] ?? '';
    const bare = word.replace(/^[("'“‘[]+/, '');
    if (ABBREVIATIONS.has(bare.toLowerCase())) return true;
    if (/^\p{Lu}$/u.test(bare)) return true; // an initial: "J. R. R. Tolkien"
    // A list number opening a line or the answer: "1. Open the app".
    return /^\d+$/.test(bare) && before.trim() === bare;
  }

  private firstClause(): string | null {
    if (this.firstClauseMinWords <= 0) return null;
    for (let i = this.buffer.length - 2; i > 0; i--) {
      if (!CLAUSE_BREAKS.includes(this.buffer[i] as string) || !/\s/.test(this.buffer[i + 1] as string)) continue;
      const clause = this.buffer.slice(0, i + 1).trim();
      if (clause.split(/\s+/).length < this.firstClauseMinWords) return null;
      // "3,5" and "1,000" have no space after the comma, so they never reach here.
      this.buffer = this.buffer.slice(i + 1);
      return clause;
    }
    return null;
  }
}
