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
    /** A transient refusal's advice, sent as the Retry-After header too. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** The error catalogue: every failure a caller can meet has a named factory here, shared ones first. */
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
  /** The database could not serve this request within its bounds (src/db/database.ts); `what` says which. */
  databaseBusy: (what: string, retryAfterSeconds: number) =>
    new AppError('unavailable', `Service unavailable: ${what}; try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`, 200, retryAfterSeconds),
  databaseUnreachable: (retryAfterSeconds: number) =>
    new AppError('unavailable', 'Service unavailable: the database cannot be reached; try again shortly', 200, retryAfterSeconds),
  unknownResource: (path: string) => new AppError('unknown_resource', `Unknown resource: ${path}`, 404),
  /** A request the HTTP layer refuses before any route runs (malformed body, NUL bytes). */
  invalidRequest: (why: string) => new AppError('invalid_parameter', `Invalid request: ${why}`),
  unsupportedContentType: (contentType: string) =>
    new AppError('invalid_parameter', `Unsupported content type '${contentType.slice(0, 100)}'; send a form, multipart/form-data or JSON`),
  /** `what` names the part over the limit, e.g. "the request exceeds the maximum size of 50 MB". */
  uploadTooLarge: (what: string) => new AppError('upload_too_large', `Invalid upload: ${what}`),
  providerError: (why: string) => new AppError('provider_error', `Language-model provider error: ${why}`),

  // --- accounts and subscriptions ---
  userDisabled: () => new AppError('forbidden', 'This user is disabled'),
  onlyOwnUser: () => new AppError('forbidden', 'Forbidden: you can only modify your own user'),
  cannotChangeOwn: (field: 'role' | 'enabled') => new AppError('forbidden', `Forbidden: you cannot change your own '${field}'`),
  notYourSubscription: () => new AppError('forbidden', "Forbidden: only an administrator can change another user's subscription"),
  noActiveSubscription: (appName: string) =>
    new AppError('forbidden', `Forbidden: you have no active subscription to application '${appName}'`),
  /** A chat's forecast tool on the user's own job: names neither the application nor anything else of the job. */
  jobNotSubscribed: (jobId: number) =>
    new AppError('forbidden', `Forbidden: job ${jobId} belongs to an application you have no active subscription to`),

  // --- jobs, trainings, data, models ---
  noTrainingFor: (appName: string) =>
    new AppError('not_found', `You have no training for application '${appName}' yet; send newTraining=1 to create one`),
  noData: (jobId: number) => new AppError('not_found', `Job ${jobId} has no data yet; upload a CSV file first`),
  noOutput: (jobId: number) => new AppError('not_found', `Job ${jobId} has no output yet`),
  noForecast: (jobId: number, status: string) =>
    new AppError('not_found', `Job ${jobId} has no forecast to chart yet (status ${status}); its chart is drawn once training has finished`),
  noNetwork: (trainingId: number) => new AppError('not_found', `No network stored for training ${trainingId}`),
  notTrained: (trainingId: number) => new AppError('wrong_state', `Training ${trainingId} has no trained network yet`),

  // --- chat ---
  noClient: () =>
    new AppError('wrong_state', 'You belong to no client yet: create one with POST /client.php or ask an administrator to attach you'),
  noProviderKey: (clientId: number) =>
    new AppError('wrong_state', `Client ${clientId} has no provider key; set one with PATCH /client.php`),
  providerKeyUnreadable: (clientId: number, why: string) =>
    new AppError('wrong_state', `The provider key of client ${clientId} cannot be used: ${why}; set it again with PATCH /client.php`),
} as const;
