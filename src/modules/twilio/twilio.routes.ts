import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { responses } from '../../http/envelope.ts';
import { badRequest } from '../../http/errors.ts';
import { isUuid, OrgParams } from '../../http/schemas.ts';
import type { CallDeps } from '../calls/calls.service.ts';
import { TwiML, TwilioVoiceRequest } from './twilio.schemas.ts';
import { answerVoiceRequest, verifyTwilioRequest } from './twilio.service.ts';

/**
 * POST {org_path}/twilio/voice: the voice webhook a Twilio number is pointed at ("A call comes
 * in"). No API token: X-Twilio-Signature, made with the organization's Twilio auth token,
 * authenticates it, and is checked before the body is even validated. Registered under the
 * organization prefix but outside the organization scope (which requires a bearer token): an
 * organization that does not exist simply has no credential, so it is the same 403.
 */

export const twilioVoiceRoutes: FastifyPluginAsyncTypebox<{ deps: CallDeps }> = async (app, { deps }) => {
  // Form bodies are parsed here only: every other route stays JSON (a form body there is a 415).
  await app.register(formbody, { bodyLimit: 64 * 1024 });

  app.post('/twilio/voice', {
    config: { auth: { scope: 'public' } },
    schema: {
      tags: ['Twilio'],
      operationId: 'answerTwilioCall', summary: 'The voice webhook of a Twilio number (signed by Twilio, no API token)',
      description: 'Point a Twilio number\'s "A call comes in" webhook here (HTTP POST). Twilio signs the request with the account\'s auth token, ' +
        'which the organization stores as its `twilio` provider credential; a missing credential, a wrong signature or another account\'s ' +
        '`AccountSid` is a 403 and nothing is created. The number dialled (`To`) picks the assistant (else the agent) whose ' +
        '`telephoneNumberId` is that SIP number; the answer is TwiML that connects the call to its media stream. See docs/twilio.md.',
      security: [],
      consumes: ['application/x-www-form-urlencoded'],
      params: OrgParams,
      body: TwilioVoiceRequest,
      response: { ...responses(200, Type.Null()), 200: { description: 'TwiML', content: { 'text/xml': { schema: TwiML } } } },
    },
    // Before validation, so the signature is checked over the form exactly as Twilio sent it; the
    // path's ids are checked here first, as validation would, since the check reads the database.
    preValidation: (request) => {
      const params = request.params as Record<string, string>;
      const bad = (['vendorId', 'organizationId'] as const).filter((name) => !isUuid(params[name] ?? ''));
      if (bad.length) throw badRequest('Invalid path parameters', bad.map((name) => ({ path: name, message: 'must be a UUID' })));
      return verifyTwilioRequest(deps.ctx, request);
    },
  }, async (request, reply) => {
    const twiml = await answerVoiceRequest(deps, request);
    return reply.type('text/xml; charset=utf-8').send(twiml);
  });
};
