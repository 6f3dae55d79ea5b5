import type { Selectable } from 'kysely';
import type { CallFailure, CallSetup, Log } from '../../calls/record.ts';
import type { CallRuntime } from '../../calls/runtime.ts';
import { CallSession } from '../../calls/session.ts';
import { TemplateTooLongError } from '../../calls/template.ts';
import type { CallTransport } from '../../calls/transports/transport.ts';
import { openVoice, VoiceOpenError } from '../../calls/voice/attach.ts';
import type { VoiceKit } from '../../calls/voice/kit.ts';
import type { AudioLink } from '../../calls/voice/link.ts';
import type { VoicePlan } from '../../calls/voice/plan.ts';
import { loadCallSetup } from './call-setup.ts';
import type { CallTable } from './calls.table.ts';
import { callRecorder, type CallDeps } from './calls.service.ts';
import type { ResolveAccess } from './voice-plan.ts';

/** How long a voice call's providers may take to open before the call fails saying which one. */
const VOICE_OPEN_MS = 15_000;

/** What running a connected call takes, whatever carries it (a WebSocket, a SIP call). */
export interface CallRunDeps {
  deps: CallDeps;
  runtime: CallRuntime;
  voice: VoiceKit;
  resolveAccess: ResolveAccess;
}

/** Ends a connected call that never got a session, with a failure or as abandoned. */
export function failCall(deps: CallDeps, callId: string, reason: 'error' | 'client_disconnected', failure: CallFailure | null = null): Promise<void> {
  return callRecorder(deps, callId).finish({ reason, outcome: reason === 'error' ? 'failed' : 'abandoned', failure, transcript: [], toolInvocations: [] });
}

/**
 * The setup of a call that has just connected (status active), with its unfilled placeholders
 * and providers noted on the record. A call that cannot be prepared is ended as failed, saying
 * why, and null is answered (the error is rethrown for a template too long, as the WebSocket
 * answers it).
 */
export async function prepareCall({ deps, resolveAccess }: Pick<CallRunDeps, 'deps' | 'resolveAccess'>, row: Selectable<CallTable>): Promise<CallSetup | null> {
  const { ctx } = deps;
  let setup: CallSetup | null;
  try {
    setup = await loadCallSetup(ctx.db.kysely, ctx.secrets, ctx.config.llmDefaultModel, row, resolveAccess);
  } catch (err) {
    const message = err instanceof TemplateTooLongError ? `the prompt or greeting ${err.message} with this call's values` : 'the call could not be prepared';
    await failCall(deps, row.id, 'error', { source: 'setup', statusCode: null, message });
    throw err;
  }
  if (!setup) {
    // Deleted between start and connect (a delete racing the start): the call fails at once.
    await failCall(deps, row.id, 'error', { source: 'setup', statusCode: null, message: 'the assistant or agent was deleted' });
    return null;
  }
  const providers = setup.voice?.kind === 'pipeline' ? { tts: setup.voice.tts.provider, stt: setup.voice.stt.provider }
    : setup.voice?.kind === 'realtime' ? { realtime: 'openai' } : null;
  if (setup.unfilled.length || providers) {
    await ctx.db.kysely.updateTable('calls')
      .set({ unfilled_placeholders: setup.unfilled.length ? JSON.stringify(setup.unfilled) : null, providers: providers ? JSON.stringify(providers) : null })
      .where('id', '=', row.id).execute();
  }
  return setup;
}

/** The session of a prepared call, tracked by the runtime (its heartbeat, its shutdown). Call start() on it. */
export function newSession({ deps, runtime, voice }: Pick<CallRunDeps, 'deps' | 'runtime' | 'voice'>, setup: CallSetup, log: Log): CallSession {
  const session = new CallSession(setup, {
    llm: runtime.llm, send: runtime.send, clock: deps.ctx.clock, log, limits: runtime.limits, recorder: callRecorder(deps, setup.callId),
    timers: voice.clock,
  });
  runtime.track(session);
  return session;
}

/**
 * Starts the session on its transport and, for a voice call, opens the providers on the link:
 * the greeting waits for them, a failure ends the call saying why.
 */
export function startSession(run: Pick<CallRunDeps, 'voice'>, session: CallSession, setup: CallSetup, transport: CallTransport, link: AudioLink | null, log: Log): void {
  session.start(transport, setup.voice?.audio);
  if (setup.voice && link) openCallVoice(run, { ...setup, voice: setup.voice }, link, session, log);
}

/** Opens a started call's voice: the greeting waits for it, and a provider that fails ends the call saying why. */
export function openCallVoice(run: Pick<CallRunDeps, 'voice'>, setup: CallSetup & { voice: VoicePlan }, link: AudioLink, session: CallSession, log: Log): void {
  openVoice(run.voice, {
    plan: setup.voice, link, host: session.voiceHost(),
    signal: AbortSignal.any([session.lifetime, AbortSignal.timeout(VOICE_OPEN_MS)]), lifetime: session.lifetime,
    instructions: setup.systemPrompt, tools: setup.tools, controls: session.offeredControls(), log,
  })
    .then((v) => session.attachVoice(v))
    .catch((err: unknown) => session.fail(err instanceof VoiceOpenError ? err.failure : { source: 'voice', statusCode: null, message: 'the voice could not be opened' }));
}
