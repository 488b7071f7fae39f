/**
 * Operator commands run next to the service: `npm run admin -- <command> [options]`. They open the same
 * database and services as the API (loadConfig + startRuntime), so every rule of the API holds here too.
 * Exit codes: 0 done, 1 failed (the reason on stderr), 2 usage error.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DateTime, IANAZone } from 'luxon';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config.js';
import { assertStrongPassword } from '../domain/accounts/password-policy.js';
import { isAppError } from '../domain/errors.js';
import { startRuntime, type Runtime } from '../runtime.js';

export const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-admin --email <e-mail> <password option>
      Create an administrator, or make an existing user an enabled administrator with that password
      (ending that user's sessions).
  reset-password --email <e-mail> <password option>
      Set a user's password and end all of that user's sessions.
  list-users
      Print every user: id, e-mail, role, enabled, name.
  invoice --until <YYYY-MM-DD> [--tz <Area/City>]
      Mark every consumption record dated up to the end of that day (default zone UTC) as invoiced.
  rotate-secrets
      Re-seal every stored provider key under SECRET_KEY (read with SECRET_KEY or SECRET_KEY_PREVIOUS).
      Rotation: set SECRET_KEY to the new key and SECRET_KEY_PREVIOUS to the old one, run this, then
      drop SECRET_KEY_PREVIOUS.
  --help
      Print this text.

Password options (one of):
  --password-stdin        read the password from standard input (one trailing newline is dropped)
  --password-env <NAME>   read it from the environment variable NAME
  --password <password>   on the command line: visible to every user of the machine (ps) and kept
                          in the shell's history; prefer the two above

The database is the one the API uses (DATABASE_URL, else the embedded one under DATA_DIR). The
embedded database is opened by one process at a time: while the service runs on it, commands refuse
(exit 1) instead of writing where the service would never see it; stop the service first, or use
DATABASE_URL.
Exit codes: 0 done, 1 failed, 2 usage error.
`;

export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
  /** Standard input, for --password-stdin (process.stdin by default). */
  stdin?: NodeJS.ReadableStream;
}

class UsageError extends Error {}
class CommandError extends Error {}

const OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  'password-env': { type: 'string' },
  until: { type: 'string' },
  tz: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`Missing --${name}`);
  return value;
}

const STDIN_LIMIT = 64 * 1024;

/** The password from exactly one of --password-stdin, --password-env NAME or --password. */
async function readPassword(values: Record<string, unknown>, env: NodeJS.ProcessEnv, stdin: NodeJS.ReadableStream): Promise<string> {
  const given = ['password', 'password-stdin', 'password-env'].filter((name) => values[name] !== undefined);
  if (given.length === 0) throw new UsageError('Missing --password-stdin, --password-env <NAME> or --password');
  if (given.length > 1) throw new UsageError(`Give one of --password-stdin, --password-env and --password, not ${given.map((g) => `--${g}`).join(' and ')}`);
  if (values['password-env'] !== undefined) {
    const name = required(values, 'password-env');
    const value = env[name];
    if (value === undefined || value === '') throw new CommandError(`The environment variable ${name} (--password-env) is not set or empty`);
    return value;
  }
  if (values['password-stdin']) {
    let text = '';
    for await (const chunk of stdin) {
      text += String(chunk);
      if (text.length > STDIN_LIMIT) throw new CommandError('Standard input is too long for a password (--password-stdin)');
    }
    // Like `docker login --password-stdin`: `echo secret |` adds one newline that is not part of it.
    text = text.replace(/\r?\n$/, '');
    if (text === '') throw new CommandError('Standard input held no password (--password-stdin)');
    return text;
  }
  return required(values, 'password');
}

