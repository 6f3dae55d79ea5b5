import type { CallEngine } from './calls/engine.ts';
import type { Llm } from './calls/llm.ts';
import { platformLlm } from './calls/providers/access.ts';
import { createCallRuntime } from './calls/runtime.ts';
import { createVoiceKit, type VoiceKit } from './calls/voice/kit.ts';
import type { Context } from './context.ts';
import { callSetups } from './modules/calls/call-setup.ts';
import { callStore } from './modules/calls/call-store.ts';
import type { CallDeps } from './modules/calls/calls.service.ts';
import { organizationAccess } from './modules/providers/provider-access.ts';
import { registrationStore } from './modules/sip/sip-registrations.store.ts';
import { telephonyDirectory } from './modules/sip/telephony-directory.ts';
import type { Dialer } from './telephony/dialer.ts';
import { inboundCalls } from './telephony/inbound.ts';
import { TrunkRegistrations } from './telephony/registrations.ts';
import { sipDialer } from './telephony/sip-dialer.ts';
import { recordingStore } from './modules/recordings/recordings.store.ts';
import type { RecordingStorage } from './modules/recordings/storage.ts';
import { openTelephony, type Telephony } from './telephony/telephony.ts';

export interface EngineOptions {
  /** The LLM of calls; by default the OpenAI-compatible endpoint of the config. */
  llm?: Llm;
  /** What voice calls share (the pacer, the VAD model, the providers); tests may give one with a manual pacer clock. */
  voice?: VoiceKit;
  /** What places task calls; by default the SIP dialer when this process has telephony. */
  dialer?: Dialer;
}

/** The call engine and the telephony of one process, wired to the features that keep their data. */
export interface ComposedEngine {
  calls: CallEngine;
  /** This process's SIP endpoint and RTP ports; null when PARLEY_DIALER is not `sip` (or a dialer was given). */
  telephony: Telephony | null;
  /** The trunk registrations this process keeps up; null without telephony. */
  registrations: TrunkRegistrations | null;
  dialer: Dialer | undefined;
}

/**
 * The engine's interfaces implemented by the features (call records, call setups, provider
 * keys, SIP numbers and registrations) and handed to the engine: the one place where the call
 * path meets the database.
 */
export async function composeEngine(ctx: Context, deps: CallDeps, options: EngineOptions = {}, recordings?: RecordingStorage): Promise<ComposedEngine> {
  const { config } = ctx;
  const store = callStore(deps);
  const platform = platformLlm(config);
  const platformClient = (failFast: boolean) => platform.provider.llm.create({
    baseUrl: platform.baseUrl, apiKey: platform.apiKey, firstTokenMs: config.llmFirstTokenMs, tokenGapMs: config.llmTokenGapMs, failFast,
  });
  const llm = options.llm ?? platformClient(false);
  const runtime = createCallRuntime({
    llm,
    // A test's own LLM stands for the platform's in every role.
    failFastPlatformLlm: () => (options.llm ? { llm: options.llm, own: false } : { llm: platformClient(true), own: true }),
    llmTimeouts: { firstTokenMs: config.llmFirstTokenMs, tokenGapMs: config.llmTokenGapMs },
    send: (request) => ctx.egress.request(request),
    clock: ctx.clock,
    limits: {
      idleMs: config.callIdleMs, maxMs: config.callMaxMs, maxTurns: config.callMaxTurns,
      maxTranscriptBytes: config.callMaxTranscriptBytes, historyMessages: config.llmHistoryMessages,
    },
    leaseMs: config.callLeaseMs,
    log: ctx.log,
    renewLeases: () => store.renewLeases(),
  });
  const calls: CallEngine = {
    store, setups: callSetups(ctx, organizationAccess(ctx)), runtime, voice: options.voice ?? createVoiceKit(),
    ...(recordings ? { recordings: recordingStore(ctx, recordings) } : {}),
  };
  // PARLEY_DIALER=sip: this process has a SIP endpoint, which places task calls; it closes after the calls have ended.
  const telephony = !options.dialer && config.dialer === 'sip' ? await openTelephony(ctx) : null;
  if (!telephony) return { calls, telephony, registrations: null, dialer: options.dialer };
  const directory = telephonyDirectory(ctx);
  // Calls to the organizations' SIP numbers arrive on the same endpoint, routed to it by the
  // trunks' registrations this process keeps up (and by trunks that send INVITEs unregistered).
  telephony.endpoint.onInvite(inboundCalls(telephony, { engine: calls, directory, log: ctx.log }));
  return {
    calls,
    telephony,
    registrations: new TrunkRegistrations(telephony, registrationStore(ctx), ctx),
    dialer: sipDialer(telephony, { engine: calls, directory, config, log: ctx.log }),
  };
}
