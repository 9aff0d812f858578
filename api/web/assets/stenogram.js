// The video page while the visitor's stenogram is being written: its progress from the page's
// /stenogram/live stream, then the page again with the stenogram (rendered by the server, as ever).
// Without this script the Refresh link shows it when it is ready.
const live = document.querySelector('.stenogram-live[data-live]');
if (live && 'EventSource' in window) {
  const status = document.getElementById('stenogram-status');
  const progress = document.getElementById('stenogram-progress');
  const source = new EventSource(live.dataset.live);
  source.addEventListener('stenogram:progress', (event) => {
    const { stage, percent, chunk, of } = JSON.parse(event.data);
    progress.value = percent;
    status.textContent = `Writing your stenogram: ${stage}${chunk && of ? ` (part ${chunk} of ${of})` : ''}, ${percent}%`;
  });
  source.addEventListener('stenogram:complete', () => {
    source.close();
    location.reload();
  });
  source.addEventListener('stenogram:error', (event) => {
    source.close();
    status.textContent = `Your stenogram could not be written: ${JSON.parse(event.data).message}. Refresh to try again.`;
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) status.textContent = 'Live progress stopped. Refresh to see your stenogram.';
  };
}
