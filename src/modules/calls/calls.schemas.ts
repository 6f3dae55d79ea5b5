import { Type, type Static, type TSchema } from 'typebox';
import { END_REASONS } from '../../calls/frames.ts';
import { CONTROL_TYPES } from '../../calls/control-tools.ts';
import { TOOL_OUTCOMES } from '../../calls/tool-call.ts';
import { DETECTION_ACTIONS, SIGNALS, VERDICTS } from '../../calls/voicemail-detection.ts';
import { DateTime, Uuid } from '../../http/schemas.ts';

export const CALL_STATUSES = ['ringing', 'active', 'ended'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const OUTCOMES = ['completed', 'abandoned', 'failed'] as const;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const AUDIO_ENCODINGS = ['pcm_s16le', 'mulaw'] as const;
export const AUDIO_RATES = [8000, 16000, 24000, 48000] as const;

export const CallAudio = Type.Object(
  {
    encoding: Type.String({ enum: [...AUDIO_ENCODINGS], description: 'pcm_s16le: 16-bit little-endian PCM; mulaw: G.711 mu-law' }),
    sampleRate: Type.Integer({ enum: [...AUDIO_RATES], description: 'Hz' }),
  },
  { additionalProperties: false, title: 'CallAudio', description: 'Makes it a voice call: binary audio frames in this format go both ways on the socket' },
);

export const CALL_PROTOCOLS = ['parley', 'twilio'] as const;

export const CallStart = Type.Object(
  {
    audio: Type.Optional(CallAudio),
    protocol: Type.Optional(Type.String({
      enum: [...CALL_PROTOCOLS],
      description: 'What the socket speaks: parley (the JSON frames of docs/calls.md, the default) or twilio (Twilio Media Streams, mu-law 8 kHz, ' +
        'for a trunk that speaks that protocol; the answer\'s websocketUrl is then the media stream URL)',
    })),
    userValues: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
      maxProperties: 100,
      description: 'Fill {{name}} placeholders in the prompt and greeting; values that are not strings are written as JSON',
    })),
    version: Type.Optional(Type.Integer({
      minimum: 1,
      description: 'Run this version of the assistant or agent (…/versions/{n}) instead of the current one, to try it before restoring it; ' +
        'a version it does not have is a 400 naming version',
    })),
    clientTools: Type.Optional(Type.Boolean({
      description: 'The client answers the tool webhooks itself (a tool_answer frame for each tool_call) and no request reaches their servers: ' +
        'for tests that mock tools (parley test). Needs assistants:write (agents:write for an agent) besides calls:write; not with protocol twilio. ' +
        'The call sends no call event hooks (docs/testing-assistants.md)',
    })),
  },
  { additionalProperties: false, title: 'CallStart', examples: [{ userValues: { firstName: 'Ada', orderCount: 3 } }, { audio: { encoding: 'pcm_s16le', sampleRate: 16000 } }, { protocol: 'twilio' }] },
);
export type CallStart = Static<typeof CallStart>;

export const CallStarted = Type.Object(
  {
    id: Uuid,
    websocketUrl: Type.String({ description: 'Connect within 60 s; the token in it works once. With protocol twilio, the Twilio Media Streams URL' }),
    expiresAt: DateTime,
  },
  { title: 'CallStarted' },
);

const TurnLatency = Type.Object(
  {
    endpointingMs: Type.Integer({ minimum: 0, description: "The caller's last speech to the turn confirmed over (the silence waited for, and the STT's final)" }),
    llmFirstTokenMs: Type.Integer({ minimum: 0, description: "Turn confirmed to the LLM's first token (0 when a speculative answer had it earlier)" }),
    ttsFirstAudioMs: Type.Integer({ minimum: 0, description: 'First token (or the confirmation, when later) to the first audio frame sent' }),
    totalMs: Type.Integer({ minimum: 0, description: "The caller's last speech to the first audio frame of the answer sent: the sum of the three" }),
  },
  { title: 'TurnLatency', description: 'Voice calls: where the time to this answer went' },
);
const Endpointing = Type.String({ enum: ['smart', 'vad', 'provider'], description: 'Voice calls: how the caller\'s turn was ended: smart (words and silence), vad (silence alone), provider (the STT said the speech ended)' });

