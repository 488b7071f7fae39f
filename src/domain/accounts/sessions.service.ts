import { Errors } from '../errors.js';
import type { Caller } from '../caller.js';
import type { Clock, EventLog } from '../ports.js';
import type { PasswordHasher } from './secrets.js';
import { hashToken, newToken } from './secrets.js';
import type { SessionsRepository } from './sessions.repository.js';
import type { UsersRepository } from './users.repository.js';
import type { createAuthAttemptsRepository } from './sessions.repository.js';

/** Failed logins per e-mail allowed in the window before the account is locked for the rest of it. */
const LOGIN_FAILURES_ALLOWED = 10;
const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/** Sliding expiry is written at most once a minute per session, keeping the session check a read. */
const TOUCH_INTERVAL_MS = 60 * 1000;

export interface SessionsServiceDeps {
  users: UsersRepository;
  sessions: SessionsRepository;
  attempts: ReturnType<typeof createAuthAttemptsRepository>;
  hasher: PasswordHasher;
  clock: Clock;
  events: EventLog;
  ttlSeconds: number;
}

export interface LoginResult {
  token: string;
  user: { id: number; role: 'admin' | 'consumer'; name: string; clientId: number | null };
}

export function createSessionsService(deps: SessionsServiceDeps) {
  const { users, sessions, attempts, hasher, clock, events } = deps;
  const ttlMs = deps.ttlSeconds * 1000;
  // A real hash to compare against when the e-mail is unknown, so timing does not reveal accounts.
  const dummyHash = hasher.hash('not-a-real-password');

  return {
    async login(email: string, password: string, meta: { ip?: string; requestId?: string } = {}): Promise<LoginResult> {
      const subject = email.trim().toLowerCase();
      const now = clock.now();
      const failures = await attempts.countSince('login', subject, new Date(now.getTime() - LOGIN_WINDOW_MS));
      if (failures >= LOGIN_FAILURES_ALLOWED) throw Errors.rateLimited(Math.ceil(LOGIN_WINDOW_MS / 1000));

      const user = await users.findCredentialsByEmail(subject);
      const valid = await hasher.verify(password, user?.password_hash ?? (await dummyHash));
      if (!user || !valid) {
        await attempts.record('login', subject);
        await events.record({
          type: 3,
          procedure: 'sessions.login',
          text: `Failed login for ${subject}${meta.ip ? ` from ${meta.ip}` : ''}`,
          requestId: meta.requestId,
        });
        throw Errors.invalidCredentials();
      }
      if (!user.is_enabled) throw Errors.userDisabled();
      await attempts.clear('login', subject);
      const token = newToken();
      await sessions.create(user.id, hashToken(token), new Date(now.getTime() + ttlMs));
      return { token, user: { id: user.id, role: user.role, name: user.name, clientId: user.client_id } };
    },

    /** Resolves a session value to its caller, or throws invalidSession. */
    async authenticate(token: string | undefined): Promise<Caller> {
      if (!token) throw Errors.missingParameter('session');
      const now = clock.now();
      const row = await sessions.findActiveByTokenHash(hashToken(token), now, new Date(now.getTime() - TOUCH_INTERVAL_MS));
      if (!row) throw Errors.invalidSession();
      if (row.needs_touch) {
        await sessions.extend(row.session_id, now, new Date(now.getTime() + ttlMs));
      }
      return {
        userId: row.user_id,
        role: row.role,
        name: row.name,
        lastname: row.lastname,
        email: row.email,
        clientId: row.client_id,
        sessionId: row.session_id,
        token,
      };
    },

    /** Logout. `userId` must be the caller's own (the legacy API sends it alongside the session). */
    async logout(caller: Caller, userId: number): Promise<void> {
      if (userId !== caller.userId) throw Errors.invalidParameter('user_id', 'does not match the session');
      await sessions.end(caller.sessionId, clock.now());
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
