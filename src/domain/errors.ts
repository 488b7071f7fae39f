/**
 * The one application error type. Every failure a caller can cause (bad parameter, unknown session,
 * forbidden, not found, wrong state) is an AppError; the HTTP layer renders it as the legacy envelope
 * `{status: 1, data: message}` with HTTP 200, because legacy clients treat non-2xx as transport failure.
 * Anything that is not an AppError is unexpected and gets a generic message (never a stack trace).
 */
export type ErrorCode =
  | 'missing_parameter'
  | 'invalid_parameter'
  | 'invalid_timezone'
  | 'invalid_session'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'wrong_state'
  | 'rate_limited'
  | 'invalid_credentials'
  | 'invalid_filter'
  | 'invalid_upload'
  | 'upload_too_large'
  | 'provider_error'
  | 'unavailable'
  | 'unknown_resource';

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Optional HTTP status; the envelope rule says 200 unless a route really is not there. */
    readonly httpStatus = 200,
  ) {
    super(message);
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** Factories for the errors every area shares. Area-specific ones live beside their service. */
export const Errors = {
  missingParameter: (name: string) => new AppError('missing_parameter', `Missing required parameter '${name}'`),
  invalidParameter: (name: string, why: string) =>
    new AppError('invalid_parameter', `Invalid parameter '${name}': ${why}`),
  invalidTimezone: (value: string) =>
    new AppError('invalid_timezone', `Invalid parameter 'tz': '${value}' is not a known time zone (use Area/City, e.g. Europe/Madrid)`),
  invalidSession: () => new AppError('invalid_session', 'Invalid or expired session'),
  forbidden: (what = 'this operation') => new AppError('forbidden', `Forbidden: ${what} requires an administrator`),
  notYours: (what: string) => new AppError('forbidden', `Forbidden: the ${what} does not belong to you`),
  notFound: (what: string, id?: string | number) =>
    new AppError('not_found', id === undefined ? `${what} not found` : `${what} ${id} not found`),
  conflict: (why: string) => new AppError('conflict', why),
  wrongState: (why: string) => new AppError('wrong_state', why),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError('rate_limited', `Too many attempts; try again in ${retryAfterSeconds} seconds`),
  invalidCredentials: () => new AppError('invalid_credentials', 'Invalid e-mail or password'),
  invalidFilter: (parameter: string, why: string, position?: number) =>
    new AppError(
      'invalid_filter',
      position === undefined
        ? `Invalid parameter '${parameter}': ${why}`
        : `Invalid parameter '${parameter}': ${why} at position ${position}`,
    ),
  invalidUpload: (why: string) => new AppError('invalid_upload', `Invalid upload: ${why}`),
  unavailable: (why: string) => new AppError('unavailable', `Service unavailable: ${why}`),
  unknownResource: (path: string) => new AppError('unknown_resource', `Unknown resource: ${path}`, 404),
} as const;
