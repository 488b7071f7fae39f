import type { Generated } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  email: string;
  name: Generated<string>;
  lastname: Generated<string>;
  phone: Generated<string>;
  role: Generated<'admin' | 'consumer'>;
  is_enabled: Generated<boolean>;
  password_hash: string;
  client_id: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SessionsTable {
  id: Generated<number>;
  user_id: number;
  token_hash: string;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Date;
  ended_at: Date | null;
}

export interface PasswordTokensTable {
  id: Generated<number>;
  user_id: number;
  token_hash: string;
  created_at: Generated<Date>;
  expires_at: Date;
  used_at: Date | null;
}

export interface AuthAttemptsTable {
  id: Generated<number>;
  kind: 'login' | 'recovery';
  subject: string;
  /**
   * The client address of a failed login (null for recovery mails and rows from before failures counted
   * per address).
   */
  address: string | null;
  created_at: Generated<Date>;
}

export interface AccountsTables {
  users: UsersTable;
  sessions: SessionsTable;
  password_tokens: PasswordTokensTable;
  auth_attempts: AuthAttemptsTable;
}
