import { Errors } from '../errors.js';

/**
 * Minimum strength: 8+ characters with at least two of lower case, upper case, digits, symbols.
 * Long enough to stop trivial guesses without refusing passphrases.
 */
export function assertStrongPassword(password: string, parameter = 'new_password'): void {
  if (password.length < 8) throw Errors.invalidParameter(parameter, 'must be at least 8 characters long');
  if (password.length > 256) throw Errors.invalidParameter(parameter, 'must be at most 256 characters long');
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes < 2) {
    throw Errors.invalidParameter(parameter, 'must mix at least two of: lower case, upper case, digits, symbols');
  }
}
