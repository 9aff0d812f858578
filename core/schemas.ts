import { z } from 'zod';
import { CHANNEL_ID, VIDEO_ID } from './youtube/channelQuery.ts';

/** Domain values shared by the API, the pipeline and the operator commands. */

/** The largest value of a Postgres `integer` column: the bound of every number stored in one. */
export const INT4_MAX = 2_147_483_647;
export const tierName = z.enum(['anonymous', 'registered', 'plus', 'pro']);
export type TierName = z.infer<typeof tierName>;

/** Key scopes L1–L4: L1 reads, L2 starts work (fetches, summaries), L3 private stenograms, L4 administration. */
export const scopeLabel = z.enum(['L1', 'L2', 'L3', 'L4']);
export type ScopeLabel = z.infer<typeof scopeLabel>;
export const scopeLevel = (label: ScopeLabel) => Number(label.slice(1));
export const scopeName = (level: number) => `L${level}` as ScopeLabel;

export const limitName = z.enum([
  'requestsPerMinute',
  'channelSearchesPerHour',
  'ftsQueriesPerMinute',
  'subtitleDownloadsPerDay',
  'summaryGenerationsPerDay',
  'apiStenogramsPerDay',
  'pageRequestsPerMinute',
]);
export type LimitName = z.infer<typeof limitName>;

export const featureName = z.enum([
  'apiAccess',
  'channelSearch',
  'fullTextSearch',
  'subtitleDownload',
  'summaries',
  'summaryGeneration',
  'stenograms',
  'statusHistory',
  'watchlists',
]);
export type FeatureName = z.infer<typeof featureName>;

/**
 * An object with exactly the keys of an enum, each of one schema: what z.record over the enum
 * validates, written as properties so the OpenAPI document (and clients generated from it) name
 * every key and which are required, rather than only an enum of property names.
 */
export const keyedObject = <K extends string, V extends z.ZodType>(keys: z.ZodEnum<{ [key in K]: key }>, value: V) =>
  z.strictObject(Object.fromEntries(keys.options.map((key) => [key, value])) as { [key in K]: V });

/** What a user may hold at once (sql/045_watchlists.sql), unlike limits, which count per window. */
export const allowanceName = z.enum(['watchlists', 'watchlistItems', 'webhooks']);
export type AllowanceName = z.infer<typeof allowanceName>;

const limitRule = z.object({
  name: limitName,
  description: z.string(),
  unit: z.string(),
  window: z.enum(['sliding', 'utc_day']),
  windowSeconds: z.number().int().positive(),
  countedPer: z.enum(['user', 'key']),
  max: z.number().int().nonnegative().nullable().describe('null means unlimited'),
});
export type LimitRule = z.infer<typeof limitRule>;

const allowanceRule = z.object({
  name: allowanceName,
  description: z.string(),
  unit: z.string(),
  max: z.number().int().nonnegative().nullable().describe('how many a user may hold at once; null means unlimited'),
});

export const tier = z.object({
  name: tierName,
  displayName: z.string(),
  rank: z.number().int(),
  apiAccess: z.boolean(),
  maxKeyScope: scopeLabel,
  features: keyedObject(featureName, z.boolean()),
  limits: keyedObject(limitName, limitRule),
  allowances: keyedObject(allowanceName, allowanceRule).describe('what a user may hold at once, unlike limits, which count per window'),
  updatedAt: z.string().describe('ISO 8601 timestamp'),
});
export type Tier = z.infer<typeof tier>;

export const videoIdSchema = z.string().regex(VIDEO_ID, { message: 'expected an 11-character video id (letters, digits, _ and -)' });
/** Path parameters of the routes under a video (/…/:videoId). */
export const videoParams = z.strictObject({ videoId: videoIdSchema });
export const channelIdSchema = z.string().regex(CHANNEL_ID, { message: 'expected a channel id (UC followed by 22 characters)' });
/** A language as a two- or three-letter code (ISO 639-1, else 639-3), folded to lower case. */
export const languageCode = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{2,3}$/, { message: 'expected an ISO 639-1 language code such as en (or ISO 639-3, such as deu)' });
