import type { Log } from '../record.ts';
import type { Llm, LlmRound, LlmRoundRequest } from '../llm.ts';
import type { ProviderHealth } from './health.ts';
import type { ProviderLedger } from './ledger.ts';

/** One LLM of a call: its provider (as records name it), its model, its client. */
export interface LlmCandidate {
  provider: string;
  /** The model to ask for; absent: the one the session's settings name. */
  model?: string;
  llm: Llm;
  /** The client is the call's own (closed with it), not the platform's shared one. */
  own: boolean;
}

export interface FallbackContext {
  health: ProviderHealth;
  ledger: ProviderLedger;
  /** Whose calls these are: the health of providers is kept per organization. */
  owner: string;
  log: Log;
}

/**
 * The call's LLM with its fallbacks, as one Llm: each round goes to the first candidate not
 * cooling down; one that fails before it produced anything for the round (a refused connection,
 * an HTTP error, a first-token timeout) is marked failed and the round goes to the next, so the
 * caller hears nothing of it. A failure after words were streamed is not retried elsewhere: the
 * caller heard them, and another model cannot go on from the middle of someone else's answer
 * (it would repeat or contradict them), so that call ends as before, with the apology. It also
 * tells the ledger which LLM answered which words.
 */
export class FallbackLlm implements Llm {
  constructor(private readonly candidates: readonly LlmCandidate[], private readonly context: FallbackContext) {}

  async round(request: LlmRoundRequest): Promise<LlmRound> {
    const { health, ledger, owner, log } = this.context;
    const words = callerWords(request);
    let failure: unknown = null;
    for (const candidate of health.order(owner, 'llm', this.candidates)) {
      let spoke = false;
      try {
        const result = await candidate.llm.round({
          ...request,
          settings: candidate.model ? { ...request.settings, model: candidate.model } : request.settings,
          onDelta: (text) => ((spoke = true), request.onDelta(text)),
        });
        health.succeeded(owner, 'llm', candidate.provider);
        ledger.served('llm', candidate.provider, words);
        return result;
      } catch (err) {
        if (request.signal.aborted) throw err;
        health.failed(owner, 'llm', candidate.provider);
        ledger.failed('llm', candidate.provider, words);
        if (spoke) throw err;
        failure ??= err;
        if (this.candidates.length > 1) log.warn({ provider: candidate.provider, err: errorName(err) }, 'LLM failed before answering; the next one takes the turn');
      }
    }
    // Every candidate failed: the first one's reason is the call's (the primary is what the strategy chose).
    throw failure;
  }

  async close(): Promise<void> {
    await Promise.all(this.candidates.filter((c) => c.own).map(async (c) => c.llm.close?.()));
  }
}

/** The caller's words a round answers: the last user message (a tool round's is further back). */
function callerWords(request: LlmRoundRequest): string | undefined {
  const content = request.messages.findLast((m) => m.role === 'user')?.content;
  return typeof content === 'string' ? content : undefined;
}

/** An error as the log may name it: its class and message (clients' messages carry no key). */
const errorName = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : 'unknown error');
