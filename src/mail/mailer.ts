import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Mailer, MailMessage } from '../domain/ports.js';

/**
 * SMTP_URL set: real delivery through nodemailer. Unset: each message is written as an .eml file
 * under DATA_DIR/outbox and logged, so a fresh install works without a mail server.
 */
export function createMailer(options: { smtpUrl: string | undefined; from: string; dataDir: string; logger: Logger }): Mailer {
  // nodemailer loads with the first message, not at every start (so the service starts in seconds:
  // docs/benchmarks.md, first start).
  if (options.smtpUrl) {
    const smtpUrl = options.smtpUrl;
    const connect = async () => (await import('nodemailer')).default.createTransport(smtpUrl);
    let transport: ReturnType<typeof connect> | undefined;
    return {
      async send(message: MailMessage) {
        await (await (transport ??= connect())).sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
      },
    };
  }
  const outbox = path.resolve(options.dataDir, 'outbox');
  const connect = async () => (await import('nodemailer')).default.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let transport: ReturnType<typeof connect> | undefined;
  return {
    async send(message: MailMessage) {
      const info = await (await (transport ??= connect())).sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
      await mkdir(outbox, { recursive: true });
      const file = path.join(outbox, `${Date.now()}-${info.messageId.replace(/[^\w.-]/g, '_')}.eml`);
      await writeFile(file, info.message as Buffer);
      options.logger.info({ to: message.to, subject: message.subject, file }, 'e-mail written to outbox (SMTP_URL unset)');
    },
  };
}
