/** The opaque cursor of the Data API source's listVideos: the playlist's page token, the entries seen so far, and the playlist when unusual. */

const CURSOR_PREFIX = 'v1:';

export interface CursorState {
  pageToken?: string;
  /** Playlist entries seen before this page; undefined when the cursor came from elsewhere. */
  fetched?: number;
  /** Set only when the uploads playlist is not the usual UU… of the channel id. */
  playlistId?: string;
}

/** The cursor is opaque to callers: the API's page token plus the count seen so far. */
export function encodeCursor(state: CursorState): string {
  const params = new URLSearchParams();
  if (state.pageToken) params.set('t', state.pageToken);
  if (state.fetched !== undefined) params.set('n', String(state.fetched));
  if (state.playlistId) params.set('p', state.playlistId);
  return CURSOR_PREFIX + params.toString();
}

export function decodeCursor(cursor: string | undefined): CursorState {
  if (!cursor) return { fetched: 0 };
  // A bare nextPageToken (from an older cursor format or a caller) still works, without progress.
  if (!cursor.startsWith(CURSOR_PREFIX)) return { pageToken: cursor };
  const params = new URLSearchParams(cursor.slice(CURSOR_PREFIX.length));
  const state: CursorState = {};
  const token = params.get('t');
  if (token) state.pageToken = token;
  const fetched = Number(params.get('n'));
  if (params.has('n') && Number.isSafeInteger(fetched) && fetched >= 0) state.fetched = fetched;
  const playlistId = params.get('p');
  if (playlistId) state.playlistId = playlistId;
  return state;
}
