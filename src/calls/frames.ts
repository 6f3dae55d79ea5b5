import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * The JSON text frames of a call WebSocket, as schemas: the one source of their TypeScript
 * types, of the validation of what clients send, and of the AsyncAPI document (docs/calls.md).
 */
export const END_REASONS = [
  'client_ended', 'client_disconnected', 'idle_timeout', 'max_duration', 'limit_reached', 'error',
  'server_shutdown', 'server_lost', 'not_connected', 'assistant_ended', 'transferred',
] as const;

/**
 * Why a call ended. `client_ended`: an `end` frame; `client_disconnected`: the socket closed
 * without one; `idle_timeout` / `max_duration`: a time limit; `limit_reached`: the turn or
 * transcript limit; `error`: the LLM or a provider failed; `server_shutdown`: the service
 * stopped; `server_lost`: the process holding the call died (ended by another process's sweep);
 * `not_connected`: nobody connected before the token expired; `assistant_ended`: the LLM called
 * end_call; `transferred`: the LLM called transfer_call and the transport handed the caller over.
 */
export type EndReason = (typeof END_REASONS)[number];

export const MAX_USER_TEXT = 10_000;
/** The body of a `tool_answer` frame: what a client answers for a tool (a test's mock), within the socket's frame size. */
export const MAX_TOOL_ANSWER = 10_000;
/** Keys a caller can press: a `dtmf` frame carries one or more of them. */
export const DTMF_IN_PATTERN = '^[0-9*#A-D]{1,32}$';

const frame = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P, description: string) =>
  Type.Object({ type: Type.Literal(type), ...properties }, { additionalProperties: false, title: type, description });

export const ClientFrames = {
  user_message: frame('user_message', { text: Type.String({ minLength: 1, maxLength: MAX_USER_TEXT, pattern: '\\S' }) }, 'What the user says (text calls)'),
  end: frame('end', {}, 'Hang up'),
  dtmf: frame('dtmf', {
    digits: Type.String({ pattern: DTMF_IN_PATTERN, description: 'The keys pressed, in order: 0-9, *, #, A-D (1 to 32)' }),
  }, 'The caller pressed keys (a web phone keypad); gathered like keys on a phone call'),
  tool_answer: frame('tool_answer', {
    id: Type.String({ minLength: 1, maxLength: 200, description: 'The id of the tool_call frame it answers' }),
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'The HTTP status the tool server would have answered; default 200 (not 2xx: the LLM gets the generic failure string)' })),
    body: Type.String({ maxLength: MAX_TOOL_ANSWER, description: 'The response body the tool server would have answered: what the LLM gets as the tool result' }),
  }, 'Calls started with clientTools: the answer to a tool webhook\'s tool_call, in place of its server (parley test mocks tools this way)'),
} as const;