/** Runs one command; answers the exit code. `env` is what loadConfig reads (process.env by default). */
export async function runAdminCommand(
  argv: readonly string[],
  io: CliOutput = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let runtime: Runtime | undefined;
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    const [command, ...extra] = positionals;
    if (values.help || command === 'help') {
      io.out(USAGE);
      return 0;
    }
    if (!command) throw new UsageError('No command given');
    if (extra.length > 0) throw new UsageError(`Unexpected argument '${extra[0]}'`);

    // Check the arguments before touching the database, so a typo costs nothing.
    let action: (rt: Runtime) => Promise<string>;
    switch (command) {
      case 'create-admin': {
        const email = required(values, 'email');
        const password = await readPassword(values, env, io.stdin ?? process.stdin);
        assertStrongPassword(password, 'password');
        action = async ({ services }) => {
          const { id, created } = await services.users.ensureAdmin(email, password, { endSessions: true });
          await services.events.record({ type: 2, procedure: 'admin-cli.create-admin', text: `Administrator ${email} ${created ? 'created' : 'updated'} from the admin CLI` });
          return `Administrator ${email} ${created ? 'created' : 'updated'} (id ${id})\n`;
        };
        break;
      }
      case 'reset-password': {
        const email = required(values, 'email');
        const password = await readPassword(values, env, io.stdin ?? process.stdin);
        assertStrongPassword(password, 'password');
        action = async ({ services }) => {
          const user = await services.users.findByEmail(email);
          if (!user) throw new CommandError(`No user with e-mail ${email}`);
          await services.users.setPassword(user.id, password);
          await services.events.record({ type: 2, procedure: 'admin-cli.reset-password', text: `Password of ${user.email} reset from the admin CLI`, userId: user.id });
          return `Password of ${user.email} changed; all of that user's sessions ended\n`;
        };
        break;
      }
      case 'list-users':
        action = async ({ services }) => {
          const users = await services.users.list(OPERATOR, {});
          const lines = users.map((u) =>
            [u.id, u.email, u.role, u.is_enabled ? 'enabled' : 'disabled', `${u.name} ${u.lastname}`.trim()].join('\t'),
          );
          return `${['id', 'email', 'role', 'enabled', 'name'].join('\t')}\n${lines.map((l) => `${l}\n`).join('')}`;
        };
        break;
      case 'invoice': {
        const until = required(values, 'until');
        const tz = values.tz ?? 'UTC';
        if (!IANAZone.isValidZone(tz)) throw new UsageError(`--tz '${tz}' is not a known time zone (use Area/City)`);
        const day = /^\d{4}-\d{2}-\d{2}$/.test(until) ? DateTime.fromFormat(until, 'yyyy-MM-dd', { zone: tz }) : undefined;
        if (!day?.isValid) throw new UsageError(`--until '${until}' is not a date as YYYY-MM-DD`);
        action = async ({ services }) => {
          const marked = await services.consumptions.markInvoiced(day.plus({ days: 1 }).toJSDate());
          await services.events.record({ type: 2, procedure: 'admin-cli.invoice', text: `${marked} consumption records up to ${until} (${tz}) marked invoiced from the admin CLI` });
          return `Marked ${marked} consumption record${marked === 1 ? '' : 's'} dated up to ${until} (${tz}) as invoiced\n`;
        };
        break;
      }
      case 'rotate-secrets':
        action = async ({ services }) => {
          const { checked, resealed, failures } = await services.clients.checkStoredSecrets('stale');
          await services.events.record({ type: failures.length > 0 ? 3 : 2, procedure: 'admin-cli.rotate-secrets', text: `${resealed} of ${checked} stored provider keys re-sealed under the current key from the admin CLI; ${failures.length} unreadable` });
          if (failures.length > 0) throw new CommandError(`Re-sealed ${resealed} of ${checked} provider keys; ${failures.length} cannot be read and were left as they are: ${failures.join('; ')}`);
          return `Re-sealed ${resealed} of ${checked} stored provider keys under the current key; SECRET_KEY_PREVIOUS is no longer needed\n`;
        };
        break;
      default:
        throw new UsageError(`Unknown command '${command}'`);
    }

    const config = loadConfig(env);
    // Migration notices go to stderr at warn level, keeping stdout for the command's answer.
    // No start-up secret check: an operator must be able to run commands (rotation above all) while
    // some stored secret is unreadable; rotate-secrets reports those itself.
    runtime = await startRuntime(config, pino({ level: 'warn' }, pino.destination(2)), undefined, { checkSecrets: false });
    io.out(await action(runtime));
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof CommandError || error instanceof ConfigError || isAppError(error)) {
      io.err(`${(error as Error).message}\n`);
      return 1;
    }
    io.err(`Failed: ${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  } finally {
    await runtime?.close();
  }
}

/** The CLI acts as an administrator of the service: the operator at the machine is one. */
const OPERATOR = { userId: 0, role: 'admin', name: 'admin-cli', lastname: '', email: '', clientId: null, sessionId: 0, token: '' } as const;

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  void runAdminCommand(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
