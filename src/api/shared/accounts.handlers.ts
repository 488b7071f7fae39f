import type { FastifyReply } from 'fastify';
import type { Caller } from '../../domain/caller.js';
import { Errors } from '../../domain/errors.js';
import type { Services } from '../../services.js';

/** The login also sets the session as an HttpOnly cookie, for browser front ends that use cookies. */
export function sessionCookie(reply: FastifyReply, token: string) {
  reply.setCookie('session', token, { path: '/', httpOnly: true, sameSite: 'lax' });
}

/** PUT /passwords in both versions: a session with current_password, or a recovery token. */
export async function changePassword(
  services: Services,
  caller: Caller | null,
  params: { token?: string; current_password?: string; new_password: string; new_password_repeat: string },
) {
  // A recovery token wins: a browser may still hold an old session cookie while recovering.
  if (params.token && !params.current_password) {
    await services.passwords.resetWithToken(params.token, params.new_password, params.new_password_repeat);
    return;
  }
  if (!caller) throw Errors.missingParameter('token');
  if (!params.current_password) throw Errors.missingParameter('current_password');
  await services.passwords.changeWithSession(caller, params.current_password, params.new_password, params.new_password_repeat);
}
