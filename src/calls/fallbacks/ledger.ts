import type { ProviderKind } from './health.ts';

/** Who served one turn of a call (turn 0: the greeting, before the caller's first turn). */
export interface TurnProviders {
  turn: number;
  /** The transcriber that heard the caller's words of this turn. */
  stt?: string;
  /** The LLM that answered (the last of the turn's rounds). */
  llm?: string;
  /** The voice that spoke the answer (of its last sentence, when one took over mid-turn). */
  tts?: string;
  /** Providers that failed during the turn before another served it, as `kind:provider`, in order. */
  failed?: string[];
}

/** At most this many turns are kept on a record (more than PARLEY_CALL_MAX_TURNS allows by default); a longer call keeps its first ones. */
const MAX_TURNS = 500;

type Entry = Omit<TurnProviders, 'turn'>;

/**
 * A call's account of which provider served each turn, kept by the fallback decorators as the
 * call runs and written on its record's `providers.turns` when it ends. The session says when
 * it takes a caller's turn; what the transcriber heard before belongs to that turn, and so do
 * the LLM rounds that answered its words, even those begun before it was taken (a speculative
 * answer); rounds for words never taken (a speculation dropped) leave no trace.
 */
export class ProviderLedger {
  private current: TurnProviders & { text?: string } = { turn: 0 };
  private readonly turns: TurnProviders[] = [this.current];
  /** What the transcriber did for the words the next turn will answer. */
  private heard: Entry = {};
  /** LLM rounds for words not taken as a turn yet, by those words. */
  private readonly ahead = new Map<string, Entry>();

  /** The session takes a caller's turn, answering `text`. */
  nextTurn(text: string): void {
    const early = this.ahead.get(text);
    this.ahead.clear();
    this.current = { turn: this.current.turn + 1, text };
    if (this.turns.length < MAX_TURNS) this.turns.push(this.current);
    merge(this.current, this.heard);
    if (early) merge(this.current, early);
    this.heard = {};
  }

  /** A provider served: the transcriber the words to come, an LLM the round answering `words`, the voice the current turn. */
  served(kind: ProviderKind, provider: string, words?: string): void {
    this.entryFor(kind, words)[kind] = provider;
  }

  failed(kind: ProviderKind, provider: string, words?: string): void {
    (this.entryFor(kind, words).failed ??= []).push(`${kind}:${provider}`);
  }

  /** The turns that used a provider (a text call's greeting is none). */
  snapshot(): TurnProviders[] {
    return this.turns
      .filter((t) => t.llm || t.stt || t.tts || t.failed)
      .map(({ turn, stt, llm, tts, failed }) => ({ turn, ...(stt ? { stt } : {}), ...(llm ? { llm } : {}), ...(tts ? { tts } : {}), ...(failed ? { failed: [...failed] } : {}) }));
  }

  private entryFor(kind: ProviderKind, words: string | undefined): Entry {
    if (kind === 'stt') return this.heard;
    if (kind === 'tts' || words === undefined || words === this.current.text) return this.current;
    let entry = this.ahead.get(words);
    if (!entry) this.ahead.set(words, (entry = {}));
    return entry;
  }
}

function merge(into: Entry, from: Entry): void {
  if (from.stt) into.stt = from.stt;
  if (from.llm) into.llm = from.llm;
  if (from.failed) (into.failed ??= []).push(...from.failed);
}