const Transport = Type.Object(
  {
    type: Type.String({ enum: ['websocket', 'sip'] }),
    calledNumber: Type.Optional(Type.String()),
    callingNumber: Type.Optional(Type.String({ description: 'E.164 when it reads as a number (bare digits as international, like calledNumber), else as sent; `anonymous` when withheld' })),
    callingNumberRaw: Type.Optional(Type.String({ description: 'What the trunk (or Twilio) sent, when callingNumber is a reading of it (bare digits read as international). Not in tool webhook requests' })),
    clientTools: Type.Optional(Type.Boolean({ description: 'A call started with clientTools: its client answered its tool webhooks (a test). Not in tool webhook requests' })),
  },
  { title: 'CallTransport' },
);

const TranscriptEntry = Type.Object({
  role: Type.String({ enum: ['assistant', 'user', 'dtmf'], description: 'dtmf: keys the caller pressed, gathered into one entry' }),
  text: Type.String({ description: 'What was said; for dtmf the keys, e.g. 42#' }),
  at: DateTime,
  latencyMs: Type.Optional(Type.Integer({ description: "Assistant: ms from the end of the user's turn to the first output of this answer" })),
  interrupted: Type.Optional(Type.Boolean({ description: 'Assistant: the caller spoke over it; text is what was heard' })),
  latency: Type.Optional(TurnLatency),
  endpointing: Type.Optional(Endpointing),
  startMs: Type.Optional(Type.Integer({ minimum: 0, description: "Voice calls: where it begins in the call's audio (its recording), ms from the start: the caller's first speech of the turn, the assistant's first audio" })),
  endMs: Type.Optional(Type.Integer({ minimum: 0, description: "Voice calls: where it ends in the call's audio: the caller's last speech of the turn, the end of what the caller heard of the assistant" })),
}, { title: 'TranscriptEntry' });

const Turn = Type.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    at: DateTime,
    latencyMs: Type.Integer({ description: "ms from the end of the user's turn to the assistant's first output" }),
    latency: Type.Optional(TurnLatency),
    endpointing: Type.Optional(Endpointing),
  },
  { title: 'CallTurn' },
);

const ServedTurn = Type.Object(
  {
    turn: Type.Integer({ minimum: 0, description: 'The turn: 0 is the greeting, then one per answered caller turn (as turns[].index)' }),
    stt: Type.Optional(Type.String({ description: 'The transcriber that heard the caller' })),
    llm: Type.Optional(Type.String({ description: 'The LLM that answered' })),
    tts: Type.Optional(Type.String({ description: 'The voice that spoke (the one that took over, when one failed during the turn)' })),
    failed: Type.Optional(Type.Array(Type.String(), { description: 'Providers that failed during the turn before another served it, as kind:provider (llm:anthropic)' })),
  },
  { title: 'CallServedTurn' },
);

const TurnTaking = Type.Object(
  {
    falseInterruptions: Type.Integer({ minimum: 0, description: 'Sound over the assistant that paused it but was no interruption (a backchannel, a cough, a word or two)' }),
    speculativeStarts: Type.Integer({ minimum: 0, description: "Answers started before the caller's turn was confirmed" }),
    speculativeDiscards: Type.Integer({ minimum: 0, description: 'Of those, dropped because the caller spoke again' }),
  },
  { title: 'CallTurnTaking', description: 'A voice call with a speech-to-text pipeline: its turn-taking over the whole call; null for other calls and while the call runs' },
);

const Failure = Type.Object(
  {
    source: Type.String({ description: 'What failed: llm, or a provider such as tts:elevenlabs' }),
    statusCode: Nullable(Type.Integer()),
    message: Type.String({ description: "The provider's own words (never a key)" }),
  },
  { title: 'CallFailure' },
);

const ToolInvocation = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    arguments: Type.Unknown({ description: 'The arguments the LLM chose; their raw text when they were not a JSON object' }),
    ok: Type.Boolean(),
    statusCode: Nullable(Type.Integer()),
    latencyMs: Type.Integer(),
    outcome: Type.String({ enum: [...TOOL_OUTCOMES] }),
    at: DateTime,
    type: Type.Optional(Type.String({ enum: [...CONTROL_TYPES], description: 'A call-control tool (absent for tool webhooks)' })),
    result: Type.Optional(Type.String({ description: "A call-control tool: what the LLM was told, such as why a transfer failed" })),
  },
  { title: 'ToolInvocation' },
);

