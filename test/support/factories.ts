import { randomBytes } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { ChatsTable, UsecasesTable } from '../../src/db/tables/chat.js';
import type { JobsTable, TrainingsTable } from '../../src/db/tables/jobs.js';

/**
 * Rows written straight to the tables, for tests whose subject is another area (the owning area's own
 * test file creates them through HTTP). Every factory takes the owner and answers the new ids; the
 * optional `values` override any column.
 */
export function factories(db: Kysely<Database>) {
  const training = async (owner: { id: number }, values: Partial<Insertable<TrainingsTable>> = {}): Promise<number> =>
    (await db.insertInto('trainings').values({ user_id: owner.id, ...values, app_name: values.app_name ?? 'forecast' }).returning('id').executeTakeFirstOrThrow()).id;

  return {
    training,

    /** A job (status 0 Created unless given) of `trainingId`, or of a new training of the same application. */
    async job(
      owner: { id: number },
      values: Partial<Insertable<JobsTable>> & { trainingValues?: Partial<Insertable<TrainingsTable>> } = {},
    ): Promise<{ jobId: number; trainingId: number }> {
      const { trainingValues, ...jobValues } = values;
      const appName = jobValues.app_name ?? 'forecast';
      const trainingId = jobValues.training_id ?? (await training(owner, { app_name: appName, ...trainingValues }));
      const job = await db
        .insertInto('jobs')
        .values({ user_id: owner.id, session_id: null, ...jobValues, training_id: trainingId, app_name: appName })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { jobId: job.id, trainingId };
    },

    /** A client with no provider key, created by `owner`. */
    async client(owner: { id: number }, companyName = 'Factory SL'): Promise<number> {
      return (await db.insertInto('clients').values({ company_name: companyName, created_by: owner.id }).returning('id').executeTakeFirstOrThrow()).id;
    },

    /** An active use case of `clientId`. */
    async usecase(owner: { id: number }, clientId: number, values: Partial<Insertable<UsecasesTable>> = {}): Promise<number> {
      return (
        await db
          .insertInto('usecases')
          .values({ client_id: clientId, user_id: owner.id, description: 'Factory use case', hash: randomBytes(16).toString('hex'), ...values })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    },

    /** A chat (status and control as the database defaults them) of `usecaseId`. */
    async chat(owner: { id: number }, usecaseId: number, values: Partial<Insertable<ChatsTable>> = {}): Promise<number> {
      return (
        await db
          .insertInto('chats')
          .values({ usecase_id: usecaseId, user_id: owner.id, hash: randomBytes(8).toString('hex'), ...values })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    },
  };
}

export type Factories = ReturnType<typeof factories>;
