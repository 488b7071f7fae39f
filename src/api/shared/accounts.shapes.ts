import { z } from 'zod';
import type { UserRow } from '../../domain/accounts/users.service.js';
import type { Summary } from '../../domain/summaries/summaries.service.js';

const role = z.enum(['admin', 'consumer']);

/** Legacy User record (spec 2): ids and flags as strings. */
export const UserRecord = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    lastname: z.string(),
    phone: z.string(),
    role,
    is_enabled: z.enum(['1', '0']),
  })
  .meta({ example: { id: '12', email: 'ana@example.com', name: 'Ana', lastname: 'García', phone: '600000000', role: 'consumer', is_enabled: '1' } });

export function userRecord(user: UserRow): z.output<typeof UserRecord> {
  return {
    id: String(user.id),
    email: user.email,
    name: user.name,
    lastname: user.lastname,
    phone: user.phone,
    role: user.role,
    is_enabled: user.is_enabled ? '1' : '0',
  };
}

/** Current login reply: the spec's {User_Role, Name, Client_Id} plus the session value and user id. */
export const CurrentLogin = z
  .array(z.object({ User_Role: role, Name: z.string(), Client_Id: z.string().nullable(), User_Id: z.string(), Hash: z.string() }))
  .meta({ example: [{ User_Role: 'consumer', Name: 'Ana', Client_Id: '3', User_Id: '12', Hash: 'q3Jb0tZ2m7cXv1yQ9sLw4eHn8uKp6dRf5aGi0oTz1xA' }] });

/** Older login reply (spec 9.3): [{User_Id, Hash}]. */
export const OlderLogin = z
  .array(z.object({ User_Id: z.string(), Hash: z.string() }))
  .meta({ example: [{ User_Id: '12', Hash: 'q3Jb0tZ2m7cXv1yQ9sLw4eHn8uKp6dRf5aGi0oTz1xA' }] });

/** Current session check: {hash, user: {role, name}}. */
export const SessionCheck = z
  .object({ hash: z.string(), user: z.object({ role, name: z.string() }) })
  .meta({ example: { hash: 'q3Jb0tZ2m7cXv1yQ9sLw4eHn8uKp6dRf5aGi0oTz1xA', user: { role: 'consumer', name: 'Ana' } } });

/** Older session check: the session token itself. */
export const OlderSessionCheck = z.string().meta({ example: 'q3Jb0tZ2m7cXv1yQ9sLw4eHn8uKp6dRf5aGi0oTz1xA' });

const count = z.number().int();
const summaryFields = {
  user: z.object({ name: z.string(), lastname: z.string(), email: z.string() }),
  applications: z.object({ subscribed: count, unsubscribed: count }).optional(),
  jobs: z.object({ running: count }),
  knowledges: count,
};

/** GET /summaries: `applications` for non-administrators only, `users` for administrators only (current version). */
export const CurrentSummary = z.object({ ...summaryFields, users: z.object({ enabled: count, disabled: count }).optional() }).meta({
  example: { user: { name: 'Ana', lastname: 'García', email: 'ana@example.com' }, applications: { subscribed: 2, unsubscribed: 1 }, jobs: { running: 1 }, knowledges: 4 },
});
/** The older version has no `users` property. */
export const OlderSummary = z.object(summaryFields).meta({
  example: { user: { name: 'Ana', lastname: 'García', email: 'ana@example.com' }, applications: { subscribed: 2, unsubscribed: 1 }, jobs: { running: 1 }, knowledges: 4 },
});

export function summaryRecord(summary: Summary, version: 'current' | 'older'): z.output<typeof CurrentSummary> {
  const out: z.output<typeof CurrentSummary> = { user: summary.user, jobs: summary.jobs, knowledges: summary.knowledges };
  if (summary.applications) out.applications = summary.applications;
  if (summary.users && version === 'current') out.users = summary.users;
  return out;
}
