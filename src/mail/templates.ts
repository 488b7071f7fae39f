import type { MailMessage } from '../domain/ports.js';

export function recoveryMail(input: { to: string; name: string; token: string; publicUrl: string }): MailMessage {
  const link = `${input.publicUrl}/reset-password?token=${encodeURIComponent(input.token)}`;
  return {
    to: input.to,
    subject: 'Password recovery',
    text: [
      `Hello ${input.name || input.to},`,
      '',
      'Someone (hopefully you) asked to reset the password of this account.',
      `To choose a new password, open: ${link}`,
      '',
      `Or send this recovery token with PUT /passwords: ${input.token}`,
      '',
      'The token is valid for one hour and can be used once. If you did not ask for this, ignore this e-mail.',
    ].join('\n'),
  };
}

export function passwordChangedMail(input: { to: string; name: string }): MailMessage {
  return {
    to: input.to,
    subject: 'Your password was changed',
    text: [
      `Hello ${input.name || input.to},`,
      '',
      'The password of your account was just changed and your other sessions were closed.',
      'If this was not you, start a password recovery at once and contact your administrator.',
    ].join('\n'),
  };
}
