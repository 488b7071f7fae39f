import os from 'node:os';
import type { Clock, EventEntry, EventLog } from '../ports.js';
import type { LogsRepository } from './logs.repository.js';

/**
 * The EventLog port stored as log entries, so an administrator reads the service's own events (start,
 * failed logins, recoveries, job failures) with GET /logs. Recording never fails the operation that
 * reports: a log write that cannot happen is handed to `onError` and dropped.
 */
export function createDatabaseEventLog(deps: {
  logs: LogsRepository;
  clock: Clock;
  host?: string;
  pid?: number;
  onError?: (error: unknown, entry: EventEntry) => void;
}): EventLog {
  const host = deps.host ?? os.hostname();
  const pid = deps.pid ?? process.pid;
  return {
    async record(entry) {
      try {
        await deps.logs.insert(
          {
            host: entry.host ?? host,
            pid: entry.pid ?? pid,
            procedure: entry.procedure,
            type: entry.type,
            text: entry.text,
            user_id: entry.userId ?? null,
            request_id: entry.requestId ?? null,
          },
          deps.clock.now(),
        );
      } catch (error) {
        deps.onError?.(error, entry);
      }
    },
  };
}
