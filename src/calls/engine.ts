import { callLlm } from './call-llm.ts';
import type { CallFailure } from './failure.ts';
import { ProviderLedger } from './fallbacks/ledger.ts';
import type { CallRecorder, CallSetup, Log } from './record.ts';
import type { CallRuntime } from './runtime.ts';
import { CallSession, type CallOpener } from './session.ts';
import type { CallSetupSource, CallStore, LiveCall } from './store.ts';
import { TemplateTooLongError } from './template.ts';
import type { CallTransport } from './transports/transport.ts';
import { openVoice, VoiceOpenError } from './voice/attach.ts';
import type { VoiceKit } from './voice/kit.ts';
import type { AudioLink } from './voice/link.ts';
import type { VoicePlan } from './voice/plan.ts';
import { timedLink, type TimedLink } from './voice/timeline.ts';
import { CallAudioRecorder, type RecordingStore } from './recording/recorder.ts';

/** How long a voice call's providers may take to open before the call fails saying which one. */
const VOICE_OPEN_MS = 15_000;

/**
 * What running a connected call takes, whatever carries it (a WebSocket, Twilio Media Streams, a
 * SIP call): where records are kept, where a call's setup comes from, the process's runtime and
 * what voice calls share. Built once by the composition (app.ts).
 */
export interface CallEngine {
  store: CallStore;
  setups: CallSetupSource;
  runtime: CallRuntime;
  voice: VoiceKit;
  /** Where the recordings of calls whose assistant asks for them go; none: nothing is recorded. */
  recordings?: RecordingStore;
}

/** The providers a call's setup names, as the record notes them: its LLM, and a voice call's speech providers or realtime model. */
function providersOf(setup: CallSetup): Record<string, string> | null {
  const plan = setup.voice;
  if (plan?.kind === 'realtime') return { realtime: plan.provider };
  const llm = { llm: setup.llm?.choices[0].provider ?? 'openai' };
  if (plan?.kind === 'pipeline') return { ...llm, tts: plan.tts.provider, stt: plan.stt.provider };
  return llm;
}

/**
 * The setup of a call that has just connected (status active), with its unfilled placeholders
 * and providers noted on the record. A call that cannot be prepared is ended as failed, saying
 * why, and null is answered (the error is rethrown for a template too long, as the WebSocket
 * answers it).
 */
export async function prepareCall({ store, setups }: Pick<CallEngine, 'store' | 'setups'>, call: LiveCall): Promise<CallSetup | null> {
  let setup: CallSetup | null;
  try {
    setup = await setups.load(call);
  } catch (err) {
    const message = err instanceof TemplateTooLongError ? `the prompt or greeting ${err.message} with this call's values` : 'the call could not be prepared';
    await store.fail(call.id, 'error', { source: 'setup', statusCode: null, message });
    throw err;
  }
  if (!setup) {
    // Deleted between start and connect (a delete racing the start): the call fails at once.
    await store.fail(call.id, 'error', { source: 'setup', statusCode: null, message: 'the assistant or agent was deleted' });
    return null;
  }
  const providers = providersOf(setup);
  if (setup.unfilled.length || providers) await store.noteSetup(call.id, { unfilled: setup.unfilled, providers });
  return { ...setup, ledger: new ProviderLedger() };
}

/** The call's recorder, which also writes who served each turn (`providers.turns`) as the call ends, before its end is recorded. */
function recordingTurns(store: CallStore, setup: CallSetup, ledger: ProviderLedger, log: Log): CallRecorder {
  const recorder = store.recorder(setup.callId);
  const providers = providersOf(setup);
  return {
    append: (entries) => recorder.append(entries),
    async finish(end) {
      const turns = ledger.snapshot();
      if (providers && turns.length) {
        await store.noteProviders(setup.callId, { ...providers, turns }).catch((err: unknown) => log.error({ err, callId: setup.callId }, 'could not record who served the turns'));
      }
      await recorder.finish(end);
    },
  };
}

