import type { Clock } from '../clock.ts';
import { ProviderHealth } from './fallbacks/health.ts';
import type { EndReason } from './frames.ts';
import type { Llm } from './llm.ts';
import type { Log, SessionLimits } from './record.ts';
import type { CallSession } from './session.ts';
import type { EgressSend } from './tool-call.ts';

/** How long an LLM answer may take to begin, and to go on, before it counts as stalled. */
export interface LlmTimeouts {
  firstTokenMs: number;
  tokenGapMs: number;
}

export interface CallRuntimeOptions {
  llm: Llm;
  /**
   * A client of the platform's LLM for one call that has fallbacks behind it: it fails at once
   * rather than retrying, since the next LLM is the retry. `own` when the call closes it.
   */
  failFastPlatformLlm(): { llm: Llm; own: boolean };
  llmTimeouts: LlmTimeouts;
  send: EgressSend;
  clock: Clock;
  limits: SessionLimits;
  leaseMs: number;
  log: Log;
  /** Extends the leases of every call this process holds; answers the ids still held (the rest were ended elsewhere). */
  renewLeases(): Promise<Set<string>>;
}

/** What every call of the process shares: the LLM client, the egress client, the live sessions and their heartbeat. */
export interface CallRuntime {
  /** The platform's LLM, shared by every call whose strategy names none. */
  readonly llm: Llm;
  /** The stall limits of the LLM clients a call makes of its own. */
  readonly llmTimeouts: LlmTimeouts;
  failFastPlatformLlm(): { llm: Llm; own: boolean };
  /** Which providers failed lately (the cool-down of fallbacks), for every call of the process. */
  readonly health: ProviderHealth;
  readonly send: EgressSend;
  readonly clock: Clock;
  readonly limits: SessionLimits;
  track(session: CallSession): void;
  /** Ends every live call (shutdown) and waits for their records. */
  endAll(reason: EndReason): Promise<void>;
  close(): void;
}

/**
 * The runtime of a process's calls. A heartbeat renews the lease of every call this process
 * holds (ringing or active) in one statement, every third of the lease; a call another process's
 * sweep has ended meanwhile (this one stalled past its lease) is ended here too.
 */
export function createCallRuntime(options: CallRuntimeOptions): CallRuntime {
  const live = new Map<string, CallSession>();
  const beat = async () => {
    try {
      const held = await options.renewLeases();
      for (const [id, session] of live) if (!held.has(id)) void session.end('server_lost');
    } catch (err) {
      options.log.warn({ err }, 'could not renew call leases; trying again');
    }
  };
  const heartbeat = setInterval(() => void beat(), Math.max(100, options.leaseMs / 3)).unref();
  return {
    llm: options.llm,
    llmTimeouts: options.llmTimeouts,
    failFastPlatformLlm: () => options.failFastPlatformLlm(),
    health: new ProviderHealth(options.clock),
    send: options.send,
    clock: options.clock,
    limits: options.limits,
    track(session) {
      live.set(session.callId, session);
      void session.done.then(() => live.delete(session.callId));
    },
    async endAll(reason) {
      await Promise.all([...live.values()].map((s) => s.end(reason)));
    },
    close() {
      clearInterval(heartbeat);
    },
  };
}
