import type { Context } from '../../context.ts';
import type { KeyedProvider, ResolveAccess } from '../../calls/voice/plan-for.ts';
import { EgressError } from '../../egress/client.ts';
import { guardConnection } from '../../egress/connect-guard.ts';
import { DEEPGRAM_BASE_URL } from '../../voice/stt/deepgram.ts';
import { DEFAULT_TTS_BASE_URLS } from '../../voice/tts/index.ts';
import { resolveProviderAccess } from './providers.service.ts';

const DEFAULT_OPENAI = 'https://api.openai.com/v1';

/** The organization's provider credential first, then the platform's (resolveProviderAccess), with the public default base URL. */
export function organizationAccess(ctx: Pick<Context, 'db' | 'secrets' | 'config' | 'egress'>): ResolveAccess {
  const fallback: Record<KeyedProvider, string> = {
    openai: DEFAULT_OPENAI, elevenlabs: DEFAULT_TTS_BASE_URLS.elevenlabs, deepgram: DEEPGRAM_BASE_URL, cartesia: DEFAULT_TTS_BASE_URLS.cartesia,
  };
  return async (organizationId, provider) => {
    const access = await resolveProviderAccess(ctx, organizationId, provider);
    if (!access) return null;
    const baseUrl = access.baseUrl ?? fallback[provider];
    if (!access.egressChecked) return { apiKey: access.apiKey, baseUrl };
    try {
      // A tenant's base URL: judged now when it is an address, and at every connection's DNS lookup when it is a name.
      return { apiKey: access.apiKey, baseUrl, lookup: guardConnection(baseUrl, ctx.egress.allow).lookup };
    } catch (error) {
      return { refused: error instanceof EgressError ? error.message : 'refused by the egress policy' };
    }
  };
}

