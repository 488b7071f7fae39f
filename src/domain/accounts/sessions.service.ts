import { setTimeout as sleep } from 'node:timers/promises';
import { Errors } from '../errors.js';
import type { Caller } from '../caller.js';
import type { Clock, EventLog } from '../ports.js';
import type { PasswordHasher } from './secrets.js';
import { hashToken, newToken } from './secrets.js';
import type { SessionsRepository } from './sessions.repository.js';
import type { UsersRepository } from './users.repository.js';
import type { createAuthAttemptsRepository } from './sessions.repository.js';

/** E-mail-wide failures in the window before the slow-down starts (typos cost nothing). */
const SLOWDOWN_FREE_FAILURES = 5;
/** First delay of the slow-down; it doubles with every further failure up to `limits.slowdownMaxMs`. */
const SLOWDOWN_BASE_MS = 250;
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
  limits: LoginLimits;
}

/**
 * Failed logins count per (e-mail, client address): a pair refused after `failuresPerAddress` in the
 * window, so an attacker failing for someone else's e-mail exhausts only its own pair. E-mail-wide the
 * failures only slow every check down (capped at `slowdownMaxMs`), never refuse the right password.
 */
export interface LoginLimits {
  failuresPerAddress: number;
  windowMs: number;
  slowdownMaxMs: number;
}

export function slowdownMs(emailFailures: number, maxMs: number): number {
  if (emailFailures < SLOWDOWN_FREE_FAILURES) return 0;
  return Math.min(maxMs, SLOWDOWN_BASE_MS * 2 ** Math.min(20, emailFailures - SLOWDOWN_FREE_FAILURES));
}

export interface LoginResult {
  token: string;
  user: { id: number; role: 'admin' | 'consumer'; name: string; clientId: number | null };
}

export function createSessionsService(deps: SessionsServiceDeps) {
  const { users, sessions, attempts, hasher, clock, events, limits } = deps;
  const ttlMs = deps.ttlSeconds * 1000;
  // A real hash to compare against when the e-mail is unknown, so timing does not reveal accounts.
  const dummyHash = hasher.hash('not-a-real-password');

  return {
    async login(email: string, password: string, meta: { ip?: string; requestId?: string } = {}): Promise<LoginResult> {
      const subject = email.trim().toLowerCase();
      const address = meta.ip ?? 'unknown';
      const now = clock.now();
      const since = new Date(now.getTime() - limits.windowMs);
      const failures = await attempts.loginFailures(subject, address, since);
      if (failures.pair >= limits.failuresPerAddress) {
        const nth = await attempts.nthNewestPairFailure(subject, address, since, limits.failuresPerAddress);
        const freeAt = (nth ?? now).getTime() + limits.windowMs;
        throw Errors.rateLimited(Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)));
      }
      const delay = slowdownMs(failures.total, limits.slowdownMaxMs);
      if (delay > 0) await sleep(delay);

      const user = await users.findCredentialsByEmail(subject);
      const valid = await hasher.verify(password, user?.password_hash ?? (await dummyHash));
      if (!user || !valid) {
        await attempts.record('login', subject, clock.now(), since, address);
        await events.record({
          type: 3,
          procedure: 'sessions.login',
          text: `Failed login for ${subject}${meta.ip ? ` from ${meta.ip}` : ''}`,
          requestId: meta.requestId,
        });
        throw Errors.invalidCredentials();
      }
      if (!user.is_enabled) throw Errors.userDisabled();
      await attempts.clearPair(subject, address);
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
