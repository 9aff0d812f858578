import type { Page } from '../page.tsx';
import { channelContinuePage, channelLivePage, channelPage } from './channel.tsx';
import { homePage } from './home.tsx';
import { videoMediaPage, videoPage, videoSubtitlesPage, videoSummaryLivePage, videoSummaryPage } from './video.tsx';

/** Every page of the web app, in the order they are matched (fixed words before `:params`). */
export const allPages: Page[] = [
  homePage,
  channelLivePage,
  channelContinuePage,
  channelPage,
  videoSummaryLivePage,
  videoMediaPage,
  videoSummaryPage,
  videoSubtitlesPage,
  videoPage,
];
