// Small message bodies read during a call: message/sipfrag in REFER NOTIFYs (RFC 3515,
// RFC 3420) and DTMF in INFO requests (application/dtmf-relay, application/dtmf).

export interface SipfragStatus {
  status: number;
  reason: string;
}

/** The status line of a message/sipfrag body ("SIP/2.0 200 OK"), or null when there is none. */
export function parseSipfrag(body: Buffer): SipfragStatus | null {
  const line = body.subarray(0, 256).toString('utf8').split(/\r?\n/)[0] ?? '';
  const m = /^SIP\/2\.0\s+([1-6]\d\d)(?:\s+([^\r\n]*))?$/i.exec(line.trim());
  return m ? { status: Number(m[1]), reason: (m[2] ?? '').trim() } : null;
}

const DIGITS = '0123456789*#ABCD';

/** A DTMF digit from an event code (RFC 4733 §3.2: 0-9, 10 = *, 11 = #, 12-15 = A-D). */
export function digitOfEvent(code: number): string | null {
  return Number.isInteger(code) && code >= 0 && code < DIGITS.length ? (DIGITS[code] ?? null) : null;
}

export function eventOfDigit(digit: string): number | null {
  const i = DIGITS.indexOf(digit.toUpperCase());
  return digit.length === 1 && i !== -1 ? i : null;
}

function normaliseSignal(raw: string): string | null {
  const v = raw.trim().toUpperCase();
  if (/^\d{1,2}$/.test(v) && Number(v) > 9) return digitOfEvent(Number(v));
  return v.length === 1 && DIGITS.includes(v) ? v : null;
}

/** DTMF carried in an INFO body; null for other content or a body we cannot read. */
export function parseDtmfInfo(contentType: string | undefined, body: Buffer): { digit: string; durationMs: number | null } | null {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  const text = body.subarray(0, 512).toString('utf8');
  if (type === 'application/dtmf-relay') {
    const fields = new Map<string, string>();
    for (const line of text.split(/\r?\n/)) {
      const eq = line.indexOf('=');
      if (eq > 0) fields.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
    }
    const digit = normaliseSignal(fields.get('signal') ?? '');
    const duration = Number(fields.get('duration'));
    return digit ? { digit, durationMs: Number.isFinite(duration) && duration > 0 ? duration : null } : null;
  }
  if (type === 'application/dtmf') {
    const digit = normaliseSignal(text);
    return digit ? { digit, durationMs: null } : null;
  }
  return null;
}
