/**
 * Where the time of a voice turn went, from the caller's last speech to the first audio frame of
 * the answer sent: the parts follow each other and add up to the total. With a speculative
 * answer the first token may come before the turn was confirmed; its part is then 0.
 */
export interface TurnLatency {
  /** Last speech → the turn confirmed over (the silence waited for, and the STT's final). */
  endpointingMs: number;
  /** Turn confirmed → the LLM's first token. */
  llmFirstTokenMs: number;
  /** First token (or the confirmation, when it came later) → the first audio frame sent. */
  ttsFirstAudioMs: number;
  totalMs: number;
}

/** The times of a turn, all on one clock (ms). */
export interface TurnTimes {
  lastSpeechAt: number;
  endedAt: number;
  firstTokenAt: number | null;
  firstAudioAt: number;
}

export function turnLatency(t: TurnTimes): TurnLatency {
  // Each boundary rounded once, from the last speech, so the rounded parts add up to the total.
  const at = (time: number) => Math.round(Math.max(0, time - t.lastSpeechAt));
  const total = at(t.firstAudioAt);
  const ended = Math.min(at(t.endedAt), total);
  const token = Math.min(at(t.firstTokenAt ?? t.firstAudioAt), total);
  const speaking = Math.max(token, ended);
  return { endpointingMs: ended, llmFirstTokenMs: Math.max(0, token - ended), ttsFirstAudioMs: total - speaking, totalMs: total };
}
