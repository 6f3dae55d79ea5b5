import { createHmac } from 'node:crypto';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60_000;

/** Standard Webhooks: a `whsec_` secret is base64 after the prefix; any other is its UTF-8 bytes. */
export function signingKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

interface SigningSecrets {
  current: string;
  /** The rotated-out secret, while it still signs. */
  previous?: string | undefined;
}

/** The three Standard Webhooks headers; one `v1,` signature per secret, space-separated. */
export function webhookHeaders(secrets: SigningSecrets, id: string, now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = [secrets.current, ...(secrets.previous === undefined ? [] : [secrets.previous])].map((s) => sign(s, id, timestamp, body));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}
