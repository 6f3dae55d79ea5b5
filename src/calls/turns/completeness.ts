import { wordsOf } from './words.ts';

/** How a transcript reads at a pause: complete (answer now), or unfinished (wait for more), and why. */
export interface Completeness {
  complete: boolean;
  reason: string;
}

// A turn rarely ends on these: the caller is mid-phrase ("I want to change my…", "and…", "to the…").
const CONJUNCTIONS = ['and', 'but', 'or', 'nor', 'so', 'because', 'cause', 'if', 'when', 'while', 'although', 'though', 'unless', 'until', 'since', 'whether', 'than', 'then', 'that', 'which', 'who', 'whose', 'where'];
const ARTICLES_AND_DETERMINERS = ['a', 'an', 'the', 'my', 'your', 'his', 'her', 'our', 'their', 'its', 'this', 'these', 'those', 'some', 'any', 'every', 'each', 'another', 'no'];
const PREPOSITIONS = ['to', 'of', 'for', 'with', 'at', 'in', 'on', 'from', 'by', 'about', 'into', 'onto', 'like', 'as', 'per', 'via', 'without', 'over', 'under', 'between', 'after', 'before', 'through', 'during', 'towards', 'toward', 'near', 'around'];
const FILLERS = ['uh', 'um', 'umm', 'uhm', 'er', 'erm', 'ah', 'eh', 'hm', 'well', 'like'];
const AUXILIARIES = ['is', 'are', 'was', 'were', 'be', 'been', 'am', "i'm", 'will', 'would', 'can', 'could', 'should', 'shall', 'may', 'might', 'must', 'have', 'has', 'had', 'do', 'does', 'did', "it's", "that's", "there's", 'i', 'we', "we're", "i'd", "i'll", 'want', 'need', 'wanted', 'wanna', 'gonna'];
const TRAILING = new Map<string, string>([
  ...CONJUNCTIONS.map((w) => [w, 'ends on a conjunction'] as const),
  ...ARTICLES_AND_DETERMINERS.map((w) => [w, 'ends on an article or determiner'] as const),
  ...PREPOSITIONS.map((w) => [w, 'ends on a preposition'] as const),
  ...FILLERS.map((w) => [w, 'ends on a filler'] as const),
  ...AUXILIARIES.map((w) => [w, 'ends on a word a sentence goes on from'] as const),
]);
/** Verbs that want an object; after "to" or a modal ("I would like to order…", "can I get…") the object is still to come. */
const WANTING_OBJECT = new Set(['order', 'get', 'book', 'buy', 'have', 'make', 'change', 'cancel', 'know', 'ask', 'tell', 'see', 'add', 'remove', 'schedule', 'reserve', 'pay', 'send', 'bring', 'find', 'check', 'update', 'move', 'give', 'take', 'return', 'report']);
const BEFORE_OBJECT = new Set(['to', 'can', 'could', 'would', 'will', 'should', 'i', 'we', 'please', "i'd", "we'd", "let's", 'lets', "i'll", "we'll"]);
const SPOKEN_DIGITS = new Set(['zero', 'oh', 'o', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'double', 'triple', 'hundred', 'thousand', 'dash', 'hyphen']);
/** Words of an address or a code being spelled: "j o h n at example dot com". */
const SPELLING = new Set(['dot', 'at', 'underscore', 'dash', 'hyphen', 'slash']);

/** The digits at the end of the words, typed ("555 12") or spoken ("five five five"). */
function trailingDigits(words: readonly string[]): number {
  let digits = 0;
  for (let i = words.length - 1; i >= 0; i--) {
    const word = words[i]!;
    if (/^\d+$/.test(word)) digits += word.length;
    else if (SPOKEN_DIGITS.has(word)) digits += 1;
    else break;
  }
  return digits;
}

/** Words that announce something to be dictated: what follows them is read out in groups. */
const DICTATION_CUES = new Set(['number', 'code', 'reference', 'ref', 'pin', 'id', 'postcode', 'zip', 'extension', 'account', 'iban', 'serial', 'phone', 'mobile', 'digits']);

/** A piece of something being dictated: digits, a spoken digit, a single letter, or a short code such as "ZX" or "A17". */
const isCodePiece = (word: string) => /^\d+$/.test(word) || SPOKEN_DIGITS.has(word) || /^\p{L}$/u.test(word) || /^(?=.*\d)[\p{L}\d]{2,6}$/u.test(word);

/** The words end on code pieces announced by a dictation cue ("my number is 42", "the code is 8 ZX"). */
function dictating(words: readonly string[], raw: string): boolean {
  // Letters the STT wrote as one capitalised code ("ZX") are a piece too.
  let i = words.length - 1 - (/\b[A-Z]{2,4}[.?!]?$/.test(raw) ? 1 : 0);
  while (i >= 0 && isCodePiece(words[i]!)) i--;
  if (i === words.length - 1) return false;
  // What leads up to the pieces must announce them: "table for 4" is an answer, "my code is 8" is not.
  return words.slice(Math.max(0, i - 3), i + 1).some((w) => DICTATION_CUES.has(w));
}

/** Single letters at the end ("j o h n", "b as in boy"), other than the words "a" and "I". */
function trailingLetters(words: readonly string[]): number {
  let letters = 0;
  for (let i = words.length - 1; i >= 0 && /^\p{L}$/u.test(words[i]!) && words[i] !== 'i'; i--) letters++;
  return letters;
}

/**
 * Reads a caller's words at a pause, as smart endpointing does (docs/voice.md, "Turn-taking"):
 * unfinished when the transcript trails off ("…", "-", ","), or while a number (three digits or
 * more) or a spelling is being dictated; complete when the STT ended the sentence (".", "?",
 * "!"); otherwise unfinished when the words end on a conjunction, an article, a preposition, a
 * filler or an auxiliary, on a verb waiting for its object ("would like to order"), or when the
 * STT punctuates and left this sentence open. Anything else reads complete.
 */
export function readCompleteness(text: string): Completeness {
  const trimmed = text.trim();
  const words = wordsOf(trimmed);
  if (!words.length) return { complete: false, reason: 'no words yet' };
  if (/(\.\.\.|…|[-–—,;:])$/.test(trimmed)) return { complete: false, reason: 'trails off' };
  const last = words.at(-1)!;
  // Digits and letters: STTs put a full stop after a group the caller has not finished dictating.
  if (trailingDigits(words) >= 3 || dictating(words, trimmed)) return { complete: false, reason: 'a number is being dictated' };
  if (trailingLetters(words) >= 2) return { complete: false, reason: 'something is being spelled' };
  // The STT ended the sentence itself ("I think so.", "What are you looking at?"): its word.
  if (/[.?!]["')\]]*$/.test(trimmed)) return { complete: true, reason: /[?]["')\]]*$/.test(trimmed) ? 'a question' : 'the STT ended the sentence' };
  if (SPELLING.has(last)) return { complete: false, reason: 'something is being spelled' };
  const trailing = TRAILING.get(last);
  if (trailing) return { complete: false, reason: `${trailing} ("${last}")` };
  if (WANTING_OBJECT.has(last) && BEFORE_OBJECT.has(words.at(-2) ?? '')) return { complete: false, reason: `a verb still waiting for its object ("${words.at(-2)} ${last}")` };
  // A transcript with punctuation elsewhere comes from an STT that punctuates: no end mark means no end yet.
  if (/[.?!,]/.test(trimmed)) return { complete: false, reason: 'the STT did not end the sentence' };
  return { complete: true, reason: 'a whole phrase' };
}
