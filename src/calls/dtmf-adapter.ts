import type { Log } from './record.ts';
import type { CallSession } from './session.ts';

/**
 * TEMPORARY ADAPTER, until `CallSession.dtmf(digit)` is on main (it comes with the call-control
 * work). A transport that hears keypresses (Twilio's `dtmf` messages) hands them here: they go to
 * the session's `dtmf` when it has one, and are dropped otherwise, with a log line that counts the
 * keypress but never names the digit (it may be part of a PIN). When `dtmf` lands, replace the
 * use of this function with `(digit) => session.dtmf(digit)` and delete this file.
 */
export function forwardDtmf(session: CallSession, log: Log): (digit: string) => void {
  const target = session as CallSession & { dtmf?: (digit: string) => void };
  return (digit) => {
    if (typeof target.dtmf === 'function') return target.dtmf(digit);
    log.info({ callId: session.callId }, 'a keypress (DTMF) arrived; this version does not act on keypresses yet');
  };
}
