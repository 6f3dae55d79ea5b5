import type { DialOutcome, DialRequest, Dialer } from '../../src/telephony/dialer.ts';

type Script = (request: DialRequest) => DialOutcome | 'hold';

/**
 * A dialer the test controls: each call either answers at once with what the script says,
 * or is held until the test finishes it (or the scheduler aborts it).
 */
export class TestDialer implements Dialer {
  readonly name = 'test';
  readonly calls: DialRequest[] = [];
  readonly aborted: string[] = [];
  private readonly held = new Map<string, (outcome: DialOutcome) => void>();

  constructor(public script: Script = () => ({ status: 'completed' })) {}

  dial(request: DialRequest): Promise<DialOutcome> {
    this.calls.push(request);
    const answer = this.script(request);
    if (answer !== 'hold') return Promise.resolve(answer);
    return new Promise((resolve) => {
      this.held.set(request.taskId, resolve);
      request.signal.addEventListener('abort', () => {
        this.aborted.push(request.taskId);
        this.held.delete(request.taskId);
        resolve({ status: 'failed', error: 'hung up', retryable: true });
      });
    });
  }

  get holding(): string[] {
    return [...this.held.keys()];
  }

  finish(taskId: string, outcome: DialOutcome = { status: 'completed' }): void {
    const resolve = this.held.get(taskId);
    if (!resolve) throw new Error(`no held call for ${taskId}`);
    this.held.delete(taskId);
    resolve(outcome);
  }
}
