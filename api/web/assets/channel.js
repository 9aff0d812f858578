// The channel page while a search of it runs: the search's stream (the page's /live endpoint) adds each
// video it finds to the list, and a status line and the "Videos kept" facts count them. Without this script the page's Refresh link
// shows the newest state.
const box = document.querySelector('[data-live]');
const list = document.getElementById('videos-list');
const status = document.getElementById('crawl-status');
/** Videos shown live at most: past that a note says how many arrived and links to the paged list. */
const MAX_ADDED = 200;
/** core/videos/statusWording.ts's words, from the page; each video's reasonText comes with it. */
const STATUS_WORDS = JSON.parse(box?.dataset.statusWords ?? '{}');
const gone = (video) => video.status === 'deleted' || video.status === 're-uploaded';

function clock(total) {
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(Math.floor(total % 60)).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** VideoCard's Thumbnail: the kept image at the widths of its srcset, else a neutral block. */
function thumbnail(video) {
  if (!video.thumbnailFileUrl) {
    const none = document.createElement('span');
    none.className = 'thumb thumb-none';
    none.setAttribute('aria-hidden', 'true');
    return none;
  }
  const image = document.createElement('img');
  image.className = 'thumb';
  image.src = `${video.thumbnailFileUrl}?w=160`;
  image.srcset = [160, 320, 640].map((width) => `${video.thumbnailFileUrl}?w=${width} ${width}w`).join(', ');
  image.sizes = '160px';
  image.width = 160;
  image.height = 90;
  image.loading = 'lazy';
  image.alt = '';
  return image;
}

/** The markup of api/web/videoCard.tsx, built with text nodes only. */
function card(video) {
  const item = document.createElement('li');
  item.className = 'card arrived';
  item.dataset.videoId = video.videoId;
  item.appendChild(thumbnail(video));
  const heading = item.appendChild(document.createElement('h3'));
  const link = heading.appendChild(document.createElement('a'));
  link.href = `/videos/${encodeURIComponent(video.videoId)}`;
  link.textContent = video.title ?? `Video ${video.videoId} (title unknown)`;
  const line = item.appendChild(document.createElement('p'));
  const badge = line.appendChild(document.createElement('span'));
  badge.className = `badge ${video.status.replace('-', '')}`;
  const word = STATUS_WORDS[video.status] ?? video.status;
  badge.textContent = gone(video) && video.reasonText ? `${word}: ${video.reasonText}` : word;
  if (gone(video)) {
    line.append(' ');
    const deleted = line.appendChild(document.createElement('span'));
    deleted.className = 'fact deleted-on';
    deleted.append('deleted ');
    const time = deleted.appendChild(document.createElement('time'));
    time.dateTime = video.statusSince;
    time.textContent = video.statusSince.slice(0, 10);
  }
  const facts = [video.uploadDate && `uploaded ${video.uploadDate}`, video.duration == null ? null : `duration ${clock(video.duration)}`]
    .filter(Boolean)
    .join(' · ');
  if (facts) {
    line.append(' ');
    const muted = line.appendChild(document.createElement('span'));
    muted.className = 'muted';
    muted.textContent = facts;
  }
  return item;
}

/** ChannelFacts' "Videos kept" line. */
function keptLine(counts) {
  return `${counts.live} live · ${counts.deleted} deleted · ${counts['re-uploaded']} re-uploaded${counts.checking ? ` · ${counts.checking} being checked` : ''}`;
}

if (box && list && status && 'EventSource' in window) {
  const goneOnly = box.dataset.filter === 'deleted';
  const keptAtLoad = Number(box.dataset.kept);
  const keptCounts = document.getElementById('kept-counts');
  const videosCount = document.getElementById('videos-count');
  const shown = new Set([...list.querySelectorAll('[data-video-id]')].map((element) => element.dataset.videoId));
  /** Every video the stream has named (its stored part, then the crawl's finds), by id: its latest status. */
  const kept = new Map();
  /** The crawl's finds this list would show, shown or not (past MAX_ADDED). */
  let arrived = 0;
  let added = 0;
  let capNote;

  /** The counts, the cap's note and the status line as the events so far have them. */
  const show = (text) => {
    // The stream replays the stored part first: until it has named as many videos as the page counted, the page's counts stand.
    if (keptCounts && kept.size >= keptAtLoad) {
      const counts = { live: 0, deleted: 0, 're-uploaded': 0, checking: 0 };
      for (const videoStatus of kept.values()) counts[videoStatus] = (counts[videoStatus] ?? 0) + 1;
      keptCounts.textContent = keptLine(counts);
      const listed = goneOnly ? counts.deleted + counts['re-uploaded'] : kept.size;
      if (videosCount) videosCount.textContent = `${listed} ${goneOnly ? 'deleted ' : ''}video${listed === 1 ? '' : 's'}`;
    }
    if (arrived > MAX_ADDED) {
      if (!capNote) {
        capNote = document.createElement('p');
        capNote.className = 'notice';
        capNote.id = 'videos-cap';
        list.before(capNote);
      }
      const all = document.createElement('a');
      all.href = box.dataset.all;
      all.textContent = 'see all';
      capNote.replaceChildren(`Showing the first ${MAX_ADDED} of ${arrived} videos found by this search — `, all, ', page by page.');
    }
    status.textContent = text;
  };
  const crawling = () => `${kept.size} videos kept so far, crawling…`;
  // One announcement a second at most (a screen reader should not read every video), with the counts as they are then.
  let shownAt = 0;
  let pending;
  const soon = () => {
    pending ??= setTimeout(
      () => {
        pending = undefined;
        shownAt = Date.now();
        show(crawling());
      },
      Math.max(0, 1000 - (Date.now() - shownAt)),
    );
  };
  const sayNow = (text) => {
    clearTimeout(pending);
    pending = undefined;
    show(text);
  };

  const source = new EventSource(box.dataset.live);
  source.addEventListener('search:video', (event) => {
    const video = JSON.parse(event.data);
    kept.set(video.videoId, video.status);
    // The stored part (ids s:…) is on the page's list already, paged; the crawl's finds (c:…) are added.
    if (event.lastEventId.startsWith('c:') && !shown.has(video.videoId) && (!goneOnly || gone(video))) {
      shown.add(video.videoId);
      arrived += 1;
      if (added < MAX_ADDED) {
        added += 1;
        list.prepend(card(video));
        document.getElementById('videos-empty')?.remove();
      }
    }
    soon();
  });
  source.addEventListener('search:complete', (event) => {
    const complete = JSON.parse(event.data);
    source.close();
    sayNow(`Search complete: ${kept.size} videos kept.${complete.reason ? ` ${complete.reason}.` : ''} Refresh to see them all, in order.`);
  });
  source.addEventListener('search:error', (event) => {
    source.close();
    sayNow(`The search stopped: ${JSON.parse(event.data).message}. Refresh to see what it found.`);
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) sayNow('Live updates stopped. Refresh to see the newest state.');
  };
}
