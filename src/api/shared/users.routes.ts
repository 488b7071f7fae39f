import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { changePassword } from './accounts.handlers.js';
import { listUsersParams, logoutParams, passwordChangeParams, patchUserParams, recoveryParams, registerParams } from './accounts.params.js';
import { CurrentSummary, OlderSummary, summaryRecord, UserRecord, userRecord } from './accounts.shapes.js';
import { success } from '../../http/contract.js';

/** Passwords and users (4.1): the same wire contract in both versions. */
export function usersRoutes(app: FastifyInstance, services: Services, options: { loginPerMinute: number }) {
  defineRoute(app, {
    method: 'POST',
    url: '/passwords.php',
    auth: 'public',
    perMinute: options.loginPerMinute,
    summary: 'Start password recovery (answers success whether or not the e-mail is known)',
    params: recoveryParams,
    reply: success,
    async handler({ params }) {
      await services.passwords.requestRecovery(params.email);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/passwords.php',
    auth: 'optional',
    perMinute: options.loginPerMinute,
    summary: 'Change the password with a recovery token, or with a session and current_password',
    params: passwordChangeParams,
    reply: success,
    async handler({ params, caller }) {
      await changePassword(services, caller, params);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/users.php',
    auth: 'session',
    summary: 'Users: everyone matching for administrators, only yourself otherwise',
    params: listUsersParams,
    reply: z.array(UserRecord),
    async handler({ params, caller }) {
      const rows = await services.users.list(caller, {
        email: params.email,
        search: params.search,
        role: params.role,
        enabled: params.enabled === undefined ? undefined : params.enabled === 1,
      });
      return rows.map(userRecord);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/users.php',
    auth: 'public',
    perMinute: options.loginPerMinute,
    summary: 'Register a consumer',
    params: registerParams,
    reply: success,
    async handler({ params }) {
      await services.users.register({ ...params, phone: params.phonenumber });
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/users.php',
    auth: 'session',
    summary: 'Modify a user (administrators: anyone, with user_id; others: themselves)',
    params: patchUserParams,
    reply: success,
    async handler({ params, caller }) {
      await services.users.patch(caller, params.user_id, {
        name: params.name,
        lastname: params.lastname,
        phone: params.phone,
        role: params.role,
        enabled: params.enabled === undefined ? undefined : params.enabled === 1,
      });
      return 'success';
    },
  });

}

/** GET /summaries: the older version has no `users` property. */
export function summariesRoute(app: FastifyInstance, services: Services, version: 'current' | 'older') {
  defineRoute(app, {
    method: 'GET',
    url: '/summaries.php',
    auth: 'session',
    summary: 'Counts for the dashboard',
    params: z.object({}),
    reply: version === 'current' ? CurrentSummary : OlderSummary,
    async handler({ caller }) {
      return summaryRecord(await services.summaries.forCaller(caller), version);
    },
  });
}

/** DELETE /session (both versions; the current one also answers on /sessions): ends the session, clears the cookie. */
export function logoutRoutes(app: FastifyInstance, services: Services, urls: readonly string[]) {
  for (const url of urls) {
    defineRoute(app, {
      method: 'DELETE',
      url,
      auth: 'session',
      summary: 'Log out (ends the session; user_id and session in the query)',
      params: logoutParams,
      reply: success,
      async handler({ params, caller, reply }) {
        await services.sessions.logout(caller, params.user_id);
        reply.clearCookie('session', { path: '/' });
        return 'success';
      },
    });
  }
}