const DataError = Type.Object(
  {
    message: Type.String(),
    errors: Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), { description: "Where the LLM's answer broke the schema" }),
    raw: Type.String({ description: "The LLM's last answer, as it gave it" }),
  },
  { title: 'AnalysisDataError', description: 'The data the LLM gave did not satisfy the schema, even when asked again with the errors' },
);

export const Conclusion = Type.Object(
  {
    id: Uuid,
    callId: Uuid,
    outcome: Type.String({ enum: [...OUTCOMES] }),
    summary: Nullable(Type.String({ description: "The analysis's summary of the call; null until it has run, or without an analysis" })),
    data: Nullable(Type.Unknown({ description: "What the analysis extracted, valid against the assistant's structuredData schema" })),
    dataError: Nullable(DataError),
    success: Nullable(Type.Union([Type.Boolean(), Type.Integer({ minimum: 1, maximum: 10 }), Type.String()], {
      description: 'The success evaluation, as its rubric says: true or false (pass_fail), 1 to 10 (score_1_10), a few words (descriptive)',
    })),
    analyzedAt: Nullable(DateTime),
    analysisStatus: Nullable(Type.String({ enum: ['pending', 'done', 'failed'], description: 'The analysis: pending (due or running), done, failed (after retries); null when none was asked' })),
    createdAt: DateTime,
  },
  { title: 'CallConclusion', description: 'How the call ended, and once analysed (docs/calls.md, "Analysis") what it achieved' },
);
export type Conclusion = Static<typeof Conclusion>;

export const RECORDING_STATUSES = ['recording', 'uploading', 'ready', 'failed', 'deleted'] as const;

const CallRecording = Type.Object(
  {
    status: Type.String({ enum: [...RECORDING_STATUSES], description: 'recording while the call runs, uploading until it is stored, then ready (GET …/recording)' }),
    durationMs: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0, description: 'Of PCM audio (the WAV is 44 bytes more)' }),
    channels: Type.Integer({ description: '2: the caller left, the assistant right' }),
    sampleRate: Type.Integer({ description: "The call's own rate: 8000 for SIP and Twilio, the WebSocket call's otherwise" }),
  },
  { title: 'CallRecording', description: 'The call was recorded (its assistant or agent has recording.enabled); null otherwise' },
);

const RemoteReport = Type.Object(
  {
    packetsLost: Type.Integer({ description: 'Packets of ours the far end never received (cumulative, RFC 3550)' }),
    fractionLost: Type.Number({ minimum: 0, maximum: 1, description: 'Share of ours lost since its previous report' }),
    jitterMs: Type.Number({ description: 'Interarrival jitter the far end measured on our stream, ms' }),
    rttMs: Nullable(Type.Number({ description: 'Round-trip time from its report (LSR/DLSR), ms' })),
  },
  { description: "The far end's last RTCP report on our stream" },
);

const CallMedia = Type.Object(
  {
    packetsSent: Type.Integer({ description: 'RTP packets we sent' }),
    packetsReceived: Type.Integer({ description: 'RTP packets we received' }),
    packetsLost: Type.Integer({ description: 'Packets of the far end that never reached us (RFC 3550 A.3)' }),
    jitterMs: Type.Number({ description: 'Interarrival jitter we measured on what we received (RFC 3550 A.8), ms' }),
    remote: Nullable(RemoteReport),
  },
  { title: 'CallMedia', description: 'A SIP call: RTP and RTCP figures both ways, kept when the call ends; null for other calls and while the call runs' },
);

export const AnsweredBy = Nullable(Type.String({
  enum: [...VERDICTS],
  description: "Who answered an agent task's call, when its agent has voicemail_detection: human, voicemail, screening (a call-screening assistant) or unknown (no verdict within maxWaitSeconds, or the far end hung up first: the call went on as with a person); null when no detection ran",
}));

const DetectionSignal = Type.Object(
  {
    signal: Type.String({ enum: [...SIGNALS], description: 'What was noticed (speech, a pause, a beep, words, silence) or done (the message, the answer to a screener)' }),
    atMs: Type.Integer({ minimum: 0, description: 'When, in ms after the answer (the far end\'s audio time)' }),
    durationMs: Type.Optional(Type.Integer({ minimum: 0, description: 'Speech, silence or a beep: how long it lasted' })),
    frequencyHz: Type.Optional(Type.Integer({ description: 'A beep: its frequency' })),
    levelDbfs: Type.Optional(Type.Integer({ description: 'A beep: its level, dB below full scale' })),
    phrase: Type.Optional(Type.String({ description: 'Words: the phrase that matched' })),
  },
  { title: 'DetectionSignal' },
);

