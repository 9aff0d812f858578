/** The error codes of api-spec.md §7, plus two for failures that are the server's, not the caller's. */
export const errorStatus = {
  INVALID_INPUT: 400,
  API_KEY_REQUIRED: 401,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  FEATURE_DISABLED: 403,
  NOT_FOUND: 404,
  STENOGRAM_CONFLICT: 409,
  TRANSCRIPT_REQUIRED: 409,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** A failure meant for the caller: it becomes `{error: {code, message}}` with the code's HTTP status. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { status?: number; headers?: Record<string, string>; details?: unknown } = {},
  ) {
    super(message);
    this.status = options.status ?? errorStatus[code];
  }
}

export const invalidInput = (message: string, details?: unknown) => new AppError('INVALID_INPUT', message, { details });
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
