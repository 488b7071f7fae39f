import type { UserRow } from '../../domain/accounts/users.repository.js';
import type { Summary } from '../../domain/summaries/summaries.service.js';

/** Legacy User record: ids and flags as strings. */
export function userRecord(user: UserRow) {
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

export function summaryRecord(summary: Summary, version: 'current' | 'older') {
  const out: Record<string, unknown> = { user: summary.user };
  if (summary.applications) out.applications = summary.applications;
  out.jobs = summary.jobs;
  out.knowledges = summary.knowledges;
  if (summary.users && version === 'current') out.users = summary.users;
  return out;
}
