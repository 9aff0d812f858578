import type { VNode } from 'preact';
import { videoParams } from '../../../core/schemas.ts';
import { followStenogram, generateStenogram } from '../../actions/stenograms.ts';
import { perform } from '../../http/route.ts';
import { FormToken, type FormContext } from '../formToken.tsx';
import { definePage, generationLivePage, redirect } from '../page.tsx';

const stenogramPath = (videoId: string) => `/videos/${videoId}/stenogram`;

/** Generate: POST /api/stenograms/:videoId/generate for the visitor (its language detected). */
export function StenogramForm({ ctx, videoId, again }: { ctx: FormContext; videoId: string; again: boolean }): VNode {
  const action = stenogramPath(videoId);
  return (
    <form method="post" action={action} class="generate-stenogram">
      <FormToken ctx={ctx} action={action} />
      <button type="submit">{again ? 'Generate again' : 'Generate a stenogram'}</button>{' '}
      <span class="muted">(counts one of your stenograms a day)</span>
    </form>
  );
}

/** Generate: the visitor's stenogram, then the video page following its progress. */
export const videoStenogramPage = definePage({
  method: 'POST',
  path: '/videos/:videoId/stenogram',
  params: videoParams,
  access: generateStenogram.access,
  async handler(ctx) {
    await perform(generateStenogram, ctx, { videoId: ctx.params.videoId, language: null });
    return redirect(`/videos/${ctx.params.videoId}#stenogram`);
  },
});

/** The stenogram's progress as GET /api/stenograms/@:userId/:videoId/stream sends it, to its owner. */
export const videoStenogramLivePage = generationLivePage('/videos/:videoId/stenogram/live', followStenogram);
