import { sql, type Kysely, type Selectable } from 'kysely';
import { escapeLike } from '../../db/escape-like.js';
import type { Database } from '../../db/schema.js';
import type { UsersTable } from '../../db/tables/accounts.js';

/** Public columns of a user; the password hash leaves this module only through findCredentials. */
const PUBLIC_COLUMNS = ['id', 'email', 'name', 'lastname', 'phone', 'role', 'is_enabled', 'client_id', 'created_at'] as const;

export type UserRow = Pick<Selectable<UsersTable>, (typeof PUBLIC_COLUMNS)[number]>;

export interface UserListFilter {
  onlyUserId?: number;
  email?: string;
  search?: string;
  role?: 'admin' | 'consumer';
  enabled?: boolean;
}

export interface UserPatch {
  name?: string;
  lastname?: string;
  phone?: string;
  role?: 'admin' | 'consumer';
  is_enabled?: boolean;
  client_id?: number | null;
  password_hash?: string;
}

export function createUsersRepository(db: Kysely<Database>) {
  return {
    async findById(id: number): Promise<UserRow | undefined> {
      return db.selectFrom('users').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst();
    },

    async findByEmail(email: string): Promise<UserRow | undefined> {
      return db
        .selectFrom('users')
        .select(PUBLIC_COLUMNS)
        .where(sql`lower(email)`, '=', email.toLowerCase())
        .executeTakeFirst();
    },

    async findCredentialsByEmail(email: string) {
      return db
        .selectFrom('users')
        .select([...PUBLIC_COLUMNS, 'password_hash'])
        .where(sql`lower(email)`, '=', email.toLowerCase())
        .executeTakeFirst();
    },

    async findPasswordHash(id: number): Promise<string | undefined> {
      const row = await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst();
      return row?.password_hash;
    },

    /** Inserts unless the e-mail is taken; answers undefined on a duplicate (the unique index decides). */
    async insert(user: {
      email: string;
      name: string;
      lastname: string;
      phone: string;
      role: 'admin' | 'consumer';
      password_hash: string;
    }): Promise<number | undefined> {
      const row = await db
        .insertInto('users')
        .values(user)
        .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
        .returning('id')
        .executeTakeFirst();
      return row?.id;
    },

    async update(id: number, patch: UserPatch): Promise<boolean> {
      const result = await db
        .updateTable('users')
        .set({ ...patch, updated_at: new Date() })
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async list(filter: UserListFilter): Promise<UserRow[]> {
      let query = db.selectFrom('users').select(PUBLIC_COLUMNS).orderBy('id');
      if (filter.onlyUserId !== undefined) query = query.where('id', '=', filter.onlyUserId);
      if (filter.email) query = query.where(sql`lower(email)`, '=', filter.email.toLowerCase());
      if (filter.role) query = query.where('role', '=', filter.role);
      if (filter.enabled !== undefined) query = query.where('is_enabled', '=', filter.enabled);
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search)}%`;
        query = query.where((eb) =>
          eb.or([eb('name', 'ilike', pattern), eb('lastname', 'ilike', pattern), eb('email', 'ilike', pattern)]),
        );
      }
      return query.execute();
    },

    async countByEnabled(): Promise<{ enabled: number; disabled: number }> {
      const rows = await db
        .selectFrom('users')
        .select(['is_enabled', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('is_enabled')
        .execute();
      return {
        enabled: rows.find((r) => r.is_enabled)?.n ?? 0,
        disabled: rows.find((r) => !r.is_enabled)?.n ?? 0,
      };
    },

    async countAdmins(): Promise<number> {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('role', '=', 'admin')
        .executeTakeFirstOrThrow();
      return row.n;
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
