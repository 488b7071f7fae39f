import { Errors } from '../errors.js';
import type { ApplicationRow, ApplicationsRepository, PlanRow } from './applications.repository.js';

export type { ApplicationRow };

/** Applications anyone signed in may subscribe to, and the plans they can be subscribed under. */
export function createApplicationsService(deps: { applications: ApplicationsRepository }) {
  const { applications } = deps;
  return {
    list: (): Promise<ApplicationRow[]> => applications.list(),
    listPlans: (): Promise<PlanRow[]> => applications.listPlans(),

    /** The application a wire `app` names; unknown names are a parameter error, not a 'not found'. */
    async require(name: string, parameter = 'app'): Promise<ApplicationRow> {
      const app = await applications.findByName(name);
      if (!app) throw Errors.invalidParameter(parameter, `'${name}' is not an application (see GET /applications)`);
      return app;
    },

    async requirePlan(id: string, parameter = 'params'): Promise<PlanRow> {
      const plan = await applications.findPlan(id);
      if (!plan) {
        const known = (await applications.listPlans()).map((p) => p.id).join(', ');
        throw Errors.invalidParameter(parameter, `plan '${id}' does not exist (plans: ${known})`);
      }
      return plan;
    },
  };
}

export type ApplicationsService = ReturnType<typeof createApplicationsService>;
