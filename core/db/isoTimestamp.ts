/** SQL that renders a timestamptz column as the API's ISO 8601 form in UTC, with milliseconds (2026-11-23T06:10:00.000Z). */
export const isoTimestamp = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
