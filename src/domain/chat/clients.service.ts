import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import { filterExpression, parseFields } from '../shared/filter/index.js';
import { CLIENT_FIELDS, CLIENT_FILTER_COLUMNS, type ClientColumns, type ClientRow, type ClientsRepository } from './clients.repository.js';
import { assertClientAccess, requireAdmin, visibleClient } from '../shared/access.js';
import { maskSecret, SecretError, type SecretBox } from './secret-box.js';

/** What a provider-key ciphertext is bound to (its AES-GCM additional data). */
const secretOwner = (clientId: number) => `client:${clientId}`;

export type { ClientRow };

/** A client's company details (`data` of POST/PATCH /client); null clears one, absent ones stay as they are. */
export interface ClientDetails {
  fiscalId?: string | null;
  companyName?: string | null;
  companyLegalName?: string | null;
  companyAddress1?: string | null;
  companyAddress2?: string | null;
  companyAddress3?: string | null;
  companyCity?: string | null;
  companyZipCode?: string | null;
}

function clientColumns(details: ClientDetails | undefined): ClientColumns {
  if (details === undefined) return {};
  const columns: ClientColumns = {
    fiscal_id: details.fiscalId,
    company_name: details.companyName,
    company_legal_name: details.companyLegalName,
    company_address1: details.companyAddress1,
    company_address2: details.companyAddress2,
    company_address3: details.companyAddress3,
    company_city: details.companyCity,
    company_zip_code: details.companyZipCode,
  };
  return Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined));
}

export interface ClientChanges {
  details?: ClientDetails;
  providerKey?: string;
  /** Administrators: make this user a member of the client. */
  attachUserId?: number;
  /** Administrators: end this user's membership of the client. */
  detachUserId?: number;
}

function checkProviderKey(key: string): string {
  const trimmed = key.trim();
  if (trimmed.length < 8 || /\s/.test(trimmed)) throw Errors.invalidParameter('provider_key', 'must be a provider API key without spaces (at least 8 characters)');
  return trimmed;
}

export function createClientsService(deps: { clients: ClientsRepository; secretBox: SecretBox }) {
  const { clients, secretBox } = deps;

  return {
    /** Administrators see every client, anyone else only its own. */
    async list(caller: Caller, query: { fields?: string; where?: string; tz: string }): Promise<{ rows: ClientRow[]; fields: string[] }> {
      const fields = parseFields(query.fields, CLIENT_FIELDS);
      const where = filterExpression(query.where, CLIENT_FILTER_COLUMNS, { parameter: 'where', tz: query.tz });
      return { rows: await clients.list({ onlyClientId: visibleClient(caller), where }), fields };
    },

    /** Any signed-in user may create a client; one that belongs to none becomes its member. */
    async create(caller: Caller, input: { providerKey: string; details?: ClientDetails }): Promise<number> {
      const key = checkProviderKey(input.providerKey);
      return clients.insert(
        { ...clientColumns(input.details), provider_key_hint: maskSecret(key), created_by: caller.userId },
        (id) => secretBox.seal(key, secretOwner(id)),
        caller.clientId === null ? caller.userId : undefined,
      );
    },

    async patch(caller: Caller, id: number, changes: ClientChanges): Promise<void> {
      const client = await clients.findById(id);
      if (!client) throw Errors.notFound('Client', id);
      assertClientAccess(caller, id, 'Client', id);
      if (changes.attachUserId !== undefined || changes.detachUserId !== undefined) requireAdmin(caller, 'attaching users to a client');
      const patch: ClientColumns & { provider_key_enc?: string; provider_key_hint?: string } = clientColumns(changes.details);
      if (changes.providerKey !== undefined) {
        const key = checkProviderKey(changes.providerKey);
        patch.provider_key_enc = secretBox.seal(key, secretOwner(id));
        patch.provider_key_hint = maskSecret(key);
      }
      const nothing = Object.keys(patch).length === 0 && changes.attachUserId === undefined && changes.detachUserId === undefined;
      if (nothing) throw Errors.missingParameter('data, provider_key or user_id');
      if (Object.keys(patch).length > 0) await clients.update(id, patch);
      if (changes.attachUserId !== undefined && !(await clients.setMembership(changes.attachUserId, id))) {
        throw Errors.notFound('User', changes.attachUserId);
      }
      if (changes.detachUserId !== undefined) {
        const member = await clients.memberClientOf(changes.detachUserId);
        if (!member) throw Errors.notFound('User', changes.detachUserId);
        if (member.client_id !== id) throw Errors.wrongState(`User ${changes.detachUserId} is not a member of client ${id}`);
        await clients.setMembership(changes.detachUserId, null);
      }
    },

    /** The decrypted key of a client, for one provider call; never rendered, never logged. */
    async providerKeyOf(clientId: number): Promise<string> {
      const sealed = await clients.findSealedKey(clientId);
      if (!sealed) throw Errors.noProviderKey(clientId);
      try {
        return secretBox.open(sealed, secretOwner(clientId));
      } catch (error) {
        // Never used when it does not authenticate: a swapped row would send another client's key.
        const why = error instanceof SecretError ? error.message : 'it cannot be decrypted';
        throw Errors.providerKeyUnreadable(clientId, why);
      }
    },

    /**
     * Opens every stored provider key with the configured keys. `reseal` 'legacy' re-seals values of the
     * earlier form without row binding (done at every start); 'stale' also re-seals values under the
     * previous key (key rotation). Answers what it found; rows that fail are left untouched.
     */
    async checkStoredSecrets(reseal: 'none' | 'legacy' | 'stale'): Promise<{ checked: number; resealed: number; failures: string[] }> {
      let resealed = 0;
      const failures: string[] = [];
      const rows = await clients.listSealedKeys();
      for (const row of rows) {
        let plain: string;
        try {
          plain = secretBox.open(row.provider_key_enc, secretOwner(row.id));
        } catch (error) {
          failures.push(error instanceof SecretError ? error.message : `the stored secret of ${secretOwner(row.id)} cannot be decrypted`);
          continue;
        }
        const legacy = row.provider_key_enc.startsWith('v1:');
        if ((reseal === 'legacy' && legacy) || (reseal === 'stale' && secretBox.isStale(row.provider_key_enc))) {
          if (await clients.replaceSealedKey(row.id, row.provider_key_enc, secretBox.seal(plain, secretOwner(row.id)))) resealed++;
        }
      }
      return { checked: rows.length, resealed, failures };
    },
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
