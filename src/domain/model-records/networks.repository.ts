import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { JOB_STATUS } from '../jobs/job-status.js';

export interface StoredNetworkSummary {
  parts: number;
  bytes: number;
  lastAt: Date;
}

/** Network weights are data: every statement here binds the stored text as a value, none ever runs it. */
export function createNetworksRepository(db: Kysely<Database>) {
  return {
    async insertQuery(row: { training_id: number; user_id: number; content: string }, at: Date): Promise<number> {
      const inserted = await db
        .insertInto('network_weights')
        .values({ ...row, kind: 'query', created_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return inserted.id;
    },

    /** A training keeps one engine model: the new one replaces the previous, both or neither. */
    /** `executor`: the transaction that finishes a run, so the model is stored with its output and status or not at all. */
    async replaceModel(row: { training_id: number; user_id: number; content: string }, at: Date, executor: Kysely<Database> = db): Promise<number> {
      const replace = async (trx: Kysely<Database>) => {
        await trx.deleteFrom('network_weights').where('training_id', '=', row.training_id).where('kind', '=', 'model').execute();
        const inserted = await trx
          .insertInto('network_weights')
          .values({ ...row, kind: 'model', created_at: at })
          .returning('id')
          .executeTakeFirstOrThrow();
        return inserted.id;
      };
      return executor.isTransaction ? replace(executor) : executor.transaction().execute(replace);
    },

    /** The id of the training's newest engine model (a cheap check of whether a cached copy is current). */
    async latestModelId(trainingId: number): Promise<string | undefined> {
      const row = await db
        .selectFrom('network_weights')
        .select('id')
        .where('training_id', '=', trainingId)
        .where('kind', '=', 'model')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row === undefined ? undefined : String(row.id);
    },

    async modelContent(id: string): Promise<string | undefined> {
      const row = await db.selectFrom('network_weights').select('content').where('id', '=', Number(id)).where('kind', '=', 'model').executeTakeFirst();
      return row?.content;
    },

    async summary(trainingId: number): Promise<StoredNetworkSummary | undefined> {
      const row = await db
        .selectFrom('network_weights')
        .select([
          (eb) => eb.fn.countAll<number>().as('parts'),
          sql<number>`coalesce(sum(octet_length(content)), 0)`.as('bytes'),
          (eb) => eb.fn.max('created_at').as('lastAt'),
        ])
        .where('training_id', '=', trainingId)
        .executeTakeFirstOrThrow();
      return row.parts > 0 && row.lastAt ? { parts: row.parts, bytes: Number(row.bytes), lastAt: new Date(row.lastAt) } : undefined;
    },

    async deleteForTraining(trainingId: number): Promise<number> {
      const result = await db.deleteFrom('network_weights').where('training_id', '=', trainingId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** The training of the user's most recently started Running job: where a trainer's weights belong. */
    async trainingOfRunningJob(userId: number): Promise<number | undefined> {
      const row = await db
        .selectFrom('jobs')
        .select('training_id')
        .where('user_id', '=', userId)
        .where('status', '=', JOB_STATUS.Running)
        .orderBy(sql`coalesce(started_at, created_at)`, 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row?.training_id;
    },

    /** The newest Finished job (`ownerId` undefined: anyone's; optionally of one training) whose training has an engine model. */
    async latestFinishedJobWithModel(ownerId: number | undefined, trainingId?: number): Promise<number | undefined> {
      let query = db
        .selectFrom('jobs')
        .select('jobs.id')
        .where('jobs.status', '=', JOB_STATUS.Finished)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('network_weights')
              .select(sql`1`.as('one'))
              .whereRef('network_weights.training_id', '=', 'jobs.training_id')
              .where('network_weights.kind', '=', 'model'),
          ),
        )
        .orderBy(sql`coalesce(jobs.finished_at, jobs.updated_at)`, 'desc')
        .orderBy('jobs.id', 'desc')
        .limit(1);
      if (ownerId !== undefined) query = query.where('jobs.user_id', '=', ownerId);
      if (trainingId !== undefined) query = query.where('jobs.training_id', '=', trainingId);
      return (await query.executeTakeFirst())?.id;
    },
  };
}

export type NetworksRepository = ReturnType<typeof createNetworksRepository>;
