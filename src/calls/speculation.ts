import type { Llm, LlmRound, LlmRoundRequest } from './llm.ts';

/**
 * An answer started before the caller's turn is confirmed (smart endpointing): the LLM's first
 * round for the turn as it reads now, held back. Nothing of it reaches the caller, the
 * transcript, the history or a tool server until the turn is confirmed and the session adopts
 * it; a caller who speaks again cancels it. A tool call it asks for waits for adoption like
 * everything else (the turn runs it then).
 */
export class Speculation {
  private readonly controller = new AbortController();
  private held: string[] = [];
  private forward: ((text: string) => void) | null = null;
  /** When its first token came (the clock's time), once it has. */
  firstTokenAt: number | null = null;
  readonly round: Promise<LlmRound>;

  constructor(
    llm: Llm,
    /** The caller's words it answers. */
    readonly text: string,
    request: Omit<LlmRoundRequest, 'signal' | 'onDelta'>,
    lifetime: AbortSignal,
    now: () => number,
  ) {
    this.round = llm.round({
      ...request,
      signal: AbortSignal.any([lifetime, this.controller.signal]),
      onDelta: (delta) => {
        this.firstTokenAt ??= now();
        if (this.forward) this.forward(delta);
        else this.held.push(delta);
      },
    });
    // Settled by whoever adopts it; a cancelled one's rejection is nobody's.
    this.round.catch(() => undefined);
  }

  /** The turn is confirmed: what was held goes out now, the rest as it streams; the turn's signal stops it from here on. */
  adopt(onDelta: (text: string) => void, turnSignal: AbortSignal): Promise<LlmRound> {
    for (const delta of this.held) onDelta(delta);
    this.held = [];
    this.forward = onDelta;
    if (turnSignal.aborted) this.cancel();
    else turnSignal.addEventListener('abort', () => this.cancel(), { once: true });
    return this.round;
  }

  cancel(): void {
    this.controller.abort();
  }
}
