/**
 * The TwiML documents the voice webhook answers with (Twilio's XML call instructions). Three
 * small fixed documents: building them with an XML library would add a dependency for nothing
 * a five-character escape does not cover.
 */
const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

const document = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<Response>${body}</Response>\n`;

/** A bidirectional media stream to `url` (`<Connect><Stream>`): the call is the assistant's until the socket closes, then Twilio hangs up. */
export const connectStream = (url: string) => document(`<Connect><Stream url="${escapeXml(url)}"/></Connect>`);

/** Says one sentence and hangs up: for a number that no assistant answers. */
export const sayAndHangUp = (text: string) => document(`<Say>${escapeXml(text)}</Say><Hangup/>`);

/** The caller hears a busy signal and the call is not answered (nor billed as answered). */
export const rejectBusy = () => document('<Reject reason="busy"/>');
