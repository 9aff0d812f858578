/** `/evidence/verify`: anyone uploads an evidence bundle and sees, file by file, whether it is intact. */
import type { VNode } from 'preact';
import { verifyEvidence } from '../../actions/evidence.ts';
import { perform } from '../../http/route.ts';
import { FormToken, type FormContext } from '../formToken.tsx';
import { definePage, type PageView } from '../page.tsx';

const PATH = '/evidence/verify';
/** Bundles larger than this are checked with `afterimage evidence verify`, which reads the file in place. */
const UPLOAD_MAX_BYTES = 64 * 1024 * 1024;

function UploadForm({ ctx }: { ctx: FormContext }): VNode {
  return (
    <form method="post" action={PATH} enctype="multipart/form-data">
      <FormToken ctx={ctx} action={PATH} />
      <div class="field">
        <label for="bundle">Evidence bundle (.zip, at most {UPLOAD_MAX_BYTES / 1024 / 1024} MB)</label>
        <input id="bundle" type="file" name="bundle" accept=".zip,application/zip" required />
      </div>
      <button type="submit">Check it</button>
    </form>
  );
}

const view = (ctx: FormContext, result?: VNode): PageView => ({
  title: 'Check an evidence bundle',
  description: "Check an Afterimage evidence bundle: every file's SHA-256, the manifest, the raw answers and the history.",
  body: (
    <article>
      <h1>Check an evidence bundle</h1>
      <p>
        An evidence bundle (the "Download evidence" link of a video) holds what each source answered, hashed. The check reads it in memory
        and keeps nothing. Offline, <code>npx afterimage evidence verify bundle.zip</code> does the same, and its README.txt says how to
        check it by hand.
      </p>
      {result}
      <UploadForm ctx={ctx} />
    </article>
  ),
});

export const verifyEvidencePage = definePage({
  method: 'GET',
  path: PATH,
  access: verifyEvidence.access,
  async handler(ctx) {
    return view(ctx);
  },
});

export const verifyEvidencePost = definePage({
  method: 'POST',
  path: PATH,
  access: verifyEvidence.access,
  upload: { maxBytes: UPLOAD_MAX_BYTES },
  async handler(ctx) {
    const bundle = ctx.files.bundle;
    if (!bundle?.length) return { ...view(ctx, <p class="notice">Choose a bundle (.zip) to check.</p>), status: 400 };
    const verdict = await perform(verifyEvidence, ctx, bundle);
    const result = verdict.ok ? (
      <div class="notice" role="status">
        <p>
          <strong>Intact.</strong> {verdict.checkedFiles} files match manifest.json, whose SHA-256 is <code>{verdict.manifestSha256}</code>.
        </p>
        {verdict.timestamp && (
          <p>
            Timestamped: an RFC 3161 token signed by <strong>{verdict.timestamp.signer}</strong> attests the manifest existed at{' '}
            <time datetime={verdict.timestamp.attestedAt}>{verdict.timestamp.attestedAt}</time>.
          </p>
        )}
      </div>
    ) : (
      <div class="notice error" role="alert">
        <p>
          <strong>Not intact.</strong> {verdict.problems.length} problem{verdict.problems.length === 1 ? '' : 's'}:
        </p>
        <ul>
          {verdict.problems.map((problem) => (
            <li key={`${problem.file}:${problem.problem}`}>
              <code>{problem.file}</code> {problem.problem}
            </li>
          ))}
        </ul>
      </div>
    );
    return { ...view(ctx, result), status: verdict.ok ? 200 : 422 };
  },
});
