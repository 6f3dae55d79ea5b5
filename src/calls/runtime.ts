import type { Config } from '../config.ts';
import { createEgress } from '../egress/client.ts';
import type { AllowList } from '../egress/policy.ts';
import type { EndReason } from './frames.ts';
import { createLlm, type Llm } from './llm.ts';
import type { CallSession } from './session.ts';
import type { EgressSend } from './tool-call.ts';

/** What every call of the process shares: the LLM client, the egress client, and the live sessions. */
export interface CallRuntime {
  readonly llm: Llm;
  readonly send: EgressSend;
  readonly limits: { idleMs: number; maxMs: number };
  track(session: CallSession): void;
  /** Ends every live call (shutdown) and waits for their records. */
  endAll(reason: EndReason): Promise<void>;
  close(): Promise<void>;
}

export function createCallRuntime(config: Config, allow: AllowList, llm: Llm = createLlm(config)): CallRuntime {
  const egress = createEgress({ allow });
  const live = new Set<CallSession>();
  return {
    llm,
    send: (request) => egress.request(request),
    limits: { idleMs: config.callIdleMs, maxMs: config.callMaxMs },
    track(session) {
      live.add(session);
      void session.done.then(() => live.delete(session));
    },
    async endAll(reason) {
      await Promise.all([...live].map((s) => s.end(reason)));
    },
    close: async () => {
      await Promise.all([egress.close(), llm.close()]);
    },
  };
}
