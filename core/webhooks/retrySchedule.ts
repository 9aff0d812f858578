/**
 * When a failed delivery is tried again: exponential backoff, then every two hours, for as long as
 * the delivery is younger than a day (api/REFERENCE.md, Webhooks).
 */
const BACKOFF_SECONDS = [5, 30, 120, 600, 1800, 3600];
const STEADY_SECONDS = 2 * 3600;

/** A delivery is given up (state failed) once its next try would fall after this age. */
export const DELIVERY_LIFETIME_HOURS = 24;
/** An endpoint whose every delivery failed for this long (no success since its first failure) is disabled. */
export const DISABLE_AFTER_FAILING_DAYS = 3;

/** Seconds to wait after the `attempt`-th attempt (1-based) failed. */
export const retryDelaySeconds = (attempt: number): number => BACKOFF_SECONDS[attempt - 1] ?? STEADY_SECONDS;
