// The few logger methods the SIP layer uses; pino's Logger fits, and so does silentLog.
export interface SipLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export const silentLog: SipLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined };
