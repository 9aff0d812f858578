/** Run-time checks for the platform's JSON (API answers, player responses, yt-dlp's info.json), which leaves out what it likes. */

export type JsonObject = Record<string, unknown>;

/** A plain JSON object: not null, not an array. */
export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

export const asObject = (value: unknown): JsonObject | undefined => (isObject(value) ? value : undefined);

export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
