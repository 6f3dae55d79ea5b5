import type { CallFailure } from './failure.ts';
import type { CallRecorder, CallSetup } from './record.ts';
import type { TransportInfo } from './transports/transport.ts';
import type { CallDetection, Verdict } from './voicemail-detection.ts';

/** Who a call talks to: an assistant (inbound, WebSocket) or an agent (its tasks' calls). */
export type CallSourceKind = 'assistant' | 'agent';

/** A voice call's client audio. */
export interface CallAudio {
  encoding: string;
  sampleRate: number;
}

/** The engine's view of a call record that has connected: what its session runs with. */
export interface LiveCall {
  id: string;
  organizationId: string;
  kind: CallSourceKind;
  /** The assistant's or agent's id. */
  sourceId: string;
  /** The version of it the call runs (fixed when the call started); null for calls from before versions. */
  sourceVersion: number | null;
  traceId: string;
  transport: TransportInfo;
  userValues: Record<string, unknown>;
  /** Null for a text call. */
  audio: CallAudio | null;
}

/** A call record to make, connected at once (a SIP call, once answered). */
export interface NewCall {
  kind: CallSourceKind;
  organizationId: string;
  sourceId: string;
  userValues: Record<string, unknown>;
  traceId: string;
  transport: TransportInfo;
  taskId?: string | null;
  /** The version of the assistant to run (a call started to try it); absent runs the task's pin, else the current one. */
  version?: number | null;
  audio?: CallAudio | null;
  /** A SIP call: the credentials it goes through (it counts against their maxAgentTasks). */
  sipCredentialId?: string | null;
}

/** A SIP call's media as its record keeps it: our counts, and what the far end reported in RTCP. */
export interface CallMedia {
  packetsSent: number;
  packetsReceived: number;
  /** Packets of the far end's that never reached us. */
  packetsLost: number;
  /** Interarrival jitter of what we received, ms. */
  jitterMs: number;
  /** The far end's last RTCP report on our stream; null when none came. */
  remote: { packetsLost: number; fractionLost: number; jitterMs: number; rttMs: number | null } | null;
}

/**
 * Where the engine keeps call records. It declares what it needs; the calls feature implements
 * it over the database (and the composition hands it in), so the engine never reads a table.
 */
export interface CallStore {
  /** Uses a call's single-use connect token: the call, now active and held by this process; null when the token is wrong, used or expired. */
  connect(callId: string, token: string): Promise<LiveCall | null>;
  /**
   * A call that is connected as it is created (a placed SIP call, once answered), held by this
   * process. Throws when its assistant is gone or its organization is at its call cap.
   */
  insertLive(call: NewCall): Promise<LiveCall>;
  /**
   * An incoming SIP call's record, made only while its credentials carry fewer than `maxCalls`
   * calls and its organization is under its cap (checked and made under one lock); `busy` otherwise.
   */
  admit(call: NewCall & { sipCredentialId: string }, maxCalls: number): Promise<LiveCall | 'busy'>;
  /** Where a session writes the call's log as it runs, and its end once. */
  recorder(callId: string): CallRecorder;
  /** Ends a connected call that never got a session: failed, or abandoned by its client. */
  fail(callId: string, reason: 'error' | 'client_disconnected', failure?: CallFailure | null): Promise<void>;
  /** Notes what a prepared call runs with: its unfilled placeholders and its providers. */
  noteSetup(callId: string, note: { unfilled: readonly string[]; providers: Record<string, string> | null }): Promise<void>;
  /**
   * Keeps who answered a placed call and how its detection went; written as detection goes (the
   * last write wins), the verdict before anything is done about it.
   */
  noteDetection(callId: string, note: { answeredBy: Verdict; detection: CallDetection }): Promise<void>;
  /** Notes, as a call ends, its providers with who served each turn (`providers.turns`). */
  noteProviders(callId: string, providers: Record<string, unknown>): Promise<void>;
  /** Keeps a SIP call's media figures once its RTP closed; answers its conclusion's id (null when it has none). */
  saveMedia(callId: string, media: CallMedia): Promise<string | null>;
  /** Renews the lease of every call this process holds; answers the ids still held (the rest were ended elsewhere). */
  renewLeases(): Promise<Set<string>>;
}

/** What a connecting call runs with, read from its assistant or agent; null when that is gone. */
export interface CallSetupSource {
  load(call: LiveCall): Promise<CallSetup | null>;
}
