// The video page: timestamps seek the player (without this script they are links to ?t=, where the
// player starts at that second), the transcript filters as one types (without it, the tq= form asks
// the server), and a summary being written shows its progress and then itself.
const player = document.querySelector('video#player');
const list = document.getElementById('transcript-list');

if (player) {
  // An archived audio file (m4a, opus…) has no picture: the player shrinks to its controls.
  const fitMedia = () => player.classList.toggle('audio-only', player.videoWidth === 0);
  if (player.readyState >= 1) fitMedia();
  player.addEventListener('loadedmetadata', fitMedia);
  document.addEventListener('click', (event) => {
    const link = event.target.closest?.('a[data-seconds]');
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    player.currentTime = Number(link.dataset.seconds);
    player.play().catch(() => {});
    player.scrollIntoView({ block: 'nearest' });
  });
}

// Accents and case ignored, as the server's search (core/subtitles/match.ts) ignores them.
const fold = (text) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ');

const search = document.getElementById('tq');
const count = document.getElementById('transcript-count');
if (list && search && count && !new URLSearchParams(location.search).get('tq')) {
  const lines = [...list.children].map((item) => ({ item, text: fold(item.textContent) }));
  const total = count.textContent;
  let pending;
  search.form.addEventListener('submit', (event) => event.preventDefault());
  search.addEventListener('input', () => {
    const needle = fold(search.value).trim();
    let shown = 0;
    for (const line of lines) {
      line.item.hidden = Boolean(needle) && !line.text.includes(needle);
      if (!line.item.hidden) shown += 1;
    }
    clearTimeout(pending);
    pending = setTimeout(
      () => (count.textContent = needle ? `${shown} of ${lines.length} lines contain “${search.value.trim()}”` : total),
      400,
    );
  });
}

function clock(total) {
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(Math.floor(total % 60)).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const element = (tag, className, text) => {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
};

/** The markup of SummaryBody in api/web/pages/video.tsx, from summary:complete's summary. */
function summaryBody(summary) {
  const body = element('div', 'summary-body');
  if (summary.title) body.append(element('h3', '', summary.title));
  if (summary.tldr) body.append(element('p', 'tldr', summary.tldr));
  if (summary.keyPoints.length) {
    const points = body.appendChild(element('ol', 'key-points'));
    for (const point of summary.keyPoints) {
      const item = points.appendChild(element('li'));
      const link = item.appendChild(element('a', '', clock(point.startSeconds)));
      link.href = `?t=${Math.floor(point.startSeconds)}#player`;
      link.dataset.seconds = point.startSeconds;
      item.append(` ${point.text}`);
    }
  }
  for (const text of (summary.detailedSummary ?? '').split(/\n\s*\n/)) if (text.trim()) body.append(element('p', '', text.trim()));
  body.append(
    element('p', 'muted', `${summary.private ? 'Private: only you see it. ' : ''}Written by ${summary.llmModel ?? 'the generator'}.`),
  );
  return body;
}

const live = document.querySelector('.summary-live[data-live]');
if (live && 'EventSource' in window) {
  const status = document.getElementById('summary-status');
  const progress = document.getElementById('summary-progress');
  const source = new EventSource(live.dataset.live);
  source.addEventListener('summary:progress', (event) => {
    const { stage, percent, chunk, of } = JSON.parse(event.data);
    progress.value = percent;
    status.textContent = `Writing the summary: ${stage}${chunk && of ? ` (part ${chunk} of ${of})` : ''}, ${percent}%`;
  });
  source.addEventListener('summary:complete', (event) => {
    source.close();
    const { summary } = JSON.parse(event.data);
    live.replaceWith(summaryBody(summary));
  });
  source.addEventListener('summary:error', (event) => {
    source.close();
    status.textContent = `The summary could not be written: ${JSON.parse(event.data).message}. Refresh to try again.`;
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) status.textContent = 'Live progress stopped. Refresh to see the summary.';
  };
}
