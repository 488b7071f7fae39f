import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ApplicationsTable, PlansTable } from '../../db/tables/subscriptions.js';

export type ApplicationRow = Omit<Selectable<ApplicationsTable>, 'created_at'>;

export type PlanRow = Omit<Selectable<PlansTable>, 'created_at'>;

export function createApplicationsRepository(db: Kysely<Database>) {
  return {
    async list(): Promise<ApplicationRow[]> {
      return db.selectFrom('applications').select(['id', 'name', 'plan_id']).orderBy('name').execute();
    },

    async findByName(name: string): Promise<ApplicationRow | undefined> {
      return db.selectFrom('applications').select(['id', 'name', 'plan_id']).where('name', '=', name).executeTakeFirst();
    },

    async listPlans(): Promise<PlanRow[]> {
      return db.selectFrom('plans').select(['id', 'description']).orderBy('id').execute();
    },

    async findPlan(id: string): Promise<PlanRow | undefined> {
      return db.selectFrom('plans').select(['id', 'description']).where('id', '=', id).executeTakeFirst();
    },

    async count(): Promise<number> {
      const row = await db
        .selectFrom('applications')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return row.n;
    },
  };
}

export type ApplicationsRepository = ReturnType<typeof createApplicationsRepository>;
