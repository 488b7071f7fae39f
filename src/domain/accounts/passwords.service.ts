import { Errors } from '../errors.js';
import type { Caller } from '../caller.js';
import type { Clock, EventLog, Mailer } from '../ports.js';
import { assertStrongPassword } from './password-policy.js';
import type { PasswordHasher } from './secrets.js';
import { hashToken, newToken } from './secrets.js';
import type { createAuthAttemptsRepository, createPasswordTokensRepository, SessionsRepository } from './sessions.repository.js';
import type { UsersRepository } from './users.repository.js';
import { passwordChangedMail, recoveryMail } from '../../mail/templates.js';

export const RECOVERY_TOKEN_TTL_MS = 60 * 60 * 1000;
/**
 * Recovery e-mails sent to one address per hour; more requests are silently dropped (the reply never
 * differs). Only sent mails count, and each stays valid for the hour, so requests from someone else
 * cannot keep the owner without a working link: they only bound the mail an inbox receives.
 */
const RECOVERY_MAILS_PER_HOUR = 3;
const RECOVERY_WINDOW_MS = RECOVERY_TOKEN_TTL_MS;

export function createPasswordsService(deps: {
  users: UsersRepository;
  sessions: SessionsRepository;
  tokens: ReturnType<typeof createPasswordTokensRepository>;
  attempts: ReturnType<typeof createAuthAttemptsRepository>;
  hasher: PasswordHasher;
  mailer: Mailer;
  clock: Clock;
  events: EventLog;
  publicUrl: string;
}) {
  const { users, sessions, tokens, attempts, hasher, mailer, clock, events } = deps;

  async function finishChange(userId: number, email: string, name: string, newPassword: string, keepSessionId?: number) {
    await users.update(userId, { password_hash: await hasher.hash(newPassword) });
    await sessions.endAllForUser(userId, clock.now(), keepSessionId);
    await mailer.send(passwordChangedMail({ to: email, name }));
  }

  function checkNewPassword(newPassword: string, repeat: string) {
    if (newPassword !== repeat) {
      throw Errors.invalidParameter('new_password_repeat', 'does not match new_password');
    }
    assertStrongPassword(newPassword);
  }

  return {
    /** Answers the same whether or not the e-mail is known, so it cannot be used to find accounts. */
    async requestRecovery(email: string): Promise<void> {
      const subject = email.trim().toLowerCase();
      const now = clock.now();
      const since = new Date(now.getTime() - RECOVERY_WINDOW_MS);
      if ((await attempts.countSince('recovery', subject, since)) >= RECOVERY_MAILS_PER_HOUR) return;
      const user = await users.findByEmail(subject);
      if (!user || !user.is_enabled) return;
      await attempts.record('recovery', subject, now, since);
      const token = newToken();
      await tokens.create(user.id, hashToken(token), new Date(now.getTime() + RECOVERY_TOKEN_TTL_MS));
      await mailer.send(recoveryMail({ to: user.email, name: user.name, token, publicUrl: deps.publicUrl }));
      await events.record({ type: 2, procedure: 'passwords.recovery', text: `Password recovery sent to user ${user.id}`, userId: user.id });
    },

    async resetWithToken(token: string, newPassword: string, repeat: string): Promise<void> {
      checkNewPassword(newPassword, repeat);
      const userId = await tokens.consume(hashToken(token), clock.now());
      if (userId === undefined) throw Errors.invalidParameter('token', 'unknown, expired or already used');
      const user = await users.findById(userId);
      if (!user) throw Errors.notFound('User', userId);
      await finishChange(user.id, user.email, user.name, newPassword);
    },

    async changeWithSession(caller: Caller, currentPassword: string, newPassword: string, repeat: string): Promise<void> {
      const stored = await users.findPasswordHash(caller.userId);
      if (!stored || !(await hasher.verify(currentPassword, stored))) {
        throw Errors.invalidParameter('current_password', 'is not correct');
      }
      checkNewPassword(newPassword, repeat);
      await finishChange(caller.userId, caller.email, caller.name, newPassword, caller.sessionId);
    },
  };
}

export type PasswordsService = ReturnType<typeof createPasswordsService>;
