import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { sessionCookie } from '../shared/accounts.handlers.js';
import { loginParams } from '../shared/accounts.params.js';
import { logoutRoutes, summariesRoute, usersRoutes } from '../shared/users.routes.js';
import { OlderLogin, OlderSessionCheck } from '../shared/accounts.shapes.js';

/** Section 4.1 as the older version shapes it (spec 9.3): login {User_Id, Hash}, check answers the token. */
export function accountsRoutes(app: FastifyInstance, services: Services, options: { loginPerMinute: number }) {
  defineRoute(app, {
    method: 'POST',
    url: '/sessions.php',
    auth: 'public',
    perMinute: options.loginPerMinute,
    summary: 'Log in; answers [{User_Id, Hash}]',
    params: loginParams,
    reply: OlderLogin,
    async handler({ params, request, reply }) {
      const { token, user } = await services.sessions.login(params.email, params.password, { ip: request.ip, requestId: request.id });
      sessionCookie(reply, token);
      return [{ User_Id: String(user.id), Hash: token }];
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/sessions.php',
    auth: 'session',
    summary: 'Check a session; answers the session token',
    params: z.object({}),
    reply: OlderSessionCheck,
    async handler({ caller }) {
      return caller.token;
    },
  });

  logoutRoutes(app, services, ['/session.php']);
  usersRoutes(app, services, options);
  summariesRoute(app, services, 'older');
}
