import { Type, type Static } from 'typebox';

/** No control characters: the numbers end up in the call record and in tool webhook bodies. */
const FormText = (maxLength: number, description?: string) =>
  Type.String({ maxLength, pattern: '^[^\\u0000-\\u001f\\u007f]*$', ...(description ? { description } : {}) });

/**
 * The parameters of Twilio's voice request, form-encoded. Twilio sends many more (`CallStatus`,
 * `Direction`, `CallerName`, …) and adds new ones over time: they are accepted, count in the
 * signature, and are otherwise ignored.
 */
export const TwilioVoiceRequest = Type.Object(
  {
    To: FormText(256, 'The number dialled (E.164, or a SIP URI for calls to a Twilio SIP domain)'),
    From: Type.Optional(FormText(256)),
    CallSid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7e]+$', description: 'Twilio\'s id of the call; a CallSid the organization has answered before is refused (a replay)' }),
    AccountSid: Type.Optional(FormText(64)),
  },
  {
    additionalProperties: true,
    title: 'TwilioVoiceRequest',
    examples: [{ CallSid: 'CA5e8a1b0d7c6f4e3a2b1c0d9e8f7a6b5c', AccountSid: 'AC0123456789abcdef0123456789abcdef', From: '+14155550100', To: '+14155550199', CallStatus: 'ringing', Direction: 'inbound' }],
  },
);
export type TwilioVoiceRequest = Static<typeof TwilioVoiceRequest>;

export const TwiML = Type.String({
  title: 'TwiML',
  description: 'TwiML: <Connect><Stream url="wss://…/media-stream/…"/></Connect> for a number an assistant answers; ' +
    '<Say> and <Hangup/> for a number none answers; <Reject reason="busy"/> when the organization is at its call limit, ' +
    'or for a CallSid it has answered before (a replayed request)',
  examples: ['<?xml version="1.0" encoding="UTF-8"?>\n<Response><Connect><Stream url="wss://parley.example.com/api/v1/calls/6a1f0c52-8f3e-4d7a-9b61-0c2e4f5a7d19/media-stream/3qQ9…"/></Connect></Response>\n'],
});
