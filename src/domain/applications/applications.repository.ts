import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface ApplicationRow {
  id: number;
  name: string;
  plan_id: string;
}

export interface PlanRow {
  id: string;
  description: string;
}

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
