import { EgressError, type EgressRequest, type EgressResponse } from '../egress/client.ts';
import type { PacerClock } from '../voice/pacer-clock.ts';
import type { EgressSend } from './tool-call.ts';

/** What a client sends back for a tool call it answers: the response its tool server would have given. */
export interface ClientToolAnswer {
  id: string;
  status?: number;
  body: string;
}

interface Waiting {
  settle(answer: ClientToolAnswer): void;
}

/**
 * The tool webhooks of a call whose client answers them itself (a call started with
 * `clientTools`: `parley test` mocks its tools this way). Each tool call goes through the same
 * code as a webhook (its arguments checked, its timeout, its outcome and record), but its
 * request never leaves the process: the client, which saw the `tool_call` frame, sends a
 * `tool_answer` frame with the status and body its tool server would have answered. Headers and
 * signing secrets stay here: the client only ever sees the tool's name and the LLM's arguments.
 */
export class ClientToolAnswers {
  private readonly waiting = new Map<string, Waiting>();

  /** The call's timers: a tool's timeout runs on the clock the session's others do. */
  constructor(private readonly timers: PacerClock) {}

  /** The EgressSend of the tool call with this id: it resolves with the client's answer. */
  sendFor(id: string): EgressSend {
    return (request: EgressRequest) => new Promise<EgressResponse>((resolve, reject) => {
      const started = performance.now();
      const done = () => {
        this.timers.clearTimer(timer);
        request.signal?.removeEventListener('abort', aborted);
        this.waiting.delete(id);
      };
      const aborted = () => {
        done();
        reject(new EgressError('aborted', 'the call ended before the client answered'));
      };
      const timer = this.timers.setTimer(request.timeoutMs, () => {
        done();
        reject(new EgressError('timeout', `the client did not answer within ${request.timeoutMs} ms`));
      });
      if (request.signal?.aborted) return aborted();
      request.signal?.addEventListener('abort', aborted, { once: true });
      this.waiting.set(id, {
        settle: (answer) => {
          done();
          if (Buffer.byteLength(answer.body) > request.maxResponseBytes) return reject(new EgressError('too_large', 'the answer is too large'));
          resolve({ status: answer.status ?? 200, headers: {}, body: answer.body, latencyMs: Math.round(performance.now() - started) });
        },
      });
    });
  }

  /** Settles the tool call the answer names; false when none of that id is waiting (never asked, or answered already). */
  answer(answer: ClientToolAnswer): boolean {
    const waiting = this.waiting.get(answer.id);
    if (!waiting) return false;
    waiting.settle(answer);
    return true;
  }
}
