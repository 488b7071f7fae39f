/**
 * Side-effect adapters handed to services, so tests can swap them. Implementations live in
 * src/mail, src/llm, src/training and src/domain/logs.
 */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Log types of the spec: 4 Error, 3 Warning, 2 Normal, 1 Verbose, 0 Extra verbose. */
export type LogType = 0 | 1 | 2 | 3 | 4;
export interface EventEntry {
  type: LogType;
  procedure: string;
  text: string;
  host?: string;
  pid?: number;
  userId?: number | null;
  requestId?: string;
}
/** The service's own noteworthy events, written to the log entries administrators read. */
export interface EventLog {
  record(entry: EventEntry): Promise<void>;
}
export const silentEventLog: EventLog = { record: async () => undefined };
