import type { Page } from '../page.tsx';
import { channelContinuePage, channelLivePage, channelPage } from './channel.tsx';
import {
  videoEvidencePage,
  videoMediaPage,
  videoPage,
  videoRawAnswerPage,
  videoSubtitlesPage,
  videoSummaryLivePage,
  videoSummaryPage,
} from './video.tsx';
import { accountPage, createKeyPost, newKeyPage, passwordPost, revokeKeyPost } from './account.tsx';
import { createUserPost, editTierPost, setTierPost, tiersPage, usersPage } from './admin.tsx';
import { verifyEvidencePage, verifyEvidencePost } from './evidence.tsx';
import { homePage } from './home.tsx';
import { loginPage, loginPost, logoutPost, registerPage, registerPost, signInLinkPage, signInLinkPost } from './signIn.tsx';
import { searchPage } from './search.tsx';
import { summariesPage } from './summaries.tsx';
import { summaryPage } from './summary.tsx';
import { videoStenogramLivePage, videoStenogramPage } from './stenogram.tsx';
import {
  createWatchlistPost,
  deleteWatchlistPage,
  deleteWatchlistPost,
  removeItemPost,
  renameWatchlistPost,
  rotateFeedPost,
  watchlistEvidencePage,
  watchlistsPage,
  watchPost,
} from './watchlists.tsx';
import { createWebhookPost, deleteWebhookPost, enableWebhookPost, testWebhookPost } from './webhooks.tsx';

/** Every page of the web app, in the order they are matched (fixed words before `:params`). */
export const allPages: Page[] = [
  homePage,
  searchPage,
  verifyEvidencePage,
  verifyEvidencePost,
  summariesPage,
  summaryPage,
  channelLivePage,
  channelContinuePage,
  channelPage,
  videoSummaryLivePage,
  videoStenogramLivePage,
  videoStenogramPage,
  videoMediaPage,
  videoEvidencePage,
  videoRawAnswerPage,
  videoSummaryPage,
  videoSubtitlesPage,
  videoPage,
  loginPage,
  loginPost,
  signInLinkPage,
  signInLinkPost,
  logoutPost,
  registerPage,
  registerPost,
  accountPage,
  createKeyPost,
  newKeyPage,
  revokeKeyPost,
  passwordPost,
  watchlistsPage,
  createWatchlistPost,
  renameWatchlistPost,
  rotateFeedPost,
  deleteWatchlistPage,
  deleteWatchlistPost,
  watchlistEvidencePage,
  removeItemPost,
  watchPost,
  createWebhookPost,
  testWebhookPost,
  enableWebhookPost,
  deleteWebhookPost,
  usersPage,
  createUserPost,
  setTierPost,
  tiersPage,
  editTierPost,
];
