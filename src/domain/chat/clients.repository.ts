import type { Expression, Kysely, Selectable, SqlBool, Updateable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ClientsTable } from '../../db/tables/chat.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';

const COLUMNS = [
  'clients.id',
  'clients.fiscal_id',
  'clients.company_name',
  'clients.company_legal_name',
  'clients.company_address1',
  'clients.company_address2',
  'clients.company_address3',
  'clients.company_city',
  'clients.company_zip_code',
  'clients.provider_key_hint',
  'clients.created_at',
  'clients.updated_at',
] as const;

/** Columns a `where` may test; the provider key is deliberately absent. */
export const CLIENT_FILTER_COLUMNS: ColumnWhitelist = {
  Id: { column: 'clients.id', type: 'int' },
  FiscalId: { column: 'clients.fiscal_id', type: 'text' },
  CompanyName: { column: 'clients.company_name', type: 'text' },
  CompanyLegalName: { column: 'clients.company_legal_name', type: 'text' },
  CompanyAddress1: { column: 'clients.company_address1', type: 'text' },
  CompanyAddress2: { column: 'clients.company_address2', type: 'text' },
  CompanyAddress3: { column: 'clients.company_address3', type: 'text' },
  CompanyCity: { column: 'clients.company_city', type: 'text' },
  CompanyZipCode: { column: 'clients.company_zip_code', type: 'text' },
};
/** Columns `fields` may pick: the filterable ones plus the (masked) key. */
export const CLIENT_FIELDS: ColumnWhitelist = {
  ...CLIENT_FILTER_COLUMNS,
  CompanyProviderKey: { column: 'clients.provider_key_hint', type: 'text' },
};

/** A client as services see it: the encrypted key stays inside this module except through findSealedKey. */
export type ClientRow = Omit<Selectable<ClientsTable>, 'provider_key_enc' | 'created_by'>;

/** The company columns a client sets (through the service's ClientDetails). */
export type ClientColumns = Pick<
  Updateable<ClientsTable>,
  | 'fiscal_id'
  | 'company_name'
  | 'company_legal_name'
  | 'company_address1'
  | 'company_address2'
  | 'company_address3'
  | 'company_city'
  | 'company_zip_code'
>;

export function createClientsRepository(db: Kysely<Database>) {
  return {
    /** Creates the client and, when `memberId` is given, makes that user its member, in one transaction. */
    /** `sealKey` seals the provider key for the new row's id (the ciphertext is bound to its row). */
    async insert(
      values: ClientColumns & { provider_key_hint: string; created_by: number },
      sealKey: (id: number) => string,
      memberId?: number,
    ): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const { id } = await trx.insertInto('clients').values(values).returning('id').executeTakeFirstOrThrow();
        await trx.updateTable('clients').set({ provider_key_enc: sealKey(id) }).where('id', '=', id).execute();
        if (memberId !== undefined) {
          await trx.updateTable('users').set({ client_id: id, updated_at: new Date() }).where('id', '=', memberId).where('client_id', 'is', null).execute();
        }
        return id;
      });
    },

    async findById(id: number): Promise<ClientRow | undefined> {
      return db.selectFrom('clients').select(COLUMNS).where('clients.id', '=', id).executeTakeFirst();
    },

    /** Every stored provider-key ciphertext, for the start-up check and key rotation. */
    async listSealedKeys(): Promise<{ id: number; provider_key_enc: string }[]> {
      const rows = await db.selectFrom('clients').select(['id', 'provider_key_enc']).where('provider_key_enc', 'is not', null).orderBy('id').execute();
      return rows.map((row) => ({ id: row.id, provider_key_enc: row.provider_key_enc! }));
    },

    /** Replaces a ciphertext only if it is still the one read (a concurrent PATCH wins). */
    async replaceSealedKey(id: number, previous: string, next: string): Promise<boolean> {
      const result = await db.updateTable('clients').set({ provider_key_enc: next }).where('id', '=', id).where('provider_key_enc', '=', previous).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async findSealedKey(id: number): Promise<string | null | undefined> {
      const row = await db.selectFrom('clients').select('provider_key_enc').where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : row.provider_key_enc;
    },

    /** `onlyClientId` null matches nothing (a consumer without a client); the filter is ANDed outside it. */
    async list(scope: { onlyClientId?: number | null; where?: Expression<SqlBool> }): Promise<ClientRow[]> {
      let query = db.selectFrom('clients').select(COLUMNS).orderBy('clients.id');
      if (scope.onlyClientId === null) return [];
      if (scope.onlyClientId !== undefined) query = query.where('clients.id', '=', scope.onlyClientId);
      if (scope.where) query = query.where(scope.where);
      return query.execute();
    },

    async update(id: number, patch: ClientColumns & { provider_key_enc?: string; provider_key_hint?: string }): Promise<boolean> {
      const result = await db.updateTable('clients').set({ ...patch, updated_at: new Date() }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Sets a user's membership; false when the user does not exist. */
    async setMembership(userId: number, clientId: number | null): Promise<boolean> {
      const result = await db.updateTable('users').set({ client_id: clientId, updated_at: new Date() }).where('id', '=', userId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async memberClientOf(userId: number): Promise<{ client_id: number | null } | undefined> {
      return db.selectFrom('users').select('client_id').where('id', '=', userId).executeTakeFirst();
    },
  };
}

export type ClientsRepository = ReturnType<typeof createClientsRepository>;