const Detection = Nullable(Type.Object(
  {
    verdict: Type.String({ enum: [...VERDICTS] }),
    decidedAfterMs: Nullable(Type.Integer({ minimum: 0, description: 'ms after the answer; null: no verdict (the far end hung up first, or detection still runs)' })),
    action: Nullable(Type.String({
      enum: [...DETECTION_ACTIONS],
      description: 'continued (as with a person), hung_up, left_message, message_not_left (the greeting never ended within maxWaitSeconds, or the message was cut), ended_early (the call ended before detection was over); null while detection runs',
    })),
    signals: Type.Array(DetectionSignal, { description: 'Which signals fired and when, in order' }),
  },
  { title: 'CallDetection', description: "How who answered was told, and what the agent did about it; null when no detection ran (docs/sip.md, \"Who answered\")" },
));

export const Call = Type.Object(
  {
    id: Uuid,
    kind: Type.String({ enum: ['assistant', 'agent'] }),
    assistantId: Nullable(Uuid),
    agentId: Nullable(Uuid),
    assistantVersion: Nullable(Type.Integer({ minimum: 1, description: "The assistant's version the call runs (…/assistants/{id}/versions/{n}); null for an agent's call" })),
    agentVersion: Nullable(Type.Integer({ minimum: 1, description: "The agent's version the call runs: its task's pin, else the current one when it started; null for an assistant's call" })),
    taskId: Nullable(Uuid),
    status: Type.String({ enum: [...CALL_STATUSES] }),
    transport: Transport,
    audio: Nullable(CallAudio),
    providers: Nullable(Type.Object(
      {
        llm: Type.Optional(Type.String({ description: 'The LLM the strategy names (openai: the platform\'s, or the organization\'s openai credential)' })),
        tts: Type.Optional(Type.String({ description: 'A voice call: its voice' })),
        stt: Type.Optional(Type.String({ description: 'A voice call: its transcriber' })),
        realtime: Type.Optional(Type.String({ description: 'A speech_to_speech call: its realtime model\'s provider' })),
        turns: Type.Optional(Type.Array(ServedTurn, { description: 'Who served each turn (0: the greeting), kept once the call has ended; turns that used no provider are left out' })),
      },
      { description: 'The providers the call was set up with (the strategy\'s primaries); null until it connected' },
    )),
    media: Nullable(CallMedia),
    answeredBy: AnsweredBy,
    detection: Detection,
    turnTaking: Nullable(TurnTaking),
    userValues: Type.Record(Type.String(), Type.Unknown(), { description: 'The values the call was started with' }),
    startedAt: Nullable(DateTime),
    endedAt: Nullable(DateTime),
    endReason: Nullable(Type.String({ enum: [...END_REASONS] })),
    failure: Nullable(Failure),
    unfilledPlaceholders: Type.Array(Type.String(), { description: 'Placeholders of the prompt or greeting that had no value and no default when the call connected' }),
    transcript: Type.Array(TranscriptEntry),
    toolInvocations: Type.Array(ToolInvocation),
    turns: Type.Array(Turn, { description: 'One per answered user turn, with its latency' }),
    conclusionId: Nullable(Uuid),
    conclusion: Nullable(Conclusion),
    recording: Nullable(CallRecording),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Call' },
);
export type Call = Static<typeof Call>;

/** The filters of the call list (assistantId and agentId exclude each other: a 400 says so). */
export const CallFilters = {
  assistantId: Type.Optional(Type.String({ format: 'uuid', description: "Only this assistant's calls" })),
  agentId: Type.Optional(Type.String({ format: 'uuid', description: "Only this agent's calls" })),
  status: Type.Optional(Type.String({ enum: [...CALL_STATUSES], description: 'Only calls in this status' })),
  success: Type.Optional(Type.Boolean({ description: 'Only calls whose analysis judged them a success (true) or not (false): the pass_fail rubric' })),
};

export const CallParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, callId: Uuid });
