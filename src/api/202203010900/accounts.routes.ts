import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { logoutRoutes, summariesRoute, usersRoutes } from '../shared/users.routes.js';
import { loginParams } from '../shared/accounts.params.js';
import { sessionCookie } from '../shared/accounts.handlers.js';
import { CurrentLogin, SessionCheck } from '../shared/accounts.shapes.js';

/** Section 4.1 of the current version: sessions, passwords, users, summaries. */
export function accountsRoutes(app: FastifyInstance, services: Services, options: { loginPerMinute: number }) {
  defineRoute(app, {
    method: 'POST',
    url: '/sessions.php',
    auth: 'public',
    perMinute: options.loginPerMinute,
    summary: 'Log in; answers [{User_Role, Name, Client_Id, User_Id, Hash}] and sets the session cookie',
    params: loginParams,
    reply: CurrentLogin,
    async handler({ params, request, reply }) {
      const { token, user } = await services.sessions.login(params.email, params.password, { ip: request.ip, requestId: request.id });
      sessionCookie(reply, token);
      return [
        {
          User_Role: user.role,
          Name: user.name,
          Client_Id: user.clientId === null ? null : String(user.clientId),
          User_Id: String(user.id),
          Hash: token,
        },
      ];
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/sessions.php',
    auth: 'session',
    summary: 'Check a session: {hash, user: {role, name}}',
    params: z.object({}),
    reply: SessionCheck,
    async handler({ caller }) {
      return { hash: caller.token, user: { role: caller.role, name: caller.name } };
    },
  });

  logoutRoutes(app, services, ['/session.php', '/sessions.php']);
  usersRoutes(app, services, options);
  summariesRoute(app, services, 'current');
}
