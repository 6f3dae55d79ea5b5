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

/**
 * A call's account of which provider served each turn, kept by the fallback decorators as the
 * call runs and written on its record's `providers.turns` when it ends. A turn begins with the
 * LLM round that answers a caller's message; what the transcriber heard before it belongs to it.
 */
export class ProviderLedger {
  private current: TurnProviders = { turn: 0 };
  private readonly turns: TurnProviders[] = [this.current];
  /** The transcription of the utterance that the next turn answers. */
  private heard: { provider: string; failed: string[] } | null = null;
  private readonly heardFailed: string[] = [];

  /** The caller's message is being answered: a new turn. */
  nextTurn(): void {
    this.current = { turn: this.current.turn + 1 };
    if (this.turns.length < MAX_TURNS) this.turns.push(this.current);
    if (this.heard) {
      this.current.stt = this.heard.provider;
      if (this.heard.failed.length) this.current.failed = [...this.heard.failed];
      this.heard = null;
    }
  }

  served(kind: ProviderKind, provider: string): void {
    if (kind === 'stt') {
      this.heard = { provider, failed: this.heardFailed.splice(0) };
      return;
    }
    this.current[kind] = provider;
  }

  failed(kind: ProviderKind, provider: string): void {
    const entry = `${kind}:${provider}`;
    if (kind === 'stt') return void this.heardFailed.push(entry);
    (this.current.failed ??= []).push(entry);
  }

  /** The turns that used a provider (a text call's greeting is none). */
  snapshot(): TurnProviders[] {
    return this.turns.filter((t) => t.llm || t.stt || t.tts || t.failed).map((t) => structuredClone(t));
  }
}