export const ServerFrames = {
  call_started: frame('call_started', {
    callId: Type.String({ format: 'uuid' }),
    unfilledPlaceholders: Type.Optional(Type.Array(Type.String(), { description: 'Placeholders of the prompt or greeting that had no value and no default' })),
    audio: Type.Optional(Type.Object({ encoding: Type.String(), sampleRate: Type.Integer() }, { description: 'A voice call: the format of the binary audio frames both ways' })),
    greeting: Type.Optional(Type.Literal(true, { description: 'A text call whose assistant greets first: the greeting, an assistant_message, is the next frame; a client that waits for it shows the conversation in order' })),
  }, 'First frame of every call'),
  speech_started: frame('speech_started', {}, 'Voice calls: the caller started speaking (voice activity detection)'),
  user_transcript: frame('user_transcript', {
    text: Type.String(), final: Type.Boolean({ description: 'false: an interim hypothesis that may still change' }),
  }, 'Voice calls: what the caller said, as speech-to-text heard it'),
  turn_paused: frame('turn_paused', {}, 'Voice calls: the caller spoke over the assistant, whose audio stops at once while Parley decides whether it is an interruption or a backchannel (drop any audio still buffered)'),
  turn_resumed: frame('turn_resumed', {}, 'Voice calls: it was a backchannel, a cough or a word or two: the assistant plays on from the first audio the caller did not hear (sent again)'),
  interrupted: frame('interrupted', {
    heard: Type.String({ description: 'What the caller heard of the answer before speaking over it' }),
  }, 'Voice calls: the caller spoke over the assistant; drop any audio still buffered'),
  tool_waiting: frame('tool_waiting', {
    names: Type.Array(Type.String()), elapsedMs: Type.Integer(),
  }, 'A tool call is taking long; the answer will come when it is done'),
  assistant_delta: frame('assistant_delta', { text: Type.String() }, 'A piece of the answer as the LLM streams it'),
  assistant_message: frame('assistant_message', { text: Type.String() }, 'A whole utterance of the assistant (the greeting, an answer)'),
  tool_call: frame('tool_call', { id: Type.String(), name: Type.String(), arguments: Type.String() }, 'The LLM called a tool'),
  tool_result: frame('tool_result', {
    id: Type.String(), name: Type.String(), ok: Type.Boolean(), statusCode: Type.Union([Type.Integer(), Type.Null()]), latencyMs: Type.Integer(),
  }, 'The tool webhook answered (or failed)'),
  dtmf: frame('dtmf', {
    digits: Type.String({ description: 'The keys of one gathered entry, e.g. 42#' }),
  }, 'The caller pressed keys: gathered until 1.5 s without a key, or #; the LLM gets them as a user turn'),
  turn_done: frame('turn_done', {}, 'The answer to a user message is complete (its text, tool calls and results are all sent; a voice call may still be playing it): a client may send the next message'),
  call_ended: frame('call_ended', { reason: Type.String({ enum: [...END_REASONS] }) }, 'Last frame; the socket closes after it'),
  error: frame('error', { message: Type.String() }, 'A refused frame (the call goes on) or, before call_ended, why the call fails'),
} as const;

type Frames<T extends Record<string, TSchema>> = { [K in keyof T]: Static<T[K]> }[keyof T];
export type ClientFrame = Frames<typeof ClientFrames>;
export type ServerFrame = Frames<typeof ServerFrames>;

interface Checker {
  Check(value: unknown): boolean;
  Errors(value: unknown): Iterable<{ instancePath: string; keyword: string; params: unknown; message: string }>;
}

const checkers: Record<string, Checker> = Object.fromEntries(Object.entries(ClientFrames).map(([type, schema]) => [type, Compile(schema) as Checker]));
const TYPES = Object.keys(ClientFrames);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A client frame, or the reason it is refused (sent back as an `error` frame; the call goes on). */
export function parseClientFrame(raw: string): ClientFrame | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'Frames must be JSON text' };
  }
  if (!isObject(value)) return { error: 'A frame must be a JSON object with a "type"' };
  const checker = typeof value.type === 'string' && Object.hasOwn(checkers, value.type) ? checkers[value.type] : undefined;
  if (!checker) return { error: `Unknown frame type; expected one of: ${TYPES.join(', ')}` };
  if (checker.Check(value)) return value as ClientFrame;
  const errors = [...checker.Errors(value)];
  // An unknown field shows as a `false` schema at its path (additionalProperties: false).
  const unknown = errors.find((e) => e.keyword === 'boolean' && e.instancePath);
  if (unknown) return { error: `Unknown field "${unknown.instancePath.slice(1).slice(0, 64)}" in ${value.type as string}` };
  const [first] = errors;
  const field = first?.instancePath ? `"${first.instancePath.slice(1).slice(0, 64)}" ` : '';
  const keys = value.type === 'dtmf' && (first?.keyword === 'pattern' || first?.keyword === 'type');
  const message = keys ? 'must be 1 to 32 keys of 0-9, *, #, A-D'
    : first?.keyword === 'minLength' || first?.keyword === 'pattern' ? 'must be a non-empty string' : (first?.message ?? 'is invalid');
  return { error: `Invalid ${value.type as string} frame: ${field}${message}` };
}
