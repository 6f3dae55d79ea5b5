/**
 * A `parley worker` whose dialer is a test recorder: each call is one HTTP request to
 * RECORDER_URL that the recorder holds open for the length of the "call". Started as a child
 * process by test/jobs/workers.test.ts, which may SIGKILL it mid-call.
 */
import { PROVIDER_VARIABLES } from '../../src/calls/providers/registry.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import type { Dialer } from '../../src/telephony/dialer.ts';
import { runWorker } from '../../src/workers.ts';

const recorder = process.env.RECORDER_URL as string;

const dialer: Dialer = {
  name: 'recorder',
  async dial(request) {
    const res = await fetch(recorder, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ taskId: request.taskId, credentialId: request.sipCredentialId, worker: process.pid }),
      signal: request.signal,
    });
    await res.text();
    return res.ok ? { status: 'completed' } : { status: 'failed', error: `recorder said ${res.status}`, retryable: true };
  },
};

await runWorker(createContext(loadConfig(process.env, {}, PROVIDER_VARIABLES)), { dialer, pollMs: Number(process.env.POLL_MS ?? 20) });
process.stdout.write('ready\n');
