/** Why a call failed, as the record, the log and the error frame say it (never a key). */
export interface CallFailure {
  /** What failed: `llm`, `setup`, a transport, or a provider such as `tts:elevenlabs`, `stt:deepgram`. */
  source: string;
  statusCode: number | null;
  message: string;
}
