import { z } from 'zod';
import { EVIDENCE_FORMAT } from '../../../core/evidence/bundle.ts';
import { observationRecord } from '../../../core/evidence/observations.ts';
import { metadataVersionsSchema, subtitleVersionsSchema } from '../../../core/evidence/versions.ts';
import { videoIdSchema } from '../../../core/schemas.ts';
import { statusHistorySchema } from '../../../core/status/statusHistory.ts';
import { describeBundle, videoEvidence } from '../../actions/evidence.ts';
import { perform } from '../../http/route.ts';
import { defineTool } from '../tool.ts';

export const getEvidenceTool = defineTool({
  name: 'get_evidence',
  title: "A video's evidence",
  description: `What backs a video's status, for citing it: its status history, its metadata and subtitle versions (each naming the kept answer behind it), the newest kept answers of sources (source, time, HTTP status, SHA-256 of the raw body, what each decided), the SHA-256 of the evidence bundle's manifest (format ${EVIDENCE_FORMAT}; a download of the same state has the same one) and the REST URL that downloads the bundle with an API key. Counts one subtitleDownloadsPerDay, like the download.`,
  input: z.object({ videoId: videoIdSchema }),
  output: z.object({
    videoId: z.string(),
    format: z.literal(EVIDENCE_FORMAT),
    manifestSha256: z.string().describe("SHA-256 of the bundle's manifest.json: the first line of its README.txt"),
    bundleUrl: z.string().describe('GET it with the X-API-Key header: the whole bundle, a ZIP'),
    history: statusHistorySchema,
    metadataVersions: metadataVersionsSchema.describe(
      'metadata-versions.json of the bundle: each version names the kept answer that showed it replaced',
    ),
    subtitleVersions: subtitleVersionsSchema.describe(
      'subtitle-versions.json of the bundle: each version names the kept answer its cues were read from',
    ),
    observations: z.array(observationRecord).describe('the newest kept answers, oldest first; the bundle holds them all'),
    keptObservations: z.number().int().describe('kept answers in all'),
    unkeptObservations: z.number().int().describe('routine answers that changed nothing: counted, not kept'),
  }),
  access: videoEvidence.access,
  readOnly: true,
  async run(args, ctx) {
    const evidence = await perform(videoEvidence, ctx, args.videoId);
    const described = await describeBundle(ctx, evidence);
    const data = {
      videoId: args.videoId,
      format: EVIDENCE_FORMAT as typeof EVIDENCE_FORMAT,
      bundleUrl: `${ctx.origin}/api/videos/${args.videoId}/evidence`,
      ...described,
    };
    const answers = described.observations.map(
      (o) => `- ${o.observedAt} ${o.source} HTTP ${o.httpStatus ?? '?'} ${o.decided}: ${o.said} (sha256 ${o.bodySha256})`,
    );
    return {
      data,
      text: [
        `${args.videoId} is ${described.history.current.status}; evidence bundle manifest SHA-256 ${described.manifestSha256}`,
        `Download: ${data.bundleUrl} (X-API-Key)`,
        `${described.keptObservations} kept answers (${described.unkeptObservations} routine ones counted, not kept)${answers.length < described.keptObservations ? `, the newest ${answers.length}` : ''}:`,
        ...answers,
      ].join('\n'),
    };
  },
});
