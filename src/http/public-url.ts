import type { FastifyRequest } from 'fastify';

/**
 * The service's public base URL, without a trailing slash: PARLEY_PUBLIC_URL when configured
 * (then the request's Host is not used at all), else the scheme and Host of the request as it
 * arrived (X-Forwarded-Proto and -Host count only from the proxies PARLEY_TRUST_PROXY names).
 */
export function publicBase(publicUrl: string | null, request: FastifyRequest): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}

/** The same base for WebSocket URLs: `https` becomes `wss`, `http` becomes `ws`. */
export function websocketBase(publicUrl: string | null, request: FastifyRequest): string {
  return publicBase(publicUrl, request).replace(/^http/i, 'ws');
}
