import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API tokens look like `prl_<publicId>_<secret>`. The public id finds the row by index; the
 * secret is kept only as a SHA-256 hash (it is 32 random bytes, so a slow hash adds nothing)
 * and compared in constant time.
 */
const TOKEN = /^prl_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export function generateToken(): { value: string; publicId: string; secretHash: string } {
  const publicId = randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 12);
  const secret = randomBytes(32).toString('base64url');
  return { value: `prl_${publicId}_${secret}`, publicId, secretHash: hashSecret(secret) };
}

export function parseToken(value: string): { publicId: string; secret: string } | null {
  const match = TOKEN.exec(value);
  return match?.[1] && match[2] ? { publicId: match[1], secret: match[2] } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export function generateAdminToken(): string {
  return `prl_admin_${randomBytes(32).toString('base64url')}`;
}
