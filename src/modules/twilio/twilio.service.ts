import type { FastifyRequest } from 'fastify';
import { sipTransportInfo } from '../../calls/transports/transport.ts';
import { TWILIO_AUDIO } from '../../calls/transports/twilio.ts';
import type { Context } from '../../context.ts';
import { checkTwilioSignature, type FormParams } from '../../crypto/twilio-signature.ts';
import { AppError, forbidden } from '../../http/errors.ts';
import { publicBase, websocketBase } from '../../http/public-url.ts';
import { createCall, type CallDeps } from '../calls/calls.service.ts';
import { mediaStreamPath } from '../calls/media-stream.socket.ts';
import { resolveProviderAccess } from '../providers/providers.service.ts';
import { callingNumber, dialledNumber } from '../../telephony/numbers.ts';
import { connectStream, rejectBusy, sayAndHangUp } from '../../telephony/twiml.ts';
import { answeringAssistant } from '../sip/telephony-directory.ts';
import { claimCallSid, releaseCallSid } from './twilio.replays.ts';
import type { TwilioVoiceRequest } from './twilio.schemas.ts';

/** What the caller hears when the number dialled is not one an assistant or agent of the organization answers. */
export const NOT_CONNECTED = 'This number is not connected to an assistant. Goodbye.';

/** The one answer to an unauthenticated request, whatever failed: it must not tell a stranger whether the organization has a Twilio account. */
const NOT_SIGNED = 'The request is not signed by this organization\'s Twilio account (X-Twilio-Signature)';

/** The form parameters as the signature counts them (a request without a form body has none). */
function formParams(body: unknown): FormParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const params: FormParams = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))) params[name] = value;
  }
  return params;
}

/**
 * Checks that Twilio, for this organization's account, sent the request: the organization's
 * twilio credential (its auth token) must sign the URL Twilio requested (the public base URL
 * and the path as received) and the form parameters; when the credential names an Account SID,
 * the request's `AccountSid` must be that one. Anything else is a 403 and nothing happens.
 */
// The request is taken untyped: it is called before validation (the params are checked by the route first).
export async function verifyTwilioRequest(ctx: Context, request: FastifyRequest): Promise<void> {
  const { vendorId, organizationId } = request.params as { vendorId: string; organizationId: string };
  const organization = await ctx.db.kysely.selectFrom('organizations').select('id').where('id', '=', organizationId).where('vendor_id', '=', vendorId).executeTakeFirst();
  const access = organization ? await resolveProviderAccess(ctx, organizationId, 'twilio') : null;
  const url = `${publicBase(ctx.config.publicUrl, request)}${request.url}`;
  const params = formParams(request.body);
  const header = request.headers['x-twilio-signature'];
  if (!access?.apiKey) {
    request.log.warn({ organizationId }, 'Twilio voice request refused: the organization has no twilio provider credential');
    throw forbidden(NOT_SIGNED);
  }
  if (!checkTwilioSignature(access.apiKey, typeof header === 'string' ? header : undefined, url, params)) {
    // The URL is logged (it holds no secret) because a proxy that rewrites it is the usual cause.
    request.log.warn({ organizationId, signedUrl: url }, 'Twilio voice request refused: X-Twilio-Signature does not match (is PARLEY_PUBLIC_URL the address Twilio calls?)');
    throw forbidden(NOT_SIGNED);
  }
  if (access.accountSid && params.AccountSid !== access.accountSid) {
    request.log.warn({ organizationId }, 'Twilio voice request refused: signed, but for another Account SID than the credential names');
    throw forbidden('The request\'s AccountSid is not the account of this organization\'s twilio credential');
  }
}

/**
 * Answers a verified voice request with TwiML: a call for the assistant (or agent) that answers
 * the number dialled, whose media stream Twilio connects to; a spoken refusal for a number none
 * answers; a busy signal when the organization is at its call limit, and for a CallSid it has
 * answered before (a replay: Twilio's signature has no timestamp, so the CallSid is what tells).
 */
export async function answerVoiceRequest(deps: CallDeps, request: FastifyRequest): Promise<string> {
  const { ctx } = deps;
  const { organizationId } = request.params as { organizationId: string };
  const form = request.body as TwilioVoiceRequest;
  if (!(await claimCallSid(ctx.db.kysely, organizationId, form.CallSid, ctx.clock.now()))) {
    request.log.warn({ organizationId, callSid: form.CallSid }, 'Twilio voice request refused: this CallSid was answered before (a replay, or Twilio retrying a request whose answer it lost)');
    return rejectBusy();
  }
  try {
    return await answerCall(deps, request, organizationId, form);
  } catch (err) {
    // Failed on our side: Twilio's retry of this CallSid gets a fresh attempt, not the replay answer.
    await releaseCallSid(ctx.db.kysely, organizationId, form.CallSid).catch(() => {});
    throw err;
  }
}

async function answerCall(deps: CallDeps, request: FastifyRequest, organizationId: string, form: TwilioVoiceRequest): Promise<string> {
  const { ctx } = deps;
  const called = dialledNumber(form.To);
  const answering = called ? await answeringAssistant(ctx.db.kysely, organizationId, called) : 'no_number';
  if (typeof answering === 'string') {
    request.log.warn({ organizationId, callSid: form.CallSid, reason: answering }, 'Twilio call to a number no assistant answers');
    return sayAndHangUp(NOT_CONNECTED);
  }
  const caller = callingNumber(form.From);
  let call: { id: string; token: string };
  try {
    call = await createCall(deps, {
      kind: answering.kind, organizationId, sourceId: answering.id, userValues: {}, traceId: request.id,
      transport: sipTransportInfo(called ?? form.To, caller?.number, caller?.raw), audio: TWILIO_AUDIO,
    });
  } catch (err) {
    if (err instanceof AppError && err.status === 409) return rejectBusy();
    throw err;
  }
  const url = `${websocketBase(ctx.config.publicUrl, request)}${mediaStreamPath(call.id, call.token)}`;
  if (!url.startsWith('wss://')) request.log.warn({ callId: call.id }, 'Twilio opens media streams over wss:// only: set PARLEY_PUBLIC_URL to the https:// address Twilio reaches');
  request.log.info({ callId: call.id, callSid: form.CallSid }, 'Twilio call answered');
  return connectStream(url);
}
