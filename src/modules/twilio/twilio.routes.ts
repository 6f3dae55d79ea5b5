import formbody from '@fastify/formbody';
import type { FastifyError } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponse } from '../../http/envelope.ts';
import { AppError, badRequest } from '../../http/errors.ts';
import { isUuid, OrgParams } from '../../http/schemas.ts';
import type { CallDeps } from '../calls/calls.service.ts';
import { TwiML, TwilioVoiceRequest } from './twilio.schemas.ts';
import { answerVoiceRequest, verifyTwilioRequest } from './twilio.service.ts';

/** Twilio's voice requests are a few KiB. */
const FORM_LIMIT_BYTES = 64 * 1024;

/**
 * POST {org_path}/twilio/voice: the voice webhook a Twilio number is pointed at ("A call comes
 * in"). No API token: X-Twilio-Signature, made with the organization's Twilio auth token,
 * authenticates it, and is checked before the body is even validated. Registered under the
 * organization prefix but outside the organization scope (which requires a bearer token): an
 * organization that does not exist simply has no credential, so it is the same 403.
 */

export const twilioVoiceRoutes: FastifyPluginAsyncTypebox<{ deps: CallDeps }> = async (app, { deps }) => {
  // Form bodies are parsed here only: every other route stays JSON (a form body there is a 415).
  await app.register(formbody, { bodyLimit: FORM_LIMIT_BYTES });
  // The body errors in this route's own terms (the app's say "1 MiB" and "JSON"); the rest go to the app's handler.
  app.setErrorHandler((error: FastifyError) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw new AppError(413, 'The form is larger than 64 KiB');
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw new AppError(415, 'Content-Type must be application/x-www-form-urlencoded, as Twilio sends it');
    throw error;
  });

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
      // No token and a form body: none of the usual 401, 404, 415 "not JSON" or 429 of a tenant route.
      response: {
        200: { description: 'TwiML', content: { 'text/xml': { schema: TwiML } } },
        400: errorResponse(400, 'A path id is not a UUID, or the signed form lacks To or CallSid or holds control characters; error.details names each (VALIDATION_FAILED)'),
        403: errorResponse(403, 'Not signed by this organization\'s Twilio account: no twilio provider credential (or no such organization), a missing or wrong X-Twilio-Signature, or another AccountSid (FORBIDDEN)'),
        413: errorResponse(413, 'The form is larger than 64 KiB (PAYLOAD_TOO_LARGE)'),
        415: errorResponse(415, 'The body is not application/x-www-form-urlencoded, as Twilio sends it (UNSUPPORTED_MEDIA_TYPE)'),
        500: errorResponse(500),
        503: errorResponse(503),
      },
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
