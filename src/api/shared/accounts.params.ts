import { z } from 'zod';
import { p } from '../../http/params.js';

/** Parameters of the account endpoints, identical in both versions. */
export const loginParams = z.object({ email: p.string(254), password: p.string(256) });

export const recoveryParams = z.object({ email: p.string(254) });

export const passwordChangeParams = z.object({
  token: p.string(200).optional(),
  current_password: p.string(256).optional(),
  new_password: p.string(256),
  new_password_repeat: p.string(256),
});

export const listUsersParams = z.object({
  email: p.string(254).optional(),
  search: p.string(200).optional(),
  role: z.enum(['admin', 'consumer'], { error: "must be 'admin' or 'consumer'" }).optional(),
  enabled: p.flag().optional(),
});

export const registerParams = z.object({
  name: p.string(100),
  lastname: p.string(100),
  email: p.email(),
  password: p.string(256),
  phonenumber: p.string(50),
});

export const patchUserParams = z.object({
  user_id: p.id().optional(),
  name: p.text(100).optional(),
  lastname: p.text(100).optional(),
  phone: p.text(50).optional(),
  role: z.enum(['admin', 'consumer'], { error: "must be 'admin' or 'consumer'" }).optional(),
  enabled: p.flag().optional(),
});

export const logoutParams = z.object({ user_id: p.id() });
