import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { createPasswordsService } from './domain/accounts/passwords.service.js';
import type { PasswordHasher } from './domain/accounts/secrets.js';
import {
  createAuthAttemptsRepository,
  createPasswordTokensRepository,
  createSessionsRepository,
} from './domain/accounts/sessions.repository.js';
import { createSessionsService } from './domain/accounts/sessions.service.js';
import { createUsersRepository } from './domain/accounts/users.repository.js';
import { createUsersService } from './domain/accounts/users.service.js';
import type { Clock, EventLog, Mailer } from './domain/ports.js';
import { silentEventLog } from './domain/ports.js';
import { createSummariesService } from './domain/summaries/summaries.service.js';

/** Side-effect adapters the services need; tests hand in their own. */
export interface ServiceDeps {
  config: Config;
  database: DatabaseHandle;
  mailer: Mailer;
  clock: Clock;
  hasher: PasswordHasher;
  /** Key for secrets encrypted at rest (provider keys). */
  secretKey: string;
  events?: EventLog;
}

/**
 * The composition root of the domain: repositories, then services, written out top to bottom so the
 * whole wiring reads in one place. HTTP routes receive the result; nothing else builds services.
 */
export function buildServices(deps: ServiceDeps) {
  const { config, clock, hasher, mailer } = deps;
  const db = deps.database.db;
  const events = deps.events ?? silentEventLog;

  // --- accounts ---
  const usersRepository = createUsersRepository(db);
  const sessionsRepository = createSessionsRepository(db);
  const attemptsRepository = createAuthAttemptsRepository(db);
  const sessions = createSessionsService({
    users: usersRepository,
    sessions: sessionsRepository,
    attempts: attemptsRepository,
    hasher,
    clock,
    events,
    ttlSeconds: config.sessionTtlSeconds,
  });
  const users = createUsersService({ users: usersRepository, sessions: sessionsRepository, hasher, clock });
  const passwords = createPasswordsService({
    users: usersRepository,
    sessions: sessionsRepository,
    tokens: createPasswordTokensRepository(db),
    attempts: attemptsRepository,
    hasher,
    mailer,
    clock,
    events,
    publicUrl: config.publicUrl,
  });

  // --- summaries (each area contributes its counter) ---
  const summaries = createSummariesService({
    counters: {
      users: () => usersRepository.countByEnabled(),
      subscriptions: async () => ({ subscribed: 0, unsubscribed: 0 }),
      runningJobs: async () => 0,
      knowledges: async () => 0,
    },
  });

  return { events, sessions, users, passwords, summaries };
}

export type Services = ReturnType<typeof buildServices>;