/** The session of a prepared call, tracked by the runtime (its heartbeat, its shutdown). Call start() on it. */
export function newSession({ store, runtime, voice }: Pick<CallEngine, 'store' | 'runtime' | 'voice'>, setup: CallSetup, log: Log): CallSession {
  const ledger = setup.ledger ?? new ProviderLedger();
  const llm = callLlm(runtime, setup.llm, { health: runtime.health, ledger, owner: setup.organizationId ?? setup.callId, log });
  const session = new CallSession(setup, {
    llm, send: runtime.send, clock: runtime.clock, log, limits: runtime.limits, recorder: recordingTurns(store, setup, ledger, log),
    timers: voice.clock, turnTaken: (text) => ledger.nextTurn(text),
  });
  runtime.track(session);
  // The clients of the call's own (an organization's providers) close with the call.
  void session.done.then(() => llm.close?.());
  return session;
}

/**
 * Starts the session on its transport and, for a voice call, opens the providers on the link:
 * the greeting waits for them (and for `opener`), a failure ends the call saying why.
 */
export function startSession(
  engine: Pick<CallEngine, 'voice' | 'runtime' | 'recordings'>, session: CallSession, setup: CallSetup, transport: CallTransport, link: AudioLink | null, log: Log,
  opener?: CallOpener, gate?: VoiceGate,
): void {
  session.start(transport, setup.voice?.audio, opener);
  if (setup.voice && link) openCallVoice(engine, { ...setup, voice: setup.voice }, link, session, log, gate);
}

/** What the voice hears of the call's audio (answering detection holds the far end back until the call goes on); the recording hears it all. */
type VoiceGate = (link: TimedLink) => TimedLink;

/**
 * Opens a started call's voice: the greeting waits for it, and a provider that fails ends the
 * call saying why. Its audio is placed on the call's timeline (the transcript's times count from
 * here), and recorded from here when its assistant asks for it: all of it, `gate` or not (the
 * far end's voicemail greeting is on the recording even though the voice never heard it).
 */
export function openCallVoice(
  engine: Pick<CallEngine, 'voice' | 'runtime' | 'recordings'>, setup: CallSetup & { voice: VoicePlan }, transportLink: AudioLink, session: CallSession, log: Log, gate?: VoiceGate,
): void {
  const timed = timedLink(transportLink, engine.voice.clock);
  session.useTimeline(timed.timeline);
  if (setup.recording && engine.recordings) record(engine.recordings, setup.callId, timed, session, log);
  const link = gate ? gate(timed) : timed;
  openVoice(engine.voice, {
    plan: setup.voice, link, host: session.voiceHost(),
    signal: AbortSignal.any([session.lifetime, AbortSignal.timeout(VOICE_OPEN_MS)]), lifetime: session.lifetime,
    instructions: setup.systemPrompt, tools: setup.tools, controls: session.offeredControls(), log,
    fallback: { health: engine.runtime.health, ledger: setup.ledger ?? new ProviderLedger(), owner: setup.organizationId ?? setup.callId, log },
  })
    .then((v) => session.attachVoice(v))
    .catch((err: unknown) => session.fail(err instanceof VoiceOpenError ? err.failure : voiceFailure));
}

const voiceFailure: CallFailure = { source: 'voice', statusCode: null, message: 'the voice could not be opened' };

/** Records the call's audio from now until its session is done, when the recording is handed to the store. */
function record(store: RecordingStore, callId: string, link: TimedLink, session: CallSession, log: Log): void {
  const recorder = new CallAudioRecorder(link.format, link.timeline, store.open(callId, { sampleRate: link.format.sampleRate, channels: 2 }));
  link.tap(recorder);
  void session.done
    .then(() => recorder.close())
    .catch((err: unknown) => log.error({ err, callId }, 'could not keep the call recording'));
}
