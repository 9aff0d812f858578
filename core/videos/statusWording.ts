import type { StatusReason } from './videoStatus.ts';

/** A status as one word or two: every page and the API's `reasonText` word it from this module. */
export const STATUS_WORDS = {
  live: 'Live',
  deleted: 'Deleted',
  're-uploaded': 'Re-uploaded',
  checking: 'Checking',
} as const;
export type StatusWord = keyof typeof STATUS_WORDS;

/** Why a video is gone, as a person reads it (the API's `reasonText`). */
export const REASON_TEXT: Record<StatusReason, string> = {
  private: 'made private',
  removed_by_uploader: 'removed by the uploader',
  terms_of_service: 'removed for breaking the terms of service',
  copyright: 'removed after a copyright claim',
  account_terminated: 'the account was terminated',
  blocked_in_region: 'blocked in some regions',
  unknown: 'reason unknown',
};

/** The reason's words; an unknown reason code reads as itself, none as null. */
export const reasonText = (reason: string | null): string | null =>
  reason === null ? null : (REASON_TEXT[reason as StatusReason] ?? reason);

/** A status as a person reads it: "Deleted: removed after a copyright claim"; a live or checking video has no reason. */
export function describeStatus(status: StatusWord, reason: string | null): string {
  const why = status === 'live' || status === 'checking' ? null : reasonText(reason);
  return why ? `${STATUS_WORDS[status]}: ${why}` : STATUS_WORDS[status];
}

/** The SQL expression that yields a reason column's `reasonText` from the same table. */
export const reasonTextSql = (column: string): string =>
  `case ${column} ${Object.entries(REASON_TEXT)
    .map(([reason, text]) => `when '${reason}' then '${text.replaceAll("'", "''")}'`)
    .join(' ')} else ${column} end`;
