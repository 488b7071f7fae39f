/** Who is calling: resolved once per request by the session guard, handed to every service. */
export interface Caller {
  userId: number;
  role: 'admin' | 'consumer';
  name: string;
  lastname: string;
  email: string;
  clientId: number | null;
  sessionId: number;
  /** The session value the caller presented (echoed by GET /sessions as `hash`). */
  token: string;
}

export const isAdmin = (caller: Caller) => caller.role === 'admin';
