import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * The JSON text messages of Twilio Media Streams (bidirectional, from `<Connect><Stream>`), as
 * Twilio publishes them. Twilio may add fields, so unknown ones are allowed; the fields Parley
 * reads are checked. Sequence numbers, chunks and timestamps are strings on the wire.
 */
const message = <E extends string, P extends Record<string, TSchema>>(event: E, properties: P) =>
  Type.Object({ event: Type.Literal(event), ...properties });

const Text = Type.String({ maxLength: 256 });

export const TwilioMessages = {
  connected: message('connected', { protocol: Type.Optional(Text), version: Type.Optional(Text) }),
  start: message('start', {
    streamSid: Text,
    start: Type.Object({
      streamSid: Text,
      accountSid: Text,
      callSid: Text,
      tracks: Type.Array(Text, { maxItems: 4 }),
      customParameters: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 4096 }), { maxProperties: 100 })),
      mediaFormat: Type.Object({ encoding: Text, sampleRate: Type.Integer(), channels: Type.Integer() }),
    }),
  }),
  media: message('media', {
    streamSid: Text,
    media: Type.Object({
      track: Type.Optional(Text),
      chunk: Type.Optional(Text),
      timestamp: Type.Optional(Text),
      // 20 ms of mu-law is 160 bytes (216 in base64); a few seconds at most in one message.
      payload: Type.String({ maxLength: 65536 }),
    }),
  }),
  dtmf: message('dtmf', { streamSid: Text, dtmf: Type.Object({ track: Type.Optional(Text), digit: Type.String({ pattern: '^[0-9*#A-Da-d]$' }) }) }),
  mark: message('mark', { streamSid: Text, mark: Type.Object({ name: Text }) }),
  stop: message('stop', { streamSid: Text, stop: Type.Optional(Type.Object({ accountSid: Type.Optional(Text), callSid: Type.Optional(Text) })) }),
} as const;

export type TwilioMessage = { [K in keyof typeof TwilioMessages]: Static<(typeof TwilioMessages)[K]> }[keyof typeof TwilioMessages];
export type TwilioStart = Static<typeof TwilioMessages.start>['start'];

/** What Parley sends back: audio, `clear` on barge-in, and a mark before it closes the socket. */
export const TwilioReplies = {
  media: Type.Object({
    event: Type.Literal('media'), streamSid: Type.String(),
    media: Type.Object({ payload: Type.String({ description: 'base64 of 20 ms of the assistant\'s voice, mu-law at 8 kHz (160 bytes)' }) }),
  }, { description: 'The assistant\'s voice, paced in real time with 100 ms sent ahead' }),
  clear: Type.Object({ event: Type.Literal('clear'), streamSid: Type.String() }, { description: 'The caller spoke over the answer: drop what is buffered and not played' }),
  mark: Type.Object({ event: Type.Literal('mark'), streamSid: Type.String(), mark: Type.Object({ name: Type.String() }) }, {
    description: 'Sent once, after the last audio, when the call ends from Parley\'s side; Parley closes the socket when Twilio echoes it',
  }),
} as const;

export type ToTwilio = { [K in keyof typeof TwilioReplies]: Static<(typeof TwilioReplies)[K]> }[keyof typeof TwilioReplies];

const checkers: Record<string, { Check(value: unknown): boolean }> = Object.fromEntries(
  Object.entries(TwilioMessages).map(([event, schema]) => [event, Compile(schema)]),
);

/** A message from Twilio, or why it is not one. */
export function parseTwilioMessage(raw: string): TwilioMessage | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'not JSON' };
  }
  const event = typeof value === 'object' && value !== null && 'event' in value ? value.event : undefined;
  if (typeof event !== 'string' || !Object.hasOwn(checkers, event)) return { error: 'unknown event' };
  return checkers[event]?.Check(value) ? (value as TwilioMessage) : { error: `invalid ${event} message` };
}
