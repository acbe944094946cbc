// Headless Chromium for the console's benchmark and its end-to-end tests: Debian's package (/usr/bin/chromium;
// .ci/run installs it) driven by playwright-core, which downloads no browser of its own. The flags: root has no
// sandbox in CI, there is no GPU, and this machine's closed network refuses Chromium's background connections
// (QUIC, component updates, sync) many at a time, so they are turned off.
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}
