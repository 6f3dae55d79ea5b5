import { createHmac, timingSafeEqual } from 'node:crypto';

/** A form body as parsed: a parameter sent twice arrives as a list. */
export type FormParams = Record<string, string | string[] | undefined>;

/**
 * Twilio's X-Twilio-Signature: base64 of HMAC-SHA1, keyed with the account's auth token, over
 * the URL Twilio requested followed by every POST parameter's name and value, sorted by name,
 * with no separators. A parameter sent more than once contributes each distinct value, sorted,
 * as Twilio's own validator counts them.
 */
export function twilioSignature(authToken: string, url: string, params: FormParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? [...new Set(value)].sort() : [value];
    for (const v of values) data += name + v;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * The spellings of a URL Twilio may have signed: as configured, and with the scheme's default
 * port written out or left out (Twilio signs one or the other depending on how the URL was
 * given, so its own validator accepts both).
 */
export function signedUrlSpellings(url: string): string[] {
  // Taken apart as text: the path and query must stay byte for byte as Twilio requested them.
  const parts = /^(https?):\/\/([^/?#]+)(.*)$/is.exec(url);
  if (!parts) return [url];
  const [, scheme = '', authority = '', rest = ''] = parts;
  const defaultPort = scheme.toLowerCase() === 'https' ? '443' : '80';
  const port = /:(\d+)$/.exec(authority);
  if (port && port[1] !== defaultPort) return [url];
  const host = port ? authority.slice(0, -port[0].length) : authority;
  return [`${scheme}://${host}${rest}`, `${scheme}://${host}:${defaultPort}${rest}`];
}

/** Whether `signature` (the header's value) signs this request; compared in constant time. */
export function checkTwilioSignature(authToken: string, signature: string | undefined, url: string, params: FormParams): boolean {
  if (!signature) return false;
  const given = Buffer.from(signature, 'utf8');
  let valid = false;
  for (const spelling of signedUrlSpellings(url)) {
    const expected = Buffer.from(twilioSignature(authToken, spelling, params), 'utf8');
    // Every spelling is compared, so the time taken does not tell which one came close.
    if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true;
  }
  return valid;
}
