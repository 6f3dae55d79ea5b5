import type { CodecName } from '../sdp.ts';

/** The silence byte of each G.711 law: what the jitter buffer plays for a lost frame. */
export const SILENCE: Record<CodecName, number> = { PCMU: 0xff, PCMA: 0xd5 };
