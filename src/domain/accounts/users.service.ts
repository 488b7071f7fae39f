import { Errors } from '../errors.js';
import { isAdmin, type Caller } from '../caller.js';
import type { Clock } from '../ports.js';
import { assertStrongPassword } from './password-policy.js';
import type { PasswordHasher } from './secrets.js';
import type { SessionsRepository } from './sessions.repository.js';
import type { UserListFilter, UserPatch, UserRow, UsersRepository } from './users.repository.js';

export type { UserRow };

export interface NewUser {
  name: string;
  lastname: string;
  email: string;
  password: string;
  phone: string;
}

export interface UserChanges {
  name?: string;
  lastname?: string;
  phone?: string;
  role?: 'admin' | 'consumer';
  enabled?: boolean;
}

export function createUsersService(deps: {
  users: UsersRepository;
  sessions: SessionsRepository;
  hasher: PasswordHasher;
  clock: Clock;
}) {
  const { users, sessions, hasher, clock } = deps;

  return {
    /** Self-registration (POST /users): always a consumer. */
    async register(input: NewUser, role: 'admin' | 'consumer' = 'consumer'): Promise<number> {
      assertStrongPassword(input.password, 'password');
      const id = await users.insert({
        email: input.email.trim(),
        name: input.name,
        lastname: input.lastname,
        phone: input.phone,
        role,
        password_hash: await hasher.hash(input.password),
      });
      if (id === undefined) throw Errors.conflict(`A user with e-mail ${input.email} already exists`);
      return id;
    },

    /**
     * Administrators list and search everyone; anyone else gets only itself. An administrator's own
     * e-mail is its identification (legacy admin screens always send it), not a filter; any other
     * e-mail filters exactly.
     */
    async list(caller: Caller, filter: Omit<UserListFilter, 'onlyUserId'>): Promise<UserRow[]> {
      if (!isAdmin(caller)) return users.list({ onlyUserId: caller.userId });
      const ownEmail = filter.email !== undefined && filter.email.trim().toLowerCase() === caller.email.trim().toLowerCase();
      return users.list(ownEmail ? { ...filter, email: undefined } : filter);
    },

    async patch(caller: Caller, userId: number | undefined, changes: UserChanges): Promise<void> {
      const targetId = isAdmin(caller) ? userId : (userId ?? caller.userId);
      if (targetId === undefined) throw Errors.missingParameter('user_id');
      if (!isAdmin(caller)) {
        if (targetId !== caller.userId) throw Errors.onlyOwnUser();
        if (changes.role !== undefined) throw Errors.cannotChangeOwn('role');
        if (changes.enabled !== undefined) throw Errors.cannotChangeOwn('enabled');
      }
      if (isAdmin(caller) && targetId === caller.userId && (changes.enabled === false || changes.role === 'consumer')) {
        // The last administrator locking itself out would leave nobody able to administer.
        if ((await users.countAdmins()) <= 1) throw Errors.wrongState('The last administrator cannot be disabled or demoted');
      }
      const patch: UserPatch = {};
      if (changes.name !== undefined) patch.name = changes.name;
      if (changes.lastname !== undefined) patch.lastname = changes.lastname;
      if (changes.phone !== undefined) patch.phone = changes.phone;
      if (changes.role !== undefined) patch.role = changes.role;
      if (changes.enabled !== undefined) patch.is_enabled = changes.enabled;
      if (Object.keys(patch).length === 0) throw Errors.missingParameter('name, lastname, phone, role or enabled');
      const found = await users.update(targetId, patch);
      if (!found) throw Errors.notFound('User', targetId);
      if (changes.enabled === false) await sessions.endAllForUser(targetId, clock.now());
    },

    /**
     * Used at start and by the admin CLI: create or update that administrator. `endSessions` (the CLI)
     * ends an existing user's sessions, as any password reset does; the start leaves them (it sets the
     * same ADMIN_PASSWORD at every start).
     */
    async ensureAdmin(email: string, password: string, options: { endSessions?: boolean } = {}): Promise<{ id: number; created: boolean }> {
      const existing = await users.findByEmail(email);
      const passwordHash = await hasher.hash(password);
      if (existing) {
        await users.update(existing.id, { role: 'admin', is_enabled: true, password_hash: passwordHash });
        if (options.endSessions) await sessions.endAllForUser(existing.id, clock.now());
        return { id: existing.id, created: false };
      }
      const id = await users.insert({ email, name: 'Administrator', lastname: '', phone: '', role: 'admin', password_hash: passwordHash });
      if (id !== undefined) return { id, created: true };
      // Another process created it at the same moment (API replicas starting together): update that one.
      const raced = await users.findByEmail(email);
      if (!raced) throw Errors.conflict(`A user with e-mail ${email} already exists`);
      await users.update(raced.id, { role: 'admin', is_enabled: true, password_hash: passwordHash });
      return { id: raced.id, created: false };
    },

    /** An operator's reset (admin CLI): whoever knew the old password keeps no session opened with it. */
    async setPassword(userId: number, password: string): Promise<void> {
      await users.update(userId, { password_hash: await hasher.hash(password) });
      await sessions.endAllForUser(userId, clock.now());
    },

    countAdmins: () => users.countAdmins(),
    findByEmail: (email: string) => users.findByEmail(email),
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
