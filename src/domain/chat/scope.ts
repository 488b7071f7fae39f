import { isAdmin, type Caller } from '../caller.js';
import { AppError, Errors } from '../errors.js';

/**
 * The client whose rows a caller may see: administrators every client (undefined), anyone else only
 * the client its login belongs to (null when it belongs to none, which matches nothing).
 */
export function visibleClient(caller: Caller): number | null | undefined {
  return isAdmin(caller) ? undefined : caller.clientId;
}

/** Throws unless the caller may touch rows of `clientId`; not-found and not-yours read the same to outsiders. */
export function assertClientAccess(caller: Caller, clientId: number, what: string, id: number): void {
  if (isAdmin(caller)) return;
  if (caller.clientId !== clientId) throw Errors.notFound(what, id);
}

/** The client a consumer works in; creating chat data needs one. */
export function requireOwnClient(caller: Caller): number {
  if (caller.clientId === null) {
    throw new AppError('wrong_state', 'You belong to no client yet: create one with POST /client.php or ask an administrator to attach you');
  }
  return caller.clientId;
}
